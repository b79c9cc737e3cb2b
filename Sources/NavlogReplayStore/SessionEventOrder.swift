public import NavlogEvents
public import NavlogReplay
public import NavlogStore

/// The order rule E4 replays a session's events in: by `seq`, however the log stored them.
///
/// Events reach the log in arrival order: a reconnect racing in-flight batches, or an app and
/// its extension sending one session over two connections, store seq 5 before seq 4. Replays
/// (``SessionSeeker``) and the replay index's re-derivation of a session that received a late
/// event (``ReplayIndex``) locate the session's events with this type and apply them sorted.
///
/// A session with an event that has no `seq` keeps log order: without numbers there is no other
/// order to trust. The sort is stable, so two events with the same `seq` (true duplicates, as
/// in two logs merged) stay in log order and the replayer reports the second (A18).
struct SessionEventOrder {
    /// Where one stored event is.
    struct Location {
        /// Its `seq`, when it has one.
        var sequence: UInt64?
        /// The segment (index into the log's segments), block and position in the block.
        var segment: Int32
        var block: Int32
        var position: Int32
        /// Whether the log stored it after an event of the session with a higher `seq`.
        var late = false
    }

    /// The events of each session asked for, in log order until ``sortForReplay(_:)``.
    private(set) var events: [[Location]] = []

    /// Locates every stored event of `sessions` in one pass over the blocks that may hold any of
    /// them, in segments `0...lastSegment` (all when nil). Damaged blocks are skipped (the log
    /// reader records them).
    /// - Throws: ``StoreError`` for I/O failures.
    init(sessions: [String], log: LogReader, throughSegment lastSegment: Int? = nil, decoded: inout DecodedBlock) throws {
        var events = Array(repeating: [Location](), count: sessions.count)
        try Self.forEachEvent(of: sessions, log: log, throughSegment: lastSegment, decoded: &decoded) { number, block, position in
            events[number].append(
                Location(sequence: block.decoded.sequence(position), segment: Int32(block.segment), block: Int32(block.block), position: Int32(position)))
        }
        self.events = events
    }

    /// Calls `body` with every stored event of `sessions` (the number of its session in
    /// `sessions`, its block, its position), in log order, reading once each block that may
    /// hold any of them in segments `0...lastSegment` (all when nil).
    ///
    /// `read` reads a block (segment, block, whether all of it) instead of `log`: an index
    /// worker's reader, which decodes only its groups of a grouped block and keeps its buffers.
    static func forEachEvent(
        of sessions: [String], log: LogReader, throughSegment lastSegment: Int?, decoded: inout DecodedBlock, read: BlockRead? = nil,
        _ body: (Int, (segment: Int, block: Int, decoded: DecodedBlock), Int) throws -> Void
    ) throws {
        // The wanted ids, numbered as in `sessions` (ids are distinct).
        var wanted = ByteStringTable()
        for session in sessions { _ = withUTF8(session) { wanted.insert($0) } }
        let segmentCount = min(log.segments.count, (lastSegment ?? Int.max - 1) + 1)
        for segment in 0..<segmentCount {
            var blocks = Set<Int>()
            for session in sessions { blocks.formUnion(log.blocks(ofSegment: segment, mayHoldSession: session)) }
            for block in blocks.sorted() {
                func readBlock(whole: Bool) throws -> Bool {
                    if let read { return try read(segment, block, whole, &decoded) }
                    return try log.readBlock(segment: segment, block: block, into: &decoded)
                }
                guard try readBlock(whole: false) else { continue }
                // Which of the wanted sessions this block's string table holds, by string number.
                var sessionOfString: [Int: Int] = [:]
                var regrouped = false
                decoded.withStrings { strings in
                    for reference in 0..<strings.count {
                        guard let text = strings[reference], let number = wanted.reference(of: text) else { continue }
                        sessionOfString[reference] = Int(number)
                        // A block another writer grouped otherwise: a wanted session in a group not read.
                        if !decoded.isSessionDecoded(reference) { regrouped = true }
                    }
                }
                if regrouped, !(try readBlock(whole: true)) { continue }
                guard !sessionOfString.isEmpty else { continue }
                let current = (segment: segment, block: block, decoded: decoded)
                for position in 0..<decoded.count {
                    guard let number = sessionOfString[Int(decoded.sessions[position])] else { continue }
                    try body(number, current, position)
                }
            }
        }
    }

    /// Reads block `block` of segment `segment` (all of it when the `Bool` says so) into the
    /// block given; false when it is damaged or gone.
    typealias BlockRead = (_ segment: Int, _ block: Int, _ whole: Bool, _ decoded: inout DecodedBlock) throws -> Bool

    /// Puts `events` in the order E4 replays them and marks the late ones.
    /// - Returns: whether the order differs from log order.
    @discardableResult
    static func sortForReplay(_ events: inout [Location]) -> Bool {
        sortForReplay(&events, sequence: \.sequence, late: \.late)
    }

    /// Sorts `items` (in log order) by `seq`, stably, and sets `late` on those the log stored
    /// after a higher `seq`; leaves them as they are when one has no `seq` or none is late.
    /// - Returns: whether the order changed.
    static func sortForReplay<Item>(_ items: inout [Item], sequence: KeyPath<Item, UInt64?>, late: WritableKeyPath<Item, Bool>) -> Bool {
        var highest: UInt64?
        var reordered = false
        for index in items.indices {
            guard let value = items[index][keyPath: sequence] else { return false }
            if let top = highest, value < top {
                items[index][keyPath: late] = true
                reordered = true
            }
            highest = max(highest ?? value, value)
        }
        guard reordered else { return false }
        // Stable: equal seqs keep log order.
        items = items.enumerated().sorted { ($0.element[keyPath: sequence]!, $0.offset) < ($1.element[keyPath: sequence]!, $1.offset) }.map(\.element)
        return true
    }
}

/// The last few decoded blocks, so that following one session's events in `seq` order (which
/// goes back a block now and then, where a late event was stored) rarely decodes a block twice.
struct DecodedBlockCache {
    private var entries: [(segment: Int32, block: Int32, decoded: DecodedBlock)] = []
    /// How many blocks are kept (each is one block's decompressed payload and columns).
    let capacity: Int

    init(capacity: Int = 6) {
        self.capacity = capacity
    }

    /// Calls `body` with block `block` of segment `segment`, decoded (from the cache when it is
    /// there); nil when the block is damaged.
    mutating func with<R>(segment: Int32, block: Int32, log: LogReader, _ body: (borrowing DecodedBlock) throws -> R) throws -> R? {
        if let hit = entries.firstIndex(where: { $0.segment == segment && $0.block == block }) {
            let entry = entries.remove(at: hit)
            entries.append(entry)
            return try body(entry.decoded)
        }
        var decoded = entries.count >= capacity ? entries.removeFirst().decoded : DecodedBlock()
        guard try log.readBlock(segment: Int(segment), block: Int(block), into: &decoded) else { return nil }
        entries.append((segment, block, decoded))
        return try body(entries[entries.count - 1].decoded)
    }
}

/// One session's events copied out of their blocks (bodies re-interned into a table of the
/// session's own strings), so that replaying them in `seq` order reads each block once however
/// scattered they were: the replay index re-derives many sessions at once with these.
struct CopiedSessionEvents {
    /// One copied event.
    struct Event {
        var type: EventType
        var sequence: UInt64?
        var timestamp: Int64
        var lsn: UInt64
        /// When navlogd received it (µs).
        var receivedAt: Int64
        /// The key a trusted relay said sent it.
        var relayKey = RelayKey.none
        /// Where its body's tokens are in ``CopiedSessionEvents/tokens``.
        var body: Range<Int>
        /// Whether the log stored it after an event of the session with a higher `seq`.
        var late = false
    }

    private(set) var events: [Event] = []
    private var tokens: [UInt8] = []
    private var strings = ByteStringTable()

    /// Copies event `position` of `block`; false (nothing copied) when its body is malformed.
    mutating func append(_ block: borrowing DecodedBlock, _ position: Int) -> Bool {
        let start = tokens.count
        let copied = block.withEvent(position) { table, _, body -> Bool in
            var reader = ByteReader(body)
            return Self.copyValue(&reader, table, &tokens, &strings, depth: 0) && reader.isAtEnd
        }
        guard copied else {
            tokens.removeSubrange(start...)
            return false
        }
        events.append(
            Event(
                type: block.types[position], sequence: block.sequence(position), timestamp: block.timestamps[position], lsn: block.lsn(position),
                receivedAt: block.receiveTimesAndPeersDecoded ? block.receiveTimes[position] : 0,
                relayKey: block.receiveTimesAndPeersDecoded ? block.peers[Int(block.peerIndexes[position])].relayKey : .none, body: start..<tokens.count))
        return true
    }

    /// Copies an event whose type, `seq`, time and LSN are given and whose body is read with
    /// `body`, without its receive time and relay key (a replay reads neither); false
    /// (nothing copied) when its body is malformed.
    mutating func append(type: EventType, sequence: UInt64?, timestamp: Int64, lsn: UInt64, body: StoredBody) -> Bool {
        let start = tokens.count
        var reader = ByteReader(body.tokens)
        guard Self.copyValue(&reader, body.strings, &tokens, &strings, depth: 0), reader.isAtEnd else {
            tokens.removeSubrange(start...)
            return false
        }
        events.append(Event(type: type, sequence: sequence, timestamp: timestamp, lsn: lsn, receivedAt: 0, body: start..<tokens.count))
        return true
    }

    /// About what the copies take in memory.
    var size: Int { tokens.count + events.count * MemoryLayout<Event>.stride + strings.bytes.count }

    /// Puts the events in the order E4 replays them (see ``SessionEventOrder``) and marks the late ones.
    /// - Returns: whether the order differs from log order.
    @discardableResult
    mutating func sortForReplay() -> Bool {
        SessionEventOrder.sortForReplay(&events, sequence: \.sequence, late: \.late)
    }

    /// Calls `body` with each event, in the current order, and a reader of its fields.
    func forEach(_ body: (Event, StoredBody) throws -> Void) rethrows {
        try tokens.withUnsafeBytes { raw in
            try strings.bytes.withUnsafeBytes { bytes in
                try strings.ends.withUnsafeBufferPointer { ends in
                    let table = StringTable(bytes: bytes, ends: ends)
                    for event in events {
                        try body(event, StoredBody(tokens: UnsafeRawBufferPointer(rebasing: raw[event.body]), strings: table))
                    }
                }
            }
        }
    }

    /// Copies one interned value, its string references renumbered into `strings` (no deeper
    /// than the parser lets a line nest: 256).
    private static func copyValue(
        _ reader: inout ByteReader, _ table: StringTable, _ output: inout [UInt8], _ strings: inout ByteStringTable, depth: Int
    ) -> Bool {
        guard depth < 256, let tag = reader.readByte(), let token = BodyToken(rawValue: tag) else { return false }
        output.append(tag)
        func reference() -> Bool {
            guard let ref = reader.readVarint(), let text = table[Int(truncatingIfNeeded: ref)] else { return false }
            Varint.append(UInt64(strings.intern(text)), to: &output)
            return true
        }
        switch token {
        case .object, .array:
            guard let count = reader.readCount(limit: reader.remaining) else { return false }
            Varint.append(UInt64(count), to: &output)
            for _ in 0..<count {
                if token == .object {
                    guard let key = reader.readByte() else { return false }
                    output.append(key)
                    if key == BodyToken.unknownKey, !reference() { return false }
                }
                guard copyValue(&reader, table, &output, &strings, depth: depth + 1) else { return false }
            }
            return true
        case .string, .number:
            return reference()
        case .integer:
            guard let raw = reader.readVarint() else { return false }
            Varint.append(raw, to: &output)
            return true
        case .true, .false, .null:
            return true
        }
    }
}

extension SessionEventOrder {
    /// Copies every stored event of `sessions` in one pass over the blocks that may hold any of
    /// them, in segments `0...lastSegment`; damaged blocks and malformed bodies are skipped (the
    /// log reader records damaged blocks).
    /// - Throws: ``StoreError`` for I/O failures.
    static func copyEvents(
        of sessions: [String], log: LogReader, throughSegment lastSegment: Int?, decoded: inout DecodedBlock, read: BlockRead? = nil
    ) throws
        -> [CopiedSessionEvents]
    {
        var copies = Array(repeating: CopiedSessionEvents(), count: sessions.count)
        try forEachEvent(of: sessions, log: log, throughSegment: lastSegment, decoded: &decoded, read: read) { number, block, position in
            _ = copies[number].append(block.decoded, position)
        }
        return copies
    }
}

/// Replays sessions whose events the log stored out of `seq` order, in `seq` order (rule E4),
/// for readers that go through the log without the replay index (analytics' fallback).
public enum SequenceOrderedSessions {
    /// One event, as the sorted replay hands it over.
    public struct Event {
        /// Its type, `seq`, time (µs), LSN and receive time (µs).
        public var type: EventType
        public var sequence: UInt64?
        public var timestamp: Int64
        public var lsn: UInt64
        public var receivedAt: Int64
        /// Whether the log stored it after an event of its session with a higher `seq`.
        public var late: Bool
        /// The key a trusted relay said sent it (``RelayKey/none`` when none did).
        public var relayKey = RelayKey.none
    }

    /// Calls `body` with every event of each of `sessions`, session after session, each in `seq`
    /// order (the order E4 replays: see ``SessionEventOrder``), with a reader of its fields
    /// valid during the call. The events are copied out of their blocks a group of sessions at
    /// a time, each group holding about `eventsPerPass` events (by `eventCounts`, the number
    /// of events of each session), with one pass over the blocks per group. Events above
    /// `throughLSN` are left out.
    ///
    /// With `knowing`, for sessions one of whose navigation-only gestures a later event proves
    /// cancelled (E7): before a session's events, it is told the positions of the gestures its
    /// events prove cancelled (``SessionReplayer/replayingWithHindsight(_:)``), to start the
    /// replay that `body` makes knowing them.
    /// - Throws: ``StoreError`` for I/O failures (damaged blocks are skipped), what `body` throws.
    public static func forEachEvent(
        of sessions: [String], eventCounts: [Int], log: LogReader, eventsPerPass: Int = 1 << 20, throughLSN: UInt64 = .max,
        knowing: ((_ session: Int, _ cancelledGestures: [SessionReplayer.CancelledGesture]) throws -> Void)? = nil,
        _ body: (_ session: Int, _ event: Event, _ fields: StoredBody) throws -> Void
    ) throws {
        var decoded = DecodedBlock()
        var start = 0
        while start < sessions.count {
            var end = start
            var events = 0
            while end < sessions.count && (end == start || events + eventCounts[end] <= eventsPerPass) {
                events += eventCounts[end]
                end += 1
            }
            let copies = try SessionEventOrder.copyEvents(of: Array(sessions[start..<end]), log: log, throughSegment: nil, decoded: &decoded)
            for (offset, copy) in copies.enumerated() {
                var sorted = copy
                sorted.sortForReplay()
                if let knowing {
                    let known = SessionReplayer.replayingWithHindsight { state in
                        sorted.forEach { event, fields in
                            guard event.lsn <= throughLSN else { return }
                            if event.late { state.noteLateEvent() }
                            state.apply(ReplayEvent(type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, body: fields))
                        }
                    }
                    try knowing(start + offset, known.gesturesCancelledInHindsight)
                }
                try sorted.forEach { event, fields in
                    guard event.lsn <= throughLSN else { return }
                    try body(
                        start + offset,
                        Event(
                            type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, receivedAt: event.receivedAt, late: event.late,
                            relayKey: event.relayKey),
                        fields)
                }
            }
            start = end
        }
    }
}
