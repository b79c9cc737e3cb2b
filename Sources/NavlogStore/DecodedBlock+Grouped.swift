import NavlogEvents

extension DecodedBlock {
    /// Which session groups of a grouped block a payload holds besides its spine.
    enum GroupSelection {
        /// Every group: the whole block.
        case all
        /// One session (a reader of one session): its group's columns, and its own bodies only.
        case one(group: Int, session: Int)
        /// None: only the spine (the session read for is not in the block).
        case none
        /// The groups g with g % `modulus` == `residue`: the sessions whose id hash is
        /// `residue` modulo `modulus` (a session's group is its hash modulo the group count, a
        /// multiple of `modulus`), for one of `modulus` workers building the replay index.
        case residue(Int, modulus: Int)
    }

    /// The number and group of `session` in a grouped block's spine (`spine`: its decompressed
    /// bytes), or nil when the block has no event of it or the spine does not parse that far.
    static func sessionGroup(inSpine spine: UnsafeRawBufferPointer, of session: UnsafeRawBufferPointer) -> (number: Int, group: Int)? {
        var reader = ByteReader(spine)
        guard let version = reader.readByte(), Self.isGroupedPayloadVersion(version), reader.readVarint() != nil, reader.readVarint() != nil,
            let count = reader.readCount(limit: spine.count)
        else { return nil }
        var lengths = reader
        var bytes = 0
        for _ in 0..<count {
            guard let length = reader.readCount(limit: spine.count) else { return nil }
            bytes += length
        }
        var start = reader.offset
        let groups = start + bytes
        guard bytes + count <= reader.remaining else { return nil }
        for number in 0..<count {
            let length = lengths.readCount(limit: spine.count)!
            if length == session.count && UnsafeRawBufferPointer(rebasing: spine[start..<(start + length)]).elementsEqual(session) {
                return (number, Int(spine[groups + number]))
            }
            start += length
        }
        return nil
    }

    /// The offset in a grouped block's spine past which its session column cannot reach (each
    /// session number is a varint no longer than the highest one's), from the first bytes of the
    /// spine (`prefix`); nil when they do not hold its counts and session table (too few bytes,
    /// or not a spine: the caller then reads more, up to all of it).
    static func sessionColumnEnd(inSpinePrefix prefix: UnsafeRawBufferPointer) -> Int? {
        var reader = ByteReader(prefix)
        guard let version = reader.readByte(), Self.isGroupedPayloadVersion(version), let events = reader.readCount(limit: Int(UInt32.max)),
            reader.readVarint() != nil, let count = reader.readCount(limit: Int(UInt32.max)), count > 0
        else { return nil }
        var table = count  // each session's group byte follows the ids
        for _ in 0..<count {
            guard let length = reader.readCount(limit: Int(UInt32.max)) else { return nil }
            table += length
        }
        // Version 4: a group byte per event; 3: a session number.
        var numberLength = 1
        while version == Self.sessionColumnPayloadVersion && count - 1 >= 1 << (7 * numberLength) { numberLength += 1 }
        return reader.offset + table + events * numberLength
    }

    /// The grouped payload version before 4 (a session number per event in the spine): navlog
    /// no longer writes it, and reads it (Tests/Fixtures/format-v3).
    static let sessionColumnPayloadVersion: UInt8 = 3

    /// Whether `version` is a grouped payload's: 4, 6 (4 with relay keys), or 3 (written
    /// before version 4).
    static func isGroupedPayloadVersion(_ version: UInt8) -> Bool {
        version == BlockEncoder.groupedPayloadVersion || version == BlockEncoder.relayedGroupedPayloadVersion
            || version == Self.sessionColumnPayloadVersion
    }

    /// Whether a grouped payload of `version` has a group per event in its spine and session
    /// numbers in its parts (4 and 6), not a session number per event in its spine (3).
    static func hasGroupColumn(_ version: UInt8) -> Bool { version != Self.sessionColumnPayloadVersion }

    /// Decodes a grouped payload (version 4 or 3, see ``BlockEncoder``): `raw` holds the spine, then
    /// (`only`) every group's part as the header's frame table lists them, one group's part, or
    /// nothing more.
    /// `receiveTimesAndPeers` false (a read of one session for a replay): the spine's receive
    /// times and peers are left undecoded (``receiveTimesAndPeersDecoded``).
    mutating func decodeGrouped(
        _ raw: UnsafeRawBufferPointer, header: BlockHeader, only: GroupSelection, locatingBodies: Bool, receiveTimesAndPeers: Bool
    ) throws(DecodingError) {
        let groups = header.groupCount
        let spineSize = header.frames[0].payloadSize
        let partSizes = try Self.parts(of: header, only)
        guard spineSize + partSizes.reduce(0, { $0 + $1.size }) == raw.count else {
            throw DecodingError(reason: "the block payload is \(raw.count) bytes where its frame table says \(spineSize + partSizes.reduce(0) { $0 + $1.size })")
        }
        let n = header.eventCount
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[0..<spineSize]))
        // The spine.
        let (version, sessionCount) = try decodeSpineSessions(&reader, header: header, only: only, payloadSize: raw.count)
        if Self.hasGroupColumn(version) {
            try decodeSessionsFromGroups(raw, reader: &reader, eventCount: n, groups: groups, sessionCount: sessionCount, spineSize: spineSize, parts: partSizes)
        } else {
            try decodeSessionColumn(&reader, eventCount: n, sessionCount: sessionCount)
        }
        receiveTimesAndPeersDecoded = receiveTimesAndPeers
        if receiveTimesAndPeers {
            guard decodeReceiveTimes(&reader, count: n, minReceived: header.minReceived) else { throw Self.malformed("truncated receive-time column", at: reader.offset) }
            if let failure = decodePeers(&reader, count: n, withRelayKeys: version == BlockEncoder.relayedGroupedPayloadVersion) {
                throw Self.malformed(failure, at: reader.offset)
            }
            guard reader.remaining == 0 else { throw Self.malformed("the spine has \(reader.remaining) bytes past its columns", at: reader.offset) }
        }
        try countGroupRuns(header: header, version: version, sessionCount: sessionCount)
        try placeEventsByGroup(eventCount: n, groups: groups, sessionCount: sessionCount)
        try decodeParts(raw, partSizes, header: header, sessionCount: sessionCount, locatingBodies: locatingBodies)
        groupCount = groups
        count = n
    }

    /// A malformed payload, at byte `offset`.
    static func malformed(_ what: String, at offset: Int) -> DecodingError {
        DecodingError(reason: "the block payload is malformed at byte \(offset): \(what)")
    }

    /// The groups whose parts `only` asks for, with their sizes, in frame order.
    private static func parts(of header: BlockHeader, _ only: GroupSelection) throws(DecodingError) -> [(group: Int, size: Int)] {
        let groups = header.groupCount
        var partSizes: [(group: Int, size: Int)] = []
        switch only {
        case .all:
            for group in 0..<groups { partSizes.append((group, header.frames[1 + group].payloadSize)) }
        case .one(let group, _):
            guard group >= 0 && group < groups else { throw DecodingError(reason: "the block has no session group \(group)") }
            partSizes.append((group, header.frames[1 + group].payloadSize))
        case .none:
            break
        case .residue(let residue, let modulus):
            for group in 0..<groups where group % modulus == residue { partSizes.append((group, header.frames[1 + group].payloadSize)) }
        }
        return partSizes
    }

    /// The spine's head: its version and counts, the session table and each session's group;
    /// returns the version and the number of sessions.
    private mutating func decodeSpineSessions(
        _ reader: inout ByteReader, header: BlockHeader, only: GroupSelection, payloadSize: Int
    ) throws(DecodingError) -> (version: UInt8, sessionCount: Int) {
        let n = header.eventCount
        let groups = header.groupCount
        guard let version = reader.readByte(), Self.isGroupedPayloadVersion(version) else {
            throw Self.malformed("a grouped block whose spine is not payload version 3, 4 or 6", at: 0)
        }
        guard reader.readCount(limit: payloadSize) == n else { throw Self.malformed("the event count disagrees with the block header", at: reader.offset) }
        guard reader.readCount(limit: BlockEncoder.maximumGroups) == groups else {
            throw Self.malformed("the group count disagrees with the block header", at: reader.offset)
        }
        guard let sessionCount = reader.readCount(limit: n), sessionCount > 0 else { throw Self.malformed("bad session count", at: reader.offset) }
        let sessionTableOK = readStringTable(&reader, count: sessionCount, base: 0)
        guard sessionTableOK else { throw Self.malformed("bad session id lengths", at: reader.offset) }
        guard let groupBytes = reader.readBytes(sessionCount) else { throw Self.malformed("truncated session groups", at: reader.offset) }
        sessionGroups.removeAll(keepingCapacity: true)
        sessionGroups.append(contentsOf: groupBytes)
        guard sessionGroups.allSatisfy({ Int($0) < groups }) else { throw Self.malformed("a session group past the group count", at: reader.offset) }
        if case .one(_, let session) = only {
            guard session >= 0 && session < sessionCount else { throw Self.malformed("no session \(session)", at: header.frames[0].payloadSize) }
            decodedSession = session
        }
        // Version 4: the group column, then each decoded group's own session numbers.
        groupColumnStarts.removeAll(keepingCapacity: true)
        groupColumnStarts.append(contentsOf: repeatElement(0, count: groups))
        for _ in 0..<groups { stringTables.append((bytesStart: 0, ends: 0..<0)) }
        sessionsKnown = true
        return (version, sessionCount)
    }

    /// Where each group's events start among the events by group (``groupRuns``), checked
    /// against the frame table: a group has events exactly when it has a part.
    private mutating func countGroupRuns(header: BlockHeader, version: UInt8, sessionCount: Int) throws(DecodingError) {
        let groups = header.groupCount
        groupRuns.removeAll(keepingCapacity: true)
        groupRuns.append(contentsOf: repeatElement(0, count: groups + 1))
        if Self.hasGroupColumn(version) {
            // Every group's count is in the group column, read or not.
            for group in 0..<groups { groupRuns[group + 1] = groupEventCounts[group] }
        } else {
            for session in 0..<sessionCount { groupRuns[Int(sessionGroups[session]) + 1] += sessionEventCounts[session] }
        }
        for group in 0..<groups {
            guard (groupRuns[group + 1] == 0) == (header.frames[1 + group].payloadSize == 0) else {
                throw Self.malformed(
                    "session group \(group) has \(groupRuns[group + 1]) events but a part of \(header.frames[1 + group].payloadSize) bytes", at: header.frames[0].payloadSize)
            }
            groupRuns[group + 1] += groupRuns[group]
        }
    }

    /// The groups' columns, at their events' positions (events by group, session-major: a
    /// counting sort of positions, per group its sessions in order of number, each one's
    /// events in log order). Sized but not cleared: every event of a group read is written;
    /// the others are not decoded (isDecoded) and keep whatever an earlier block left.
    private mutating func decodeParts(
        _ raw: UnsafeRawBufferPointer, _ partSizes: [(group: Int, size: Int)], header: BlockHeader, sessionCount: Int, locatingBodies: Bool
    ) throws(DecodingError) {
        let n = header.eventCount
        types.setCount(n, filler: .mark)
        timestamps.setCount(n, filler: 0)
        sequencesPlusOne.setCount(n, filler: 0)
        flags.setCount(n, filler: 0)
        bodiesLocated = locatingBodies
        bodyStarts.setCount(locatingBodies ? n : 0, filler: 0)
        bodyEnds.setCount(locatingBodies ? n : 0, filler: 0)
        // Per session number, its previous time and seq (deltas are per session); a read of one
        // session keeps its own in locals.
        var lastTime = decodedSession >= 0 ? [] : [Int64](repeating: header.minTimestamp, count: sessionCount)
        var lastSequence = decodedSession >= 0 ? [] : [UInt64](repeating: 0, count: sessionCount)
        var partStart = header.frames[0].payloadSize
        for (group, size) in partSizes {
            defer { partStart += size }
            guard size > 0 else { continue }
            defer { decodedGroups |= 1 << UInt64(group) }
            if decodedSession >= 0 {
                try decodeSessionPart(raw, start: partStart, size: size, group: group, sessionCount: sessionCount, minTimestamp: header.minTimestamp)
                continue
            }
            try decodeGroupPart(
                raw, start: partStart, size: size, group: group, sessionCount: sessionCount, lastTime: &lastTime, lastSequence: &lastSequence,
                locatingBodies: locatingBodies)
        }
    }

    /// Version 3's session column (a session number per event, in the spine at `reader`): the
    /// column, each session's event count, and (a read of one session) where its events are, in
    /// one pass.
    private mutating func decodeSessionColumn(_ reader: inout ByteReader, eventCount n: Int, sessionCount: Int) throws(DecodingError) {
        sessions.setCount(n, filler: 0)
        sessionEventCounts.removeAll(keepingCapacity: true)
        sessionEventCounts.append(contentsOf: repeatElement(0, count: sessionCount))
        wantedPositions.setCount(n + 1, filler: 0)
        let wanted = decodedSession >= 0 ? UInt64(decodedSession) : UInt64.max
        let sessionsOK = sessions.withUnsafeMutableBufferPointer { column in
            sessionEventCounts.withUnsafeMutableBufferPointer { counts in
                wantedPositions.withUnsafeMutableBufferPointer { found in
                    var foundCount = 0
                    let bytes = reader.bytes
                    var offset = reader.offset
                    defer { reader.offset = offset }
                    for index in 0..<n {
                        // Session numbers are one or two bytes (up to 16,383 sessions a block),
                        // mixed at random: decoded without a branch on their length, longer
                        // ones (or a cut column) through the reader.
                        var number: UInt64
                        if offset + 1 < bytes.count, bytes[offset + 1] < 0x80 || bytes[offset] < 0x80 {
                            let first = UInt64(bytes[offset]), second = UInt64(bytes[offset + 1])
                            let long = first >> 7
                            number = (first & 0x7F) | (second << 7) & (0 &- long)
                            offset += 1 + Int(long)
                        } else {
                            reader.offset = offset
                            guard let long = reader.readVarint() else { return false }
                            number = long
                            offset = reader.offset
                        }
                        guard number < UInt64(sessionCount) else { return false }
                        column[index] = UInt32(truncatingIfNeeded: number)
                        counts[Int(number)] += 1
                        found[foundCount] = Int32(truncatingIfNeeded: index)
                        foundCount += number == wanted ? 1 : 0
                    }
                    return true
                }
            }
        }
        guard sessionsOK else {
            throw DecodingError(reason: "the block payload is malformed at byte \(reader.offset): bad session number")
        }
    }

    /// Puts each session's events in its run of its group (``positionsByGroup``,
    /// ``sessionRunEnds``), from the session column and counts; a read of one session places its
    /// own only.
    private mutating func placeEventsByGroup(eventCount n: Int, groups: Int, sessionCount: Int) {
        let groupOfSession = sessionGroups
        // Where each session's run starts; after the placing pass, where it ends.
        sessionRunEnds.removeAll(keepingCapacity: true)
        sessionRunEnds.append(contentsOf: repeatElement(0, count: sessionCount))
        var next = groupRuns
        for session in 0..<sessionCount {
            let group = Int(groupOfSession[session])
            sessionRunEnds[session] = next[group]
            next[group] += sessionEventCounts[session]
        }
        positionsByGroup.setCount(n, filler: 0)
        sessions.withUnsafeBufferPointer { sessionColumn in
            positionsByGroup.withUnsafeMutableBufferPointer { positions in
                sessionRunEnds.withUnsafeMutableBufferPointer { slots in
                    if decodedSession >= 0 {
                        // Only the one session's run is read: its positions, found above.
                        let count = sessionEventCounts[decodedSession]
                        let start = slots[decodedSession]
                        for k in 0..<count { positions[start + k] = wantedPositions[k] }
                        slots[decodedSession] = start + count
                    } else {
                        // Some groups read (one worker's): the events of the others have no session.
                        for index in 0..<n where sessionColumn[index] != Self.undecodedSession {
                            let session = Int(sessionColumn[index])
                            positions[slots[session]] = Int32(truncatingIfNeeded: index)
                            slots[session] += 1
                        }
                    }
                }
            }
        }
    }

    /// Version 4's sessions: the spine's group column (at `reader`, a byte per event), then the
    /// column of its own session numbers at the start of each group part read (`parts`, after
    /// the spine's `spineSize` bytes). Sets ``sessions`` (``undecodedSession`` for the events of
    /// groups not read), each session's event count (sessions of groups not read: 0), each
    /// group's event count (all groups), and (a read of one session) where its events are.
    private mutating func decodeSessionsFromGroups(
        _ raw: UnsafeRawBufferPointer, reader: inout ByteReader, eventCount n: Int, groups: Int, sessionCount: Int, spineSize: Int,
        parts: [(group: Int, size: Int)]
    ) throws(DecodingError) {
        guard let column = reader.readBytes(n) else {
            throw DecodingError(reason: "the block payload is malformed at byte \(reader.offset): truncated group column")
        }
        try countGroupEvents(column, groups: groups)
        orderGroupSessions(groups: groups, sessionCount: sessionCount)
        var groupStarts = [Int](repeating: 0, count: groups + 1)
        for group in 0..<groups { groupStarts[group + 1] = groupStarts[group] + groupEventCounts[group] }
        let isRead = try readGroupSessionNumbers(raw, parts: parts, spineSize: spineSize, groupStarts: groupStarts, eventCount: n)
        fillSessionColumn(column, groupStarts: groupStarts, isRead: isRead, sessionCount: sessionCount)
        // A group without events has no part: it hides no session.
        sessionsKnown = (0..<groups).allSatisfy { isRead[$0] || groupEventCounts[$0] == 0 }
    }

    /// Each group's event count, from the spine's group column.
    private mutating func countGroupEvents(_ column: UnsafeRawBufferPointer, groups: Int) throws(DecodingError) {
        groupEventCounts.removeAll(keepingCapacity: true)
        groupEventCounts.append(contentsOf: repeatElement(0, count: 256))
        groupEventCounts.withUnsafeMutableBufferPointer { counts in Self.countBytes(column, into: counts) }
        guard groupEventCounts[groups...].allSatisfy({ $0 == 0 }) else {
            throw DecodingError(reason: "the block payload is malformed in its spine's group column: a group past the group count")
        }
        groupEventCounts.removeLast(256 - groups)
    }

    /// Each group's sessions in order of number (``groupSessions`` from ``groupSessionStarts``):
    /// a group's own session number k is its k-th.
    private mutating func orderGroupSessions(groups: Int, sessionCount: Int) {
        groupSessionStarts.removeAll(keepingCapacity: true)
        groupSessionStarts.append(contentsOf: repeatElement(0, count: groups + 1))
        for group in sessionGroups { groupSessionStarts[Int(group) + 1] += 1 }
        for group in 0..<groups { groupSessionStarts[group + 1] += groupSessionStarts[group] }
        groupSessions.setCount(sessionCount, filler: 0)
        var nextSession = groupSessionStarts
        for (session, group) in sessionGroups.enumerated() {
            groupSessions[nextSession[Int(group)]] = UInt32(truncatingIfNeeded: session)
            nextSession[Int(group)] += 1
        }
    }

    /// Each group read: its string table (as table 1 + group), then its events' sessions in log
    /// order (its own numbers made the block's), leaving where its columns start. Returns which
    /// groups were read.
    private mutating func readGroupSessionNumbers(
        _ raw: UnsafeRawBufferPointer, parts: [(group: Int, size: Int)], spineSize: Int, groupStarts: [Int], eventCount n: Int
    ) throws(DecodingError) -> [Bool] {
        sessionsOfGroupEvents.setCount(n, filler: 0)
        var isRead = [Bool](repeating: false, count: groupStarts.count - 1)
        var partStart = spineSize
        for (group, size) in parts {
            defer { partStart += size }
            guard size > 0 else { continue }
            isRead[group] = true
            var part = ByteReader(UnsafeRawBufferPointer(rebasing: raw[partStart..<(partStart + size)]))
            if let failure = readGroupStringTable(&part, group: group, base: partStart) {
                throw DecodingError(reason: "the block payload is malformed at byte \(partStart + part.offset) (session group \(group)): \(failure)")
            }
            let ownSessions = UInt64(groupSessionStarts[group + 1] - groupSessionStarts[group])
            let first = groupSessionStarts[group]
            // Through buffers: an element store into a property checked its array's uniqueness
            // each time (a quarter of the time of a read for one session).
            let numbersOK = sessionsOfGroupEvents.withUnsafeMutableBufferPointer { groupEvents in
                groupSessions.withUnsafeBufferPointer { groupSessions in
                    for k in groupStarts[group]..<groupStarts[group + 1] {
                        guard let number = part.readVarint(), number < ownSessions else { return false }
                        groupEvents[k] = groupSessions[first + Int(number)]
                    }
                    return true
                }
            }
            guard numbersOK else {
                throw DecodingError(reason: "the block payload is malformed at byte \(partStart + part.offset) (session group \(group)): bad session number")
            }
            groupColumnStarts[group] = part.offset
        }
        return isRead
    }

    /// The session column, each session's count and the wanted session's positions, in one
    /// pass over the group bytes (a read of one session: one group in 8,192 events is read).
    private mutating func fillSessionColumn(_ column: UnsafeRawBufferPointer, groupStarts: [Int], isRead: [Bool], sessionCount: Int) {
        let n = column.count
        sessions.setCount(n, filler: 0)
        sessionEventCounts.removeAll(keepingCapacity: true)
        sessionEventCounts.append(contentsOf: repeatElement(0, count: sessionCount))
        wantedPositions.setCount(n + 1, filler: 0)
        let wanted = decodedSession >= 0 ? UInt32(decodedSession) : UInt32.max
        var cursors = groupStarts
        let readGroups = isRead.indices.filter { isRead[$0] }
        sessions.withUnsafeMutableBufferPointer { sessionColumn in
            sessionEventCounts.withUnsafeMutableBufferPointer { counts in
                wantedPositions.withUnsafeMutableBufferPointer { found in
                    sessionsOfGroupEvents.withUnsafeBufferPointer { groupEvents in
                        var foundCount = 0
                        if readGroups.count == 1, let only = readGroups.first {
                            // One group read (a seek reads one session's): a scan for its byte,
                            // touching nothing else for the other groups' events (most of them);
                            // the loop below spent ~40% of a seek on those.
                            sessionColumn.update(repeating: Self.undecodedSession)
                            var cursor = groupStarts[only]
                            Self.forEachPosition(of: UInt8(truncatingIfNeeded: only), in: column) { index in
                                let session = groupEvents[cursor]
                                cursor += 1
                                sessionColumn[index] = session
                                counts[Int(session)] += 1
                                found[foundCount] = Int32(truncatingIfNeeded: index)
                                foundCount += session == wanted ? 1 : 0
                            }
                            return
                        }
                        for index in 0..<n {
                            let group = Int(column[index])
                            guard isRead[group] else {
                                sessionColumn[index] = Self.undecodedSession
                                continue
                            }
                            let session = groupEvents[cursors[group]]
                            cursors[group] += 1
                            sessionColumn[index] = session
                            counts[Int(session)] += 1
                            found[foundCount] = Int32(truncatingIfNeeded: index)
                            foundCount += session == wanted ? 1 : 0
                        }
                    }
                }
            }
        }
    }

    /// Sets `counts[v]` to how many bytes of `bytes` are `v` (`counts` has 256 entries, zero).
    ///
    /// Four bytes a step into four tables: one table made each count wait for the store of the
    /// one before (a spine's group column has a byte per event, and a seek counts it per block).
    static func countBytes(_ bytes: UnsafeRawBufferPointer, into counts: UnsafeMutableBufferPointer<Int>) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1024) { tables in
            tables.initialize(repeating: 0)
            var index = 0
            while index + 4 <= bytes.count {
                let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
                tables[Int(word & 0xFF)] &+= 1
                tables[256 + Int((word >> 8) & 0xFF)] &+= 1
                tables[512 + Int((word >> 16) & 0xFF)] &+= 1
                tables[768 + Int(word >> 24)] &+= 1
                index += 4
            }
            while index < bytes.count {
                tables[Int(bytes[index])] &+= 1
                index += 1
            }
            for value in 0..<256 { counts[value] = Int(tables[value]) + Int(tables[256 + value]) + Int(tables[512 + value]) + Int(tables[768 + value]) }
        }
    }

    /// Calls `body` with each position of `value` in `bytes`, in order: eight bytes a step, the
    /// equal ones found with word arithmetic (a seek looks for its group's byte, one in 16 or
    /// so, in a spine's group column).
    static func forEachPosition(of value: UInt8, in bytes: UnsafeRawBufferPointer, _ body: (Int) -> Void) {
        let repeated = UInt64(value) &* 0x0101_0101_0101_0101
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var index = 0
        while index + 8 <= bytes.count {
            // Bytes equal to `value` are zero in `difference`; `zeros` has the top bit of exactly
            // those bytes set (no borrow crosses bytes: each byte's low 7 bits are added alone).
            let difference = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) ^ repeated
            var zeros = ~(((difference & low7) &+ low7) | difference | low7)
            while zeros != 0 {
                body(index + zeros.trailingZeroBitCount >> 3)
                zeros &= zeros &- 1
            }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] == value { body(index) }
            index += 1
        }
    }

    /// Reads a string table of `count` strings at `reader` (lengths, then bytes) as a new table;
    /// `base` is where `reader`'s bytes start in ``payload``.
    mutating func readStringTable(_ reader: inout ByteReader, count: Int, base: Int) -> Bool {
        let first = stringEnds.count
        var total: UInt64 = 0
        for _ in 0..<count {
            guard let length = reader.readVarint(), length <= UInt64(reader.bytes.count) else { return false }
            total += length
            guard total <= UInt64(reader.remaining) else { return false }
            stringEnds.append(UInt32(total))
        }
        stringTables.append((base + reader.offset, first..<stringEnds.count))
        reader.offset += Int(total)
        return true
    }

    /// Reads a group part's string table (its count, then the table) as table 1 + `group`; what
    /// was malformed, or nil.
    private mutating func readGroupStringTable(_ reader: inout ByteReader, group: Int, base: Int) -> String? {
        let tableIndex = stringTables.count
        guard let stringCount = reader.readCount(limit: reader.bytes.count) else { return "bad string count" }
        guard readStringTable(&reader, count: stringCount, base: base) else { return "bad string length" }
        // The table just read belongs at 1 + group: move it there.
        stringTables[1 + group] = stringTables[tableIndex]
        stringTables.removeLast()
        return nil
    }

    /// ``decodeGroupPart`` for a read of one session (``decodedSession``, in `group`): a group's
    /// columns are session-major, so the session's values are one run in each; the byte columns
    /// are indexed, the varint columns skipped up to the run and past it, and only the session's
    /// bodies walked. What lies outside the run is not checked (a whole read checks it).
    private mutating func decodeSessionPart(
        _ raw: UnsafeRawBufferPointer, start: Int, size: Int, group: Int, sessionCount: Int, minTimestamp: Int64
    ) throws(DecodingError) {
        var reader = try openGroupPart(raw, start: start, size: size, group: group)
        func fail(_ what: String) -> DecodingError {
            DecodingError(reason: "the block payload is malformed at byte \(start + reader.offset) (session group \(group)): \(what)")
        }
        let session = decodedSession
        let members = groupRuns[group]..<groupRuns[group + 1]
        let run = (sessionRunEnds[session] - sessionEventCounts[session])..<sessionRunEnds[session]
        guard Int(sessionGroups[session]) == group, members.lowerBound <= run.lowerBound, run.upperBound <= members.upperBound else {
            throw fail("the session read for is not in this group")
        }
        let before = run.lowerBound - members.lowerBound, after = members.upperBound - run.upperBound
        guard let typeBytes = reader.readBytes(members.count) else { throw fail("truncated type column") }
        for member in run {
            guard let type = EventType(rawValue: typeBytes[member - members.lowerBound]) else { throw fail("unknown event type") }
            types[Int(positionsByGroup[member])] = type
        }
        guard reader.skipVarints(before) else { throw fail("truncated time column") }
        var lastTime = minTimestamp
        for member in run {
            guard let value = reader.readVarint() else { throw fail("truncated time column") }
            lastTime = lastTime &+ Varint.unzigzag(value)
            timestamps[Int(positionsByGroup[member])] = lastTime
        }
        guard reader.skipVarints(after + before) else { throw fail("truncated time or sequence column") }
        var lastSequence: UInt64 = 0
        for member in run {
            guard let value = reader.readVarint() else { throw fail("truncated sequence column") }
            if value != 0 {
                lastSequence = lastSequence &+ UInt64(bitPattern: Varint.unzigzag(value - 1))
                sequencesPlusOne[Int(positionsByGroup[member])] = lastSequence &+ 1
            } else {
                sequencesPlusOne[Int(positionsByGroup[member])] = 0
            }
        }
        guard reader.skipVarints(after) else { throw fail("truncated sequence column") }
        guard let flagBytes = reader.readBytes(members.count) else { throw fail("truncated flag column") }
        for member in run { flags[Int(positionsByGroup[member])] = flagBytes[member - members.lowerBound] }
        // Each session's bodies' length in bytes, in the order of the runs: where this one's are.
        var runStart = 0, runBytes = 0, total = 0
        for other in 0..<sessionCount where Int(sessionGroups[other]) == group && sessionEventCounts[other] > 0 {
            guard let length = reader.readCount(limit: size) else { throw fail("bad body run length") }
            if other == session { (runStart, runBytes) = (total, length) }
            total += length
        }
        let base = start + reader.offset
        guard total == reader.remaining else { throw fail("the body runs do not fill the rest of the group's part") }
        let bodies = UnsafeRawBufferPointer(rebasing: raw[base..<(start + size)])
        var position = runStart
        for member in run {
            let event = Int(positionsByGroup[member])
            bodyStarts[event] = base + position
            guard let end = StoredValue.skip(bodies, position, depth: 0), end <= runStart + runBytes else { throw fail("a malformed body") }
            position = end
            bodyEnds[event] = base + position
        }
        guard position == runStart + runBytes else { throw fail("the bodies of a session do not fill its run") }
    }

    /// A reader of group `group`'s part at its columns: past its string table (read here for
    /// version 3; version 4 read it, and its session numbers, with the spine).
    private mutating func openGroupPart(_ raw: UnsafeRawBufferPointer, start: Int, size: Int, group: Int) throws(DecodingError) -> ByteReader {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)]))
        if groupColumnStarts[group] > 0 {
            reader.offset = groupColumnStarts[group]
        } else if let failure = readGroupStringTable(&reader, group: group, base: start) {
            throw DecodingError(reason: "the block payload is malformed at byte \(start + reader.offset) (session group \(group)): \(failure)")
        }
        return reader
    }

    /// Decodes every event of group `group`'s part into the columns, at the events' positions;
    /// `lastTime` and `lastSequence` hold each session's previous time and `seq` (deltas are per session).
    private mutating func decodeGroupPart(
        _ raw: UnsafeRawBufferPointer, start: Int, size: Int, group: Int, sessionCount: Int, lastTime: inout [Int64], lastSequence: inout [UInt64],
        locatingBodies: Bool
    ) throws(DecodingError) {
        var reader = try openGroupPart(raw, start: start, size: size, group: group)
        func fail(_ what: String) -> DecodingError {
            DecodingError(reason: "the block payload is malformed at byte \(start + reader.offset) (session group \(group)): \(what)")
        }
        let members = groupRuns[group]..<groupRuns[group + 1]
        guard let typeBytes = reader.readBytes(members.count) else { throw fail("truncated type column") }
        guard readGroupTypes(typeBytes, of: members) else { throw fail("unknown event type") }
        guard readGroupTimes(&reader, of: members, lastTime: &lastTime) else { throw fail("truncated time column") }
        guard readGroupSequences(&reader, of: members, lastSequence: &lastSequence) else { throw fail("truncated sequence column") }
        guard let flagBytes = reader.readBytes(members.count) else { throw fail("truncated flag column") }
        for (k, member) in members.enumerated() { flags[Int(positionsByGroup[member])] = flagBytes[k] }
        // Each session's bodies' length in bytes, in the order of the runs.
        var runBytes: [(session: Int, bytes: Int)] = []
        for session in 0..<sessionCount where Int(sessionGroups[session]) == group && sessionEventCounts[session] > 0 {
            guard let length = reader.readCount(limit: size) else { throw fail("bad body run length") }
            runBytes.append((session, length))
        }
        guard locatingBodies else { return }
        if let failure = locateGroupBodies(raw, base: start + reader.offset, end: start + size, runs: runBytes) { throw fail(failure) }
    }

    /// The group's type column, at its events' positions; false at an unknown type.
    private mutating func readGroupTypes(_ typeBytes: UnsafeRawBufferPointer, of members: Range<Int>) -> Bool {
        positionsByGroup.withUnsafeBufferPointer { positions in
            types.withUnsafeMutableBufferPointer { column in
                for (k, member) in members.enumerated() {
                    guard let type = EventType(rawValue: typeBytes[k]) else { return false }
                    column[Int(positions[member])] = type
                }
                return true
            }
        }
    }

    /// The group's time column (per session deltas); false when it is cut short.
    private mutating func readGroupTimes(_ reader: inout ByteReader, of members: Range<Int>, lastTime: inout [Int64]) -> Bool {
        positionsByGroup.withUnsafeBufferPointer { positions in
            sessions.withUnsafeBufferPointer { sessionColumn in
                timestamps.withUnsafeMutableBufferPointer { column in
                    for member in members {
                        let position = Int(positions[member])
                        guard let value = reader.readVarint() else { return false }
                        let session = Int(sessionColumn[position])
                        lastTime[session] = lastTime[session] &+ Varint.unzigzag(value)
                        column[position] = lastTime[session]
                    }
                    return true
                }
            }
        }
    }

    /// The group's `seq` column (0: none; else a per-session delta + 1); false when it is cut short.
    private mutating func readGroupSequences(_ reader: inout ByteReader, of members: Range<Int>, lastSequence: inout [UInt64]) -> Bool {
        positionsByGroup.withUnsafeBufferPointer { positions in
            sessions.withUnsafeBufferPointer { sessionColumn in
                sequencesPlusOne.withUnsafeMutableBufferPointer { column in
                    for member in members {
                        let position = Int(positions[member])
                        guard let value = reader.readVarint() else { return false }
                        if value != 0 {
                            let session = Int(sessionColumn[position])
                            lastSequence[session] = lastSequence[session] &+ UInt64(bitPattern: Varint.unzigzag(value - 1))
                            column[position] = lastSequence[session] &+ 1
                        } else {
                            column[position] = 0
                        }
                    }
                    return true
                }
            }
        }
    }

    /// Where each body of the group's sessions starts and ends: the bodies in `raw[base..<end]`
    /// are the sessions' runs, in order, each `bytes` long. Returns what is wrong, if anything.
    private mutating func locateGroupBodies(_ raw: UnsafeRawBufferPointer, base: Int, end: Int, runs runBytes: [(session: Int, bytes: Int)]) -> String? {
        let bodies = UnsafeRawBufferPointer(rebasing: raw[base..<end])
        guard runBytes.reduce(0, { $0 + $1.bytes }) == bodies.count else { return "the body runs do not fill the rest of the group's part" }
        var runStart = 0
        for (session, bytes) in runBytes {
            defer { runStart += bytes }
            let run = (sessionRunEnds[session] - sessionEventCounts[session])..<sessionRunEnds[session]
            var position = runStart
            let ok = positionsByGroup.withUnsafeBufferPointer { positions in
                bodyStarts.withUnsafeMutableBufferPointer { starts in
                    bodyEnds.withUnsafeMutableBufferPointer { ends in
                        for member in run {
                            let event = Int(positions[member])
                            starts[event] = base + position
                            guard let end = StoredValue.skip(bodies, position, depth: 0), end <= runStart + bytes else { return false }
                            position = end
                            ends[event] = base + position
                        }
                        return true
                    }
                }
            }
            guard ok else { return "a malformed body" }
            guard position == runStart + bytes else { return "the bodies of a session do not fill its run" }
        }
        return nil
    }
}

extension Array {
    /// Makes the array `count` elements long, keeping the elements it already has (appending
    /// `filler` when it grows): for a column whose decoder writes every element it reads, so
    /// that a block of the same size as the last one costs no clearing.
    mutating func setCount(_ count: Int, filler: Element) {
        if self.count > count {
            removeLast(self.count - count)
        } else if self.count < count {
            append(contentsOf: repeatElement(filler, count: count - self.count))
        }
    }
}
