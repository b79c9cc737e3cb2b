import NavlogEvents

/// Collects events into one block and encodes its payload; docs/FORMAT.md ("The payload", "A
/// grouped payload") gives the layout byte by byte, and `tools/format-reader.py` reads it from
/// there.
///
/// The payload is columnar so that zstd sees similar bytes together, and each body is written
/// in its final interned form as it is added (the string table is in order of first
/// appearance), so sealing a block is one pass over its columns. (Ordering the table by use
/// took a second pass over every body and gained nothing: 10.46 bytes per event against 10.44,
/// `navlog-bench --only size`.)
///
/// A block of at least twice ``LogOptions/eventsPerSessionGroup`` events is written grouped:
/// with hundreds of sessions live, a session has a few dozen events in a block, and a reader of
/// one session (a seek, `navlog replay`) would decompress and decode all of them. Grouped, what
/// every event has in log order (its group, receive time and peer) is a spine, and each session
/// group's events, session-major, are a zstd frame of their own: a seek reads the spine and one
/// group. Session-major parts also compress better than parts in log order (2M
/// production-shaped events, 4,096 events per group: 23.6 MB against 22.1 MB).
struct BlockEncoder {
    /// 2: no body lengths. Readers read 1 too.
    static let payloadVersion: UInt8 = 2
    /// The spine of a grouped payload: 4, a group per event in the spine and each group's own
    /// session numbers in its part. Readers read 3 too (a session number per event in the
    /// spine), as navlog wrote it before (Tests/Fixtures/format-v3).
    static let groupedPayloadVersion: UInt8 = 4
    /// Version 2 with a relay key id in each peer entry: written only for a block with an event
    /// a trusted relay passed on with a key (``PeerCredentials/relayKey``), so a log of socket
    /// and ingest events keeps its version 2 bytes.
    static let relayedPayloadVersion: UInt8 = 5
    /// Version 4 with a relay key id in each peer entry of the spine (as version 5 is to 2).
    static let relayedGroupedPayloadVersion: UInt8 = 6
    /// A grouped block has one group per this many events (at most ``maximumGroups``); blocks
    /// of fewer than twice as many keep one frame (payload version 2): a group would be most of
    /// it. See ``LogOptions/eventsPerSessionGroup``.
    var eventsPerGroup = 8192
    /// The most session groups of a block (the header's frame table has a spine and these).
    static let maximumGroups = BlockHeader.maximumFrames - 1

    /// The fixed fields of one event, kept together so adding an event is one append.
    private struct Row {
        var timestamp: Int64
        var receivedAt: Int64
        /// seq + 1, 0 = none.
        var sequencePlusOne: UInt64
        var session: UInt32
        var peerIndex: UInt32
        var bodyLength: UInt32
        var type: UInt8
        var flags: UInt8
    }

    private(set) var count = 0
    private var interner = ByteStringTable()
    private var rows: [Row] = []
    private var peers: [PeerCredentials] = []
    /// Whether a peer has a relay key: the payload is then version 5 or 6.
    private var hasRelayKeys = false
    /// Every body in the interned (stored) form, one after another.
    private var bodies: [UInt8] = []
    /// Hashes of the distinct session ids, and which string refs are already among them.
    private(set) var sessionHashes: [UInt64] = []
    private var isSessionRef: [Bool] = []
    private(set) var minTimestamp = Int64.max, maxTimestamp = Int64.min
    private(set) var minReceived = Int64.max, maxReceived = Int64.min

    /// A rough size of the payload so far, to cap blocks by size as well as by count.
    var approximateSize: Int { interner.bytes.count + bodies.count + count * 8 }

    mutating func removeAll() {
        count = 0
        interner.removeAll()
        rows.removeAll(keepingCapacity: true)
        peers.removeAll(keepingCapacity: true)
        hasRelayKeys = false
        bodies.removeAll(keepingCapacity: true)
        sessionHashes.removeAll(keepingCapacity: true)
        isSessionRef.removeAll(keepingCapacity: true)
        minTimestamp = .max; maxTimestamp = .min
        minReceived = .max; maxReceived = .min
    }

    /// Adds event `index` of `batch`.
    mutating func append(_ batch: EventBatch, _ index: Int) {
        _ = append(batch, from: index, maximumEvents: count + 1, maximumBytes: .max)
    }

    /// Adds the events of `batch` from `first` on, while the block holds fewer than
    /// `maximumEvents` events and ``approximateSize`` is below `maximumBytes`; returns how many
    /// it added. One call per batch rather than per event: the log (a class) then pays its
    /// exclusive access to this encoder, and the batch's bytes are reached, once per batch.
    mutating func append(_ batch: EventBatch, from first: Int, maximumEvents: Int, maximumBytes: Int) -> Int {
        var index = first
        batch.bytes.withUnsafeBytes { raw in
            while index < batch.count, count < maximumEvents, approximateSize < maximumBytes {
                append(batch.headers[index], raw)
                index += 1
            }
        }
        return index - first
    }

    /// Adds one event whose session id and inline-form body are in `raw` (its batch's bytes).
    private mutating func append(_ header: EventBatch.Header, _ raw: UnsafeRawBufferPointer) {
        let sessionRef = interner.insert(UnsafeRawBufferPointer(rebasing: raw[header.session]), hash: header.sessionHash).reference
        if Int(sessionRef) >= isSessionRef.count || !isSessionRef[Int(sessionRef)] {
            if isSessionRef.count <= Int(sessionRef) {
                isSessionRef.append(contentsOf: repeatElement(false, count: Int(sessionRef) + 1 - isSessionRef.count))
            }
            isSessionRef[Int(sessionRef)] = true
            sessionHashes.append(header.sessionHash)
        }
        let peerIndex: Int
        if let last = peers.last, last == header.peer {
            peerIndex = peers.count - 1
        } else if let found = peers.firstIndex(of: header.peer) {
            peerIndex = found
        } else {
            peers.append(header.peer)
            peerIndex = peers.count - 1
            if !header.peer.relayKey.isNone { hasRelayKeys = true }
        }
        // The interned form is never longer than the inline one: room for it at the end of
        // ``bodies``, trimmed to what was written.
        let bodyLength = header.body.count
        let start = bodies.count
        bodies.append(contentsOf: repeatElement(0, count: bodyLength))
        let written = bodies.withUnsafeMutableBytes { output in
            BodyTranscoder.intern(UnsafeRawBufferPointer(rebasing: raw[header.body]), into: UnsafeMutableRawBufferPointer(rebasing: output[start...])) {
                interner.intern($0)
            }
        }
        bodies.removeLast(bodyLength - written)
        rows.append(
            Row(
                timestamp: header.timestamp, receivedAt: header.receivedAt, sequencePlusOne: header.sequence.map { $0 &+ 1 } ?? 0,
                session: sessionRef, peerIndex: UInt32(peerIndex), bodyLength: UInt32(written), type: header.type.rawValue,
                flags: header.timestampWasMissing ? 1 : 0))
        minTimestamp = min(minTimestamp, header.timestamp)
        maxTimestamp = max(maxTimestamp, header.timestamp)
        minReceived = min(minReceived, header.receivedAt)
        maxReceived = max(maxReceived, header.receivedAt)
        count += 1
    }

    /// The group count a block of `count` events is written with (0: not grouped).
    /// Even, and a multiple of 4 from 4 on: each of the replay index build's 2 or 4 workers
    /// (the sessions whose id hash is its residue) then reads whole groups of every block
    /// (``DecodedBlock/decode(payload:header:groupResidue:modulus:)``).
    func groupCount(forEvents count: Int) -> Int {
        let perGroup = max(1, eventsPerGroup)
        guard count / 2 >= perGroup else { return 0 }
        let groups = min(Self.maximumGroups, count / perGroup)
        return groups >= 4 ? groups & ~3 : 2
    }

    /// Encodes the payload of the events added so far into `payload` (replacing its contents).
    /// - Returns: how the payload is compressed: per frame (one, or a grouped payload's spine and
    ///   then each group: a group without events has no sections and no frame) the sizes of its
    ///   sections, each to be compressed in zstd blocks of its own (see
    ///   ``ZstdCompressor/compress(_:sectionEnds:appendingTo:)``).
    @discardableResult
    mutating func encodePayload(into payload: inout [UInt8]) -> [[Int]] {
        let groups = groupCount(forEvents: count)
        if groups > 0 {
            return encodeGrouped(into: &payload, groups: groups)
        }
        return [encodeSingle(into: &payload)]
    }

    /// - Returns: the section sizes: the string table, the columns, the bodies.
    private mutating func encodeSingle(into payload: inout [UInt8]) -> [Int] {
        payload.removeAll(keepingCapacity: true)
        payload.reserveCapacity(interner.bytes.count + bodies.count + count * 24 + 64)
        payload.append(hasRelayKeys ? Self.relayedPayloadVersion : Self.payloadVersion)
        Varint.append(UInt64(count), to: &payload)
        Self.appendStringTable(ends: interner.ends, bytes: interner.bytes, to: &payload)
        let stringsEnd = payload.count
        for row in rows { payload.append(row.type) }
        for row in rows { Varint.append(UInt64(row.session), to: &payload) }
        // Deltas are per session, indexed by the session's string reference.
        var lastBySession = [Int64](repeating: minTimestamp, count: interner.count)
        var lastSequence = [UInt64](repeating: 0, count: interner.count)
        appendTimesAndSequences(of: rows.indices, lastBySession: &lastBySession, lastSequence: &lastSequence, to: &payload)
        appendReceiveTimes(to: &payload)
        for row in rows { payload.append(row.flags) }
        appendPeers(to: &payload)
        let columnsEnd = payload.count
        payload.append(contentsOf: bodies)
        return [stringsEnd, columnsEnd - stringsEnd, payload.count - columnsEnd]
    }

    // MARK: Grouped payloads

    /// Per group, reused from block to block.
    private var groupTables: [ByteStringTable] = []
    /// Per group and block string reference: the reference in the group's table + 1 (0: none yet).
    private var groupReferences: [UInt32] = []
    private var sessionNumbers: [Int32] = []

    /// Where a grouped block's events go, as ``arrangeGroups(_:_:)`` sorts them.
    private struct GroupLayout {
        /// Each session's group (sessions by number, in order of first appearance).
        var groupOfSession: [Int] = []
        /// Each session's number among its group's sessions.
        var numberInGroup: [Int] = []
        /// The rows in group order, each group session-major (its sessions in order of number,
        /// each one's events in log order: a reader of one session finds them together).
        var order: [Int] = []
        /// The rows in group order, each group's in log order (for its column of session numbers).
        var logOrder: [Int] = []
        /// Where each group starts in both orders, then the row count.
        var groupStarts: [Int] = []
    }

    /// Encodes a grouped payload: the spine, then each group's part; returns each frame's
    /// sections' sizes (the spine's first).
    private mutating func encodeGrouped(into payload: inout [UInt8], groups: Int) -> [[Int]] {
        payload.removeAll(keepingCapacity: true)
        payload.reserveCapacity(interner.bytes.count + bodies.count + count * 24 + 64)
        var layout = GroupLayout()
        var parts = [appendSpine(to: &payload, groups: groups, layout: &layout)]
        arrangeGroups(groups, &layout)
        // Each group: its columns, and its bodies with their strings renumbered into the group's
        // own table.
        var bodyStarts = [Int](repeating: 0, count: rows.count)
        var offset = 0
        for index in rows.indices {
            bodyStarts[index] = offset
            offset += Int(rows[index].bodyLength)
        }
        while groupTables.count < groups { groupTables.append(ByteStringTable()) }
        var groupBodies: [UInt8] = []
        var lastBySession = [Int64](repeating: minTimestamp, count: interner.count)
        var lastSequence = [UInt64](repeating: 0, count: interner.count)
        for group in 0..<groups {
            let range = layout.groupStarts[group]..<layout.groupStarts[group + 1]
            if range.isEmpty {
                parts.append([])
                continue
            }
            parts.append(
                appendGroupPart(
                    group, members: layout.order[range], inLogOrder: layout.logOrder[range], layout: layout, bodyStarts: bodyStarts, bodies: &groupBodies,
                    lastBySession: &lastBySession, lastSequence: &lastSequence, to: &payload))
        }
        return parts
    }

    /// Appends the spine (what every event has in log order) and numbers the sessions in order
    /// of first appearance; returns its sections' sizes.
    private mutating func appendSpine(to payload: inout [UInt8], groups: Int, layout: inout GroupLayout) -> [Int] {
        sessionNumbers.removeAll(keepingCapacity: true)
        sessionNumbers.append(contentsOf: repeatElement(-1, count: interner.count))
        var sessionRefs: [UInt32] = []  // by session number
        for row in rows where sessionNumbers[Int(row.session)] < 0 {
            sessionNumbers[Int(row.session)] = Int32(sessionRefs.count)
            sessionRefs.append(row.session)
        }
        payload.append(hasRelayKeys ? Self.relayedGroupedPayloadVersion : Self.groupedPayloadVersion)
        Varint.append(UInt64(count), to: &payload)
        Varint.append(UInt64(groups), to: &payload)
        Varint.append(UInt64(sessionRefs.count), to: &payload)
        for ref in sessionRefs { Varint.append(UInt64(stringRange(ref).count), to: &payload) }
        for ref in sessionRefs { payload.append(contentsOf: interner.bytes[stringRange(ref)]) }
        // A session's group follows from its id's hash, so it is the same in every block of
        // the same group count (a reader of a few sessions can take whole groups).
        precondition(sessionHashes.count == sessionRefs.count, "sessions were not recorded in order of first appearance")
        layout.groupOfSession.removeAll(keepingCapacity: true)
        for hash in sessionHashes {
            layout.groupOfSession.append(Int(hash % UInt64(groups)))
            payload.append(UInt8(layout.groupOfSession.last!))
        }
        let sessionTableEnd = payload.count
        // Each event's group (a byte) here, and in each group's part its own session numbers (a
        // session's rank among the group's sessions in order of number): a reader of one
        // session scans a byte per event and one group's numbers, not every session number as
        // version 3 made it (2M production-shaped events in 131,072-event blocks: 1.86 MB
        // against 2.01 MB).
        for row in rows { payload.append(UInt8(truncatingIfNeeded: layout.groupOfSession[Int(sessionNumbers[Int(row.session)])])) }
        let sessionsEnd = payload.count
        appendReceiveTimes(to: &payload)
        appendPeers(to: &payload)
        return [sessionTableEnd, sessionsEnd - sessionTableEnd, payload.count - sessionsEnd]
    }

    /// Sorts the rows by (group, session number) and by (group, log order) with counting sorts,
    /// and numbers each session within its group.
    private func arrangeGroups(_ groups: Int, _ layout: inout GroupLayout) {
        let sessionCount = layout.groupOfSession.count
        layout.numberInGroup = [Int](repeating: 0, count: sessionCount)
        var sessionsInGroup = [Int](repeating: 0, count: groups)
        for session in 0..<sessionCount {
            layout.numberInGroup[session] = sessionsInGroup[layout.groupOfSession[session]]
            sessionsInGroup[layout.groupOfSession[session]] += 1
        }

        // The rows in group order, each group session-major (its sessions in order of number,
        // each one's events in log order: a reader of one session finds them together): one
        // counting sort by (group, session number).
        var eventsOfSession = [Int](repeating: 0, count: sessionCount)
        for row in rows { eventsOfSession[Int(sessionNumbers[Int(row.session)])] += 1 }
        var groupStarts = [Int](repeating: 0, count: groups + 1)
        for (session, events) in eventsOfSession.enumerated() { groupStarts[layout.groupOfSession[session] + 1] += events }
        for group in 0..<groups { groupStarts[group + 1] += groupStarts[group] }
        var nextOfSession = [Int](repeating: 0, count: sessionCount)
        var nextOfGroup = groupStarts
        for (session, events) in eventsOfSession.enumerated() {
            nextOfSession[session] = nextOfGroup[layout.groupOfSession[session]]
            nextOfGroup[layout.groupOfSession[session]] += events
        }
        var order = [Int](repeating: 0, count: rows.count)
        // Each group's events in log order, for its column of session numbers.
        var logOrder = [Int](repeating: 0, count: rows.count)
        var nextInLogOrder = groupStarts
        for (index, row) in rows.enumerated() {
            let session = Int(sessionNumbers[Int(row.session)])
            order[nextOfSession[session]] = index
            nextOfSession[session] += 1
            logOrder[nextInLogOrder[layout.groupOfSession[session]]] = index
            nextInLogOrder[layout.groupOfSession[session]] += 1
        }
        layout.order = order
        layout.logOrder = logOrder
        layout.groupStarts = groupStarts
    }

    /// Appends one group's part: its string table, its events' session numbers in log order,
    /// its columns and its bodies renumbered into its own table; returns its sections' sizes.
    private mutating func appendGroupPart(
        _ group: Int, members: ArraySlice<Int>, inLogOrder: ArraySlice<Int>, layout: GroupLayout, bodyStarts: [Int], bodies groupBodies: inout [UInt8],
        lastBySession: inout [Int64], lastSequence: inout [UInt64], to payload: inout [UInt8]
    ) -> [Int] {
        let start = payload.count
        groupTables[group].removeAll()
        groupReferences.removeAll(keepingCapacity: true)
        groupReferences.append(contentsOf: repeatElement(0, count: interner.count))
        groupBodies.removeAll(keepingCapacity: true)
        // The byte length of each session's run of bodies.
        var runLengths: [Int] = []
        // A renumbered reference is at most 5 bytes where the block's took at least one: room
        // for the longest body five times over, filled through a pointer and trimmed after.
        var longest = 0
        for index in members { longest = max(longest, Int(rows[index].bodyLength)) }
        var output = groupBodies.count
        groupBodies.append(contentsOf: repeatElement(0, count: 5 * longest))
        // The group's table and the reference map are moved into the mapping (and back below),
        // so the walk mutates them in place.
        var mapping = GroupReferenceMapping(strings: interner.bytes, ends: interner.ends)
        swap(&mapping.table, &groupTables[group])
        swap(&mapping.references, &groupReferences)
        bodies.withUnsafeBytes { all in
            var previousSession: UInt32?
            for index in members {
                let row = rows[index]
                if row.session != previousSession { runLengths.append(0) }
                previousSession = row.session
                let length = Int(row.bodyLength)
                // Keep room for this body at the end.
                if groupBodies.count - output < 5 * length { groupBodies.append(contentsOf: repeatElement(0, count: 5 * length)) }
                let (read, written) = groupBodies.withUnsafeMutableBytes { out in
                    BodyRenumbering.copy(all.baseAddress! + bodyStarts[index], to: out.baseAddress! + output, mapping: &mapping)
                }
                precondition(read == length, "a stored body the encoder wrote does not parse")
                output += written
                runLengths[runLengths.count - 1] += written
            }
        }
        groupBodies.removeLast(groupBodies.count - output)
        swap(&mapping.table, &groupTables[group])
        swap(&mapping.references, &groupReferences)
        Self.appendStringTable(ends: groupTables[group].ends, bytes: groupTables[group].bytes, to: &payload)
        let tableEnd = payload.count
        for index in inLogOrder {
            Varint.append(UInt64(layout.numberInGroup[Int(sessionNumbers[Int(rows[index].session)])]), to: &payload)
        }
        let sessionsEnd = payload.count
        for index in members { payload.append(rows[index].type) }
        appendTimesAndSequences(of: members, lastBySession: &lastBySession, lastSequence: &lastSequence, to: &payload)
        for index in members { payload.append(rows[index].flags) }
        for length in runLengths { Varint.append(UInt64(length), to: &payload) }
        let columnsEnd = payload.count
        payload.append(contentsOf: groupBodies)
        // The group's session numbers are a section of their own: with the columns after them
        // in one zstd block, the log was 1% larger (2M events: 20.07 MB against 19.84 MB).
        return [tableEnd - start, sessionsEnd - tableEnd, columnsEnd - sessionsEnd, payload.count - columnsEnd].filter { $0 > 0 }
    }

    // MARK: Columns both payload versions write

    /// A string table: the count, each length, then the bytes.
    private static func appendStringTable(ends: [UInt32], bytes: [UInt8], to payload: inout [UInt8]) {
        Varint.append(UInt64(ends.count), to: &payload)
        var start: UInt32 = 0
        for end in ends {
            Varint.append(UInt64(end - start), to: &payload)
            start = end
        }
        payload.append(contentsOf: bytes)
    }

    /// The event-time and sequence columns of `indices` (rows, in the order written): each a
    /// delta from the same session's previous one (`lastBySession`, `lastSequence`, indexed by
    /// the session's string reference).
    private func appendTimesAndSequences(
        of indices: some Collection<Int>, lastBySession: inout [Int64], lastSequence: inout [UInt64], to payload: inout [UInt8]
    ) {
        for index in indices {
            let row = rows[index], session = Int(row.session)
            Varint.append(Varint.zigzag(row.timestamp &- lastBySession[session]), to: &payload)
            lastBySession[session] = row.timestamp
        }
        for index in indices {
            let row = rows[index]
            if row.sequencePlusOne == 0 {
                payload.append(0)
            } else {
                let session = Int(row.session)
                let sequence = row.sequencePlusOne - 1
                Varint.append(Varint.zigzag(Int64(bitPattern: sequence &- lastSequence[session])) &+ 1, to: &payload)
                lastSequence[session] = sequence
            }
        }
    }

    /// The receive-time column, in log order: each a delta from the previous event's.
    private func appendReceiveTimes(to payload: inout [UInt8]) {
        var lastReceived = minReceived
        for row in rows {
            Varint.append(Varint.zigzag(row.receivedAt &- lastReceived), to: &payload)
            lastReceived = row.receivedAt
        }
    }

    /// The peer table, then each event's peer, in log order. Versions 5 and 6 (a block with a
    /// relayed event) follow each peer's pid with its relay key id: length, then bytes (0: none).
    private func appendPeers(to payload: inout [UInt8]) {
        Varint.append(UInt64(peers.count), to: &payload)
        for peer in peers {
            Varint.append(UInt64(peer.uid), to: &payload)
            Varint.append(UInt64(peer.gid), to: &payload)
            Varint.append(Varint.zigzag(Int64(peer.pid)), to: &payload)
            if hasRelayKeys {
                let key = peer.relayKey.bytes
                Varint.append(UInt64(key.count), to: &payload)
                payload.append(contentsOf: key)
            }
        }
        for row in rows { Varint.append(UInt64(row.peerIndex), to: &payload) }
    }

    /// The bytes of block string `ref` in ``interner``'s arena.
    private func stringRange(_ ref: UInt32) -> Range<Int> {
        let end = Int(interner.ends[Int(ref)])
        return (ref == 0 ? 0 : Int(interner.ends[Int(ref) - 1]))..<end
    }
}

/// A block's string references mapped to one group's, its table filled as strings are first met
/// (in the order a reader of the group meets them).
private struct GroupReferenceMapping: BodyRenumbering.Mapping {
    /// The block's string table.
    let strings: [UInt8]
    let ends: [UInt32]
    /// The group's table (swapped in from the encoder for the part, so it is mutated in place).
    var table = ByteStringTable()
    /// Per block reference, the group's reference + 1 (0: not met yet in this group).
    var references: [UInt32] = []

    init(strings: [UInt8], ends: [UInt32]) {
        self.strings = strings
        self.ends = ends
    }

    @inline(__always)
    mutating func map(_ reference: UInt64) -> UInt64 {
        let index = Int(reference)
        let known = references[index]
        if known != 0 { return UInt64(known - 1) }
        let start = index == 0 ? 0 : Int(ends[index - 1])
        let local = strings.withUnsafeBytes { table.intern(UnsafeRawBufferPointer(rebasing: $0[start..<Int(ends[index])])) }
        references[index] = local + 1
        return UInt64(local)
    }
}

/// Copies stored bodies with their string references (strings, numbers' texts, unknown keys)
/// mapped to other numbers, through pointers: the bodies are the encoder's own
/// (``BodyTranscoder/intern(_:into:intern:)`` wrote them), so their framing is trusted, and the
/// caller checks that each ends where its length says.
enum BodyRenumbering {
    /// Maps a reference.
    protocol Mapping {
        mutating func map(_ reference: UInt64) -> UInt64
    }

    /// Copies the body at `input` to `output` (room for five times its length); returns the
    /// bytes read and written.
    @inline(__always)
    static func copy<M: Mapping>(_ input: UnsafeRawPointer, to output: UnsafeMutableRawPointer, mapping: inout M) -> (read: Int, written: Int) {
        var read = 0
        var written = 0
        value(input, &read, output, &written, &mapping)
        return (read, written)
    }

    @inline(__always)
    private static func byte(_ input: UnsafeRawPointer, _ position: inout Int) -> UInt8 {
        let byte = input.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        return byte
    }

    @inline(__always)
    private static func varint(_ input: UnsafeRawPointer, _ position: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = byte(input, &position)
            value |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return value }
            shift += 7
        }
    }

    @inline(__always)
    private static func put(_ value: UInt8, _ output: UnsafeMutableRawPointer, _ written: inout Int) {
        output.storeBytes(of: value, toByteOffset: written, as: UInt8.self)
        written += 1
    }

    private static func value<M: Mapping>(
        _ input: UnsafeRawPointer, _ read: inout Int, _ output: UnsafeMutableRawPointer, _ written: inout Int, _ mapping: inout M
    ) {
        let tag = byte(input, &read)
        put(tag, output, &written)
        switch tag {
        case BodyToken.object.rawValue:
            let count = varint(input, &read)
            written += Varint.write(count, to: output + written)
            for _ in 0..<count {
                let key = byte(input, &read)
                put(key, output, &written)
                if key == BodyToken.unknownKey { written += Varint.write(mapping.map(varint(input, &read)), to: output + written) }
                value(input, &read, output, &written, &mapping)
            }
        case BodyToken.array.rawValue:
            let count = varint(input, &read)
            written += Varint.write(count, to: output + written)
            for _ in 0..<count { value(input, &read, output, &written, &mapping) }
        case BodyToken.string.rawValue, BodyToken.number.rawValue:
            written += Varint.write(mapping.map(varint(input, &read)), to: output + written)
        case BodyToken.integer.rawValue:
            while true {
                let next = byte(input, &read)
                put(next, output, &written)
                if next < 0x80 { break }
            }
        default:
            precondition(
                tag == BodyToken.true.rawValue || tag == BodyToken.false.rawValue || tag == BodyToken.null.rawValue, "a stored body the encoder wrote has tag \(tag)")
        }
    }
}
