public import NavlogEvents

/// One block's events, decoded into columns; reused from block to block so scanning allocates
/// nothing per event.
///
/// Decoding checks every length and reference against the payload, so a damaged payload that
/// slipped past the checksums produces ``DecodingError`` rather than a crash.
public struct DecodedBlock: Sendable {
    /// Why a payload could not be decoded.
    public struct DecodingError: Error, Sendable, CustomStringConvertible {
        /// What was being read.
        public var reason: String
        public var description: String { reason }
    }

    /// The decompressed payload (owned, so the string table and bodies can point into it).
    public internal(set) var payload: [UInt8] = []
    /// LSN of event 0.
    public internal(set) var firstLSN: UInt64 = 0
    /// Number of events.
    public internal(set) var count = 0
    /// Event types.
    public internal(set) var types: [EventType] = []
    /// Session string refs. Of a grouped block read for one session, the events of other
    /// session groups may have ``undecodedSession`` (``isDecoded(_:)`` is false for them).
    public internal(set) var sessions: [UInt32] = []
    /// What ``sessions`` holds for an event whose session was not read.
    public static let undecodedSession = UInt32.max
    /// Event times (µs).
    public internal(set) var timestamps: [Int64] = []
    /// Sequence numbers + 1 (0 = none).
    public internal(set) var sequencesPlusOne: [UInt64] = []
    /// Receive times (µs). Empty when ``receiveTimesAndPeersDecoded`` is false.
    public internal(set) var receiveTimes: [Int64] = []
    /// Flags (bit 0: `ts` was missing).
    public internal(set) var flags: [UInt8] = []
    /// Peer table.
    public internal(set) var peers: [PeerCredentials] = []
    /// Peer index of each event. Empty when ``receiveTimesAndPeersDecoded`` is false.
    public internal(set) var peerIndexes: [UInt32] = []
    /// Whether ``receiveTimes``, ``peers`` and ``peerIndexes`` were decoded: always, but for a
    /// grouped block read for one session without them (a replay needs neither; see
    /// ``decode(payload:header:session:receiveTimesAndPeers:)``).
    public internal(set) var receiveTimesAndPeersDecoded = true
    /// Body start offsets in ``payload``. Empty when the block was decoded without its bodies
    /// (``bodiesLocated`` is false).
    public internal(set) var bodyStarts: [Int] = []
    /// Body end offsets in ``payload`` (like ``bodyStarts``).
    public internal(set) var bodyEnds: [Int] = []
    /// Whether the bodies were located (see ``decode(payload:header:locatingBodies:)``): the
    /// body accessors may be used only then.
    public internal(set) var bodiesLocated = true
    /// String end offsets relative to their table's bytes, the tables one after another.
    public internal(set) var stringEnds: [UInt32] = []
    /// The string tables: table 0 is the one ``sessions`` refer to (in a one-frame block also
    /// every body's); in a grouped block table 1 + g is group g's.
    var stringTables: [(bytesStart: Int, ends: Range<Int>)] = []
    /// A grouped block's group count (0: one frame, every event decoded).
    public internal(set) var groupCount = 0
    /// Which groups of a grouped block were decoded (bit g), see ``decode(payload:header:session:)``.
    var decodedGroups: UInt64 = 0
    /// Scratch for grouped decoding: event positions ordered by group, and where each group's
    /// run starts in it.
    var positionsByGroup: [Int32] = []
    /// A grouped block's group of each session number.
    var sessionGroups: [UInt8] = []
    /// A grouped block's event count of each session number, and where its run of events ends
    /// in ``positionsByGroup``.
    var sessionEventCounts: [Int] = []
    var sessionRunEnds: [Int] = []
    /// The one session decoded (its number) of a grouped block read for one session, else -1.
    var decodedSession = -1

    /// The number (a reference into ``withStrings(_:)``'s table) of the session a grouped block
    /// was read for (``decode(payload:header:session:receiveTimesAndPeers:)``), else nil.
    public var sessionReadFor: Int? { decodedSession >= 0 ? decodedSession : nil }

    /// Sets `positions` to the positions of session `number`'s events (a reference into
    /// ``withStrings(_:)``'s table), in log order. Of a grouped block read for one session, only
    /// that session's events may be asked for.
    public func positions(ofSession number: Int, into positions: inout [Int32]) {
        positions.removeAll(keepingCapacity: true)
        if groupCount > 0, decodedSession < 0 || decodedSession == number, number >= 0, number < sessionRunEnds.count {
            // A grouped block's events are ordered by session already (positionsByGroup).
            let end = sessionRunEnds[number]
            positions.append(contentsOf: positionsByGroup[(end - sessionEventCounts[number])..<end])
            return
        }
        precondition(decodedSession < 0, "the block was read for another session")
        let wanted = UInt32(truncatingIfNeeded: number)
        for position in 0..<count where sessions[position] == wanted { positions.append(Int32(truncatingIfNeeded: position)) }
    }
    var groupRuns: [Int] = []
    /// Version 4 (see ``DecodedBlock/decodeGrouped``): each group's event count, where each
    /// group part read has its columns (past its string table and session numbers, both read
    /// with the spine; 0: not read yet), the sessions of each group in order of number (where
    /// each group's start), and the group parts' events' sessions in log order.
    var groupEventCounts: [Int] = []
    var groupColumnStarts: [Int] = []
    var groupSessions: [UInt32] = []
    var groupSessionStarts: [Int] = []
    var sessionsOfGroupEvents: [UInt32] = []
    /// Whether ``sessions`` holds every event's session (not so for a version 4 block read for
    /// one session or for none: events of the groups not read have ``undecodedSession``).
    var sessionsKnown = true
    /// Scratch for a grouped block read for one session: the positions of its events.
    var wantedPositions: [Int32] = []

    /// Creates an empty block.
    public init() {}

    /// The sequence number of event `index`, if it has one.
    @inlinable
    public func sequence(_ index: Int) -> UInt64? {
        let stored = sequencesPlusOne[index]
        return stored == 0 ? nil : stored - 1
    }

    /// The LSN of event `index`.
    @inlinable
    public func lsn(_ index: Int) -> UInt64 { firstLSN + UInt64(index) }

    /// Calls `body` with the string table ``sessions`` refer to (a grouped block's session table).
    public func withStrings<R>(_ body: (StringTable) throws -> R) rethrows -> R {
        try payload.withUnsafeBytes { payload in
            try stringEnds.withUnsafeBufferPointer { stringEnds in
                try stringTables.withUnsafeBufferPointer { stringTables in
                    try body(Events.table(0, payload: payload, stringEnds: stringEnds, stringTables: stringTables))
                }
            }
        }
    }

    /// Whether event `index` was decoded: always, but for a grouped block read for one session
    /// (``decode(payload:header:session:)``), whose other groups' events have only their session,
    /// receive time and peer.
    public func isDecoded(_ index: Int) -> Bool {
        sessions[index] != Self.undecodedSession && isSessionDecoded(Int(sessions[index]))
    }

    func isGroupDecoded(_ group: Int) -> Bool { decodedGroups & (1 << UInt64(group)) != 0 }

    /// Sets `positions` to the positions of the decoded events (``isDecoded(_:)``), each
    /// session's together and in log order: of a grouped block, group by group and session by
    /// session; of any other block, all of them in log order. A reader whose work is per
    /// session (the replay index build) then keeps one session's state in cache for all of its
    /// events in the block, instead of moving between hundreds of sessions' states.
    public func decodedPositionsBySession(into positions: inout [Int32]) {
        positions.removeAll(keepingCapacity: true)
        guard groupCount > 0 else {
            positions.append(contentsOf: 0..<Int32(truncatingIfNeeded: count))
            return
        }
        if decodedSession >= 0 {
            self.positions(ofSession: decodedSession, into: &positions)
            return
        }
        for group in 0..<groupCount where isGroupDecoded(group) {
            positions.append(contentsOf: positionsByGroup[groupRuns[group]..<groupRuns[group + 1]])
        }
    }

    /// Whether the events of session `number` (a reference into ``withStrings(_:)``'s table)
    /// were decoded: always, but for a grouped block read for one session or one worker's
    /// groups (``isDecoded(_:)``).
    public func isSessionDecoded(_ number: Int) -> Bool {
        groupCount == 0 || (isGroupDecoded(Int(sessionGroups[number])) && (decodedSession < 0 || number == decodedSession))
    }

    /// The session id of event `index` (allocates; for reports).
    public func session(_ index: Int) -> String {
        withStrings { String(decoding: $0[Int(sessions[index])] ?? UnsafeRawBufferPointer(start: nil, count: 0), as: UTF8.self) }
    }

    /// Calls `body` with the string table, the session bytes and the interned body of event `index`.
    public func withEvent<R>(_ index: Int, _ body: (StringTable, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withEvents { events in try body(events.strings(ofEvent: index), events.session(ofEvent: index), events.tokens(ofEvent: index)) }
    }

    /// Calls `body` with the session id bytes of event `index` (also when the bodies were not located).
    public func withSession<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withStrings { strings in try body(strings[Int(sessions[index])]!) }
    }

    /// Calls `body` with a field reader over event `index`'s body (no allocation).
    public func withBody<R>(_ index: Int, _ body: (StoredBody) throws -> R) rethrows -> R {
        try withEvent(index) { strings, _, tokens in try body(StoredBody(tokens: tokens, strings: strings)) }
    }

    /// Appends event `index` as one JSON line (with `\n`) to `output`.
    public func appendJSONLine(_ index: Int, to output: inout [UInt8]) throws(EventJSONWriter.MalformedBody) {
        precondition(receiveTimesAndPeersDecoded, "the block was read without its receive times and peers")
        let result: Result<Void, EventJSONWriter.MalformedBody> = withEvent(index) { strings, session, body in
            let envelope = EventJSONWriter.Envelope(
                type: types[index], session: session, timestamp: timestamps[index], sequence: sequence(index),
                lsn: lsn(index), receivedAt: receiveTimes[index], peer: peers[Int(peerIndexes[index])]
            )
            do throws(EventJSONWriter.MalformedBody) {
                try EventJSONWriter.write(envelope, body: body, strings: strings, to: &output)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        output.append(0x0A)
    }

    /// Decodes a decompressed payload (taking ownership of `payload`'s bytes).
    ///
    /// - Parameter locatingBodies: false for a reader that reads no body (counts by type, the
    ///   SQL `events` table): payload version 2 stores no body lengths, so finding where each
    ///   body starts walks every body, a third of a block's decoding; without it the body
    ///   accessors must not be used, and a malformed body goes unnoticed (the frame checksum
    ///   still covers it).
    /// - Throws: ``DecodingError`` naming what was malformed.
    public mutating func decode(payload newPayload: consuming [UInt8], header: BlockHeader, locatingBodies: Bool = true) throws(DecodingError) {
        try decode(payload: newPayload, header: header, groups: .all, locatingBodies: locatingBodies, receiveTimesAndPeers: true)
    }

    /// Decodes a grouped block's spine and one group's part (`payload` holds the two one after
    /// the other): every event's session, receive time and peer, and the rest only for the
    /// events of `session` (its number and group in the spine; ``isDecoded(_:)``): what a reader
    /// of one session needs. `session` nil: `payload` holds only the spine (the session read for
    /// has no event in the block). `receiveTimesAndPeers` false leaves those undecoded
    /// (``receiveTimesAndPeersDecoded``): a replay needs neither.
    /// - Throws: ``DecodingError`` naming what was malformed.
    public mutating func decode(
        payload newPayload: consuming [UInt8], header: BlockHeader, session: (number: Int, group: Int)?, receiveTimesAndPeers: Bool = true
    ) throws(DecodingError) {
        try decode(
            payload: newPayload, header: header, groups: session.map { .one(group: $0.group, session: $0.number) } ?? GroupSelection.none,
            locatingBodies: true, receiveTimesAndPeers: receiveTimesAndPeers)
    }

    /// Decodes a grouped block's spine and the parts of its groups g with g % `modulus` ==
    /// `residue` (`payload` holds them one after the other, in group order): every event's
    /// session, and the rest for the events of those groups only (``isDecoded(_:)``), the
    /// sessions whose id hash is `residue` modulo `modulus` when the group count is a multiple
    /// of `modulus` (``BlockReader`` reads the whole block otherwise).
    /// - Throws: ``DecodingError`` naming what was malformed.
    mutating func decode(payload newPayload: consuming [UInt8], header: BlockHeader, groupResidue residue: Int, modulus: Int) throws(DecodingError) {
        try decode(payload: newPayload, header: header, groups: .residue(residue, modulus: modulus), locatingBodies: true, receiveTimesAndPeers: true)
    }

    /// The session group of session `number` (a reference into ``withStrings(_:)``'s table) in a
    /// grouped block.
    public func group(ofSession number: Int) -> Int { Int(sessionGroups[number]) }

    private mutating func decode(
        payload newPayload: consuming [UInt8], header: BlockHeader, groups only: GroupSelection, locatingBodies: Bool, receiveTimesAndPeers: Bool
    ) throws(DecodingError) {
        payload = newPayload
        self.firstLSN = header.firstLSN
        let expectedCount = header.eventCount
        count = 0
        groupCount = 0
        decodedGroups = 0
        decodedSession = -1
        receiveTimesAndPeersDecoded = true
        stringTables.removeAll(keepingCapacity: true)
        receiveTimes.removeAll(keepingCapacity: true)
        peers.removeAll(keepingCapacity: true)
        peerIndexes.removeAll(keepingCapacity: true)
        stringEnds.removeAll(keepingCapacity: true)
        if header.frames.isEmpty {
            // A grouped block's decoder sizes the columns itself, without clearing them.
            bodyEnds.removeAll(keepingCapacity: true)
            types.removeAll(keepingCapacity: true)
            sessions.removeAll(keepingCapacity: true)
            timestamps.removeAll(keepingCapacity: true)
            sequencesPlusOne.removeAll(keepingCapacity: true)
            flags.removeAll(keepingCapacity: true)
            bodyStarts.removeAll(keepingCapacity: true)
        }
        let result: Result<Void, DecodingError> = payload.withUnsafeBytes { raw in
            do throws(DecodingError) {
                if header.frames.isEmpty {
                    try decodeColumns(
                        raw, expectedCount: expectedCount, minTimestamp: header.minTimestamp, minReceived: header.minReceived, locatingBodies: locatingBodies)
                } else {
                    try decodeGrouped(raw, header: header, only: only, locatingBodies: locatingBodies, receiveTimesAndPeers: receiveTimesAndPeers)
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Decodes a flat (not grouped) payload's columns: strings, types, sessions, times,
    /// sequence numbers, receive times, flags, peers, and where each body is when asked.
    private mutating func decodeColumns(
        _ raw: UnsafeRawBufferPointer, expectedCount: Int, minTimestamp: Int64, minReceived: Int64, locatingBodies: Bool
    ) throws(DecodingError) {
        var reader = ByteReader(raw)
        func fail(_ what: String) -> DecodingError { DecodingError(reason: "the block payload is malformed at byte \(reader.offset): \(what)") }
        guard let version = reader.readByte(), version == 1 || version == BlockEncoder.payloadVersion || version == BlockEncoder.relayedPayloadVersion else {
            throw fail("unknown payload version")
        }
        guard let n = reader.readCount(limit: raw.count), n == expectedCount else { throw fail("the event count disagrees with the block header") }
        guard let stringCount = reader.readCount(limit: raw.count) else { throw fail("bad string count") }
        guard readStringTable(&reader, count: stringCount, base: 0) else { throw fail("bad string lengths, or strings run past the payload") }
        guard let typeBytes = reader.readBytes(n) else { throw fail("truncated type column") }
        guard decodeTypes(typeBytes) else { throw fail("unknown event type") }
        guard decodeSessionReferences(&reader, count: n, strings: stringCount) else { throw fail("bad session reference") }
        guard decodeTimestamps(&reader, count: n, strings: stringCount, minTimestamp: minTimestamp) else { throw fail("truncated time column") }
        guard decodeSequences(&reader, count: n, strings: stringCount) else { throw fail("truncated sequence column") }
        guard decodeReceiveTimes(&reader, count: n, minReceived: minReceived) else { throw fail("truncated receive-time column") }
        guard let flagBytes = reader.readBytes(n) else { throw fail("truncated flag column") }
        flags.append(contentsOf: flagBytes)
        if let failure = decodePeers(&reader, count: n, withRelayKeys: version == BlockEncoder.relayedPayloadVersion) { throw fail(failure) }
        bodiesLocated = locatingBodies || version < 2
        if bodiesLocated {
            if let failure = locateBodies(raw, &reader, count: n, lengthPrefixed: version < 2) { throw fail(failure) }
        }
        count = n
    }

    // The columns are filled through unsafe buffers: one capacity check per column instead of
    // one uniqueness and capacity check per value (these loops are most of a block's decode time).

    /// Reads the type column; false at an unknown type.
    private mutating func decodeTypes(_ typeBytes: UnsafeRawBufferPointer) -> Bool {
        let n = typeBytes.count
        types.append(contentsOf: repeatElement(.mark, count: n))
        return types.withUnsafeMutableBufferPointer { column in
            for index in 0..<n {
                // Not a memory copy: an enum's in-memory tag is not its raw value.
                guard let type = EventType(rawValue: typeBytes[index]) else { return false }
                column[index] = type
            }
            return true
        }
    }

    /// Reads each event's session, a reference into the string table; false when one is out of range.
    private mutating func decodeSessionReferences(_ reader: inout ByteReader, count n: Int, strings stringCount: Int) -> Bool {
        sessions.append(contentsOf: repeatElement(0, count: n))
        return sessions.withUnsafeMutableBufferPointer { column in
            for index in 0..<n {
                guard let ref = reader.readVarint(), ref < UInt64(stringCount) else { return false }
                column[index] = UInt32(truncatingIfNeeded: ref)
            }
            return true
        }
    }

    /// Reads the time column: each a delta from its session's previous time, a session's first
    /// from the block's minimum (in the header); false when it is cut short.
    private mutating func decodeTimestamps(_ reader: inout ByteReader, count n: Int, strings stringCount: Int, minTimestamp: Int64) -> Bool {
        var lastBySession = [Int64](repeating: minTimestamp, count: stringCount)
        timestamps.append(contentsOf: repeatElement(0, count: n))
        return sessions.withUnsafeBufferPointer { sessionColumn in
            lastBySession.withUnsafeMutableBufferPointer { last in
                timestamps.withUnsafeMutableBufferPointer { column in
                    for index in 0..<n {
                        guard let raw = reader.readVarint() else { return false }
                        let session = Int(sessionColumn[index])
                        let value = last[session] &+ Varint.unzigzag(raw)
                        last[session] = value
                        column[index] = value
                    }
                    return true
                }
            }
        }
    }

    /// Reads the `seq` column (0: none; else a delta from the session's previous `seq`, + 1);
    /// false when it is cut short.
    private mutating func decodeSequences(_ reader: inout ByteReader, count n: Int, strings stringCount: Int) -> Bool {
        var lastSequence = [UInt64](repeating: 0, count: stringCount)
        sequencesPlusOne.append(contentsOf: repeatElement(0, count: n))
        return sessions.withUnsafeBufferPointer { sessionColumn in
            lastSequence.withUnsafeMutableBufferPointer { last in
                sequencesPlusOne.withUnsafeMutableBufferPointer { column in
                    for index in 0..<n {
                        guard let raw = reader.readVarint() else { return false }
                        if raw != 0 {
                            let session = Int(sessionColumn[index])
                            let value = last[session] &+ UInt64(bitPattern: Varint.unzigzag(raw - 1))
                            last[session] = value
                            column[index] = value &+ 1
                        }
                    }
                    return true
                }
            }
        }
    }

    /// Finds where each of the `n` bodies starts and ends: by skipping one value after another
    /// (payload version 2 on), or from a column of lengths (version 1). Returns what is wrong, if anything.
    private mutating func locateBodies(_ raw: UnsafeRawBufferPointer, _ reader: inout ByteReader, count n: Int, lengthPrefixed: Bool) -> String? {
        bodyStarts.append(contentsOf: repeatElement(0, count: n))
        if !lengthPrefixed {
            // Each body is one value: where one ends the next begins, and the last ends the payload.
            let base = reader.offset
            let bodies = UnsafeRawBufferPointer(rebasing: raw[base...])
            let ends = bodyStarts.withUnsafeMutableBufferPointer { column -> Int? in
                var position = 0
                for index in 0..<n {
                    column[index] = base + position
                    guard let end = StoredValue.skip(bodies, position, depth: 0) else { return nil }
                    position = end
                }
                return position
            }
            guard let ends else { return "a malformed body" }
            guard ends == bodies.count else { return "the bodies do not fill the rest of the payload" }
            setBodyEndsFromStarts(end: raw.count)
            return nil
        }
        let lengths = bodyStarts.withUnsafeMutableBufferPointer { column -> Int? in
            var position = 0
            for index in 0..<n {
                guard let length = reader.readVarint(), length <= UInt64(raw.count) else { return nil }
                column[index] = position
                position += Int(length)
            }
            return position
        }
        guard let lengths else { return "bad body length" }
        guard lengths == reader.remaining else { return "the bodies do not fill the rest of the payload" }
        let base = reader.offset
        bodyStarts.withUnsafeMutableBufferPointer { column in
            for index in 0..<n { column[index] += base }
        }
        setBodyEndsFromStarts(end: raw.count)
        return nil
    }

    /// Reads the receive-time column of `n` events (each a delta from the previous one's, the
    /// first from `minReceived`); false when it is cut short.
    mutating func decodeReceiveTimes(_ reader: inout ByteReader, count n: Int, minReceived: Int64) -> Bool {
        receiveTimes.append(contentsOf: repeatElement(0, count: n))
        return receiveTimes.withUnsafeMutableBufferPointer { column in
            var lastReceived = minReceived
            for index in 0..<n {
                guard let raw = reader.readVarint() else { return false }
                lastReceived = lastReceived &+ Varint.unzigzag(raw)
                column[index] = lastReceived
            }
            return true
        }
    }

    /// Reads the peer table and each of `n` events' peer; what was malformed, or nil.
    /// `withRelayKeys` (payload versions 5 and 6): each peer entry ends with a relay key id.
    mutating func decodePeers(_ reader: inout ByteReader, count n: Int, withRelayKeys: Bool) -> String? {
        guard let peerCount = reader.readCount(limit: n), peerCount > 0 || n == 0 else { return "bad peer count" }
        for _ in 0..<peerCount {
            guard let uid = reader.readVarint(), uid <= UInt64(UInt32.max), let gid = reader.readVarint(), gid <= UInt64(UInt32.max),
                let pid = reader.readVarint()
            else { return "bad peer entry" }
            var relayKey = RelayKey.none
            if withRelayKeys {
                guard let length = reader.readCount(limit: RelayKey.maximumLength), let bytes = reader.readBytes(length) else { return "bad peer relay key" }
                if length > 0 {
                    guard let key = RelayKey(validating: bytes) else { return "a peer relay key that is not a key id" }
                    relayKey = key
                }
            }
            peers.append(PeerCredentials(uid: UInt32(uid), gid: UInt32(gid), pid: Int32(truncatingIfNeeded: Varint.unzigzag(pid)), relayKey: relayKey))
        }
        peerIndexes.append(contentsOf: repeatElement(0, count: n))
        let peersOK = peerIndexes.withUnsafeMutableBufferPointer { column in
            for index in 0..<n {
                guard let value = reader.readVarint(), value < UInt64(peerCount) else { return false }
                column[index] = UInt32(truncatingIfNeeded: value)
            }
            return true
        }
        return peersOK ? nil : "bad peer index"
    }

    /// A one-frame block's bodies lie one after another: each ends where the next starts.
    private mutating func setBodyEndsFromStarts(end: Int) {
        let n = bodyStarts.count
        bodyEnds.append(contentsOf: repeatElement(end, count: n))
        bodyStarts.withUnsafeBufferPointer { starts in
            bodyEnds.withUnsafeMutableBufferPointer { ends in
                for index in 0..<max(0, n - 1) { ends[index] = starts[index + 1] }
            }
        }
    }
}
