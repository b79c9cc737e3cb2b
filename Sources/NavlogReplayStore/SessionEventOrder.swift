import NavlogEvents
import NavlogStore

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
    private(set) var events: [[Location]]

    /// Locates every stored event of `sessions` in one pass over the blocks that may hold any of
    /// them, in segments `0...lastSegment` (all when nil). Damaged blocks are skipped (the log
    /// reader records them).
    /// - Throws: ``StoreError`` for I/O failures.
    init(sessions: [String], log: LogReader, throughSegment lastSegment: Int? = nil, decoded: inout DecodedBlock) throws {
        events = Array(repeating: [], count: sessions.count)
        let wanted = sessions.map { Array($0.utf8) }
        let segmentCount = min(log.segments.count, (lastSegment ?? Int.max - 1) + 1)
        for segment in 0..<segmentCount {
            var blocks = Set<Int>()
            for session in sessions { blocks.formUnion(log.blocks(ofSegment: segment, mayHoldSession: session)) }
            for block in blocks.sorted() {
                guard try log.readBlock(segment: segment, block: block, into: &decoded) else { continue }
                // Which of the wanted sessions this block's string table holds, by string number.
                var sessionOfString: [Int: Int] = [:]
                decoded.withStrings { strings in
                    for (number, id) in wanted.enumerated() {
                        id.withUnsafeBytes { bytes in
                            if let found = (0..<strings.count).first(where: { strings[$0].map { $0.elementsEqual(bytes) } ?? false }) {
                                sessionOfString[found] = number
                            }
                        }
                    }
                }
                guard !sessionOfString.isEmpty else { continue }
                for position in 0..<decoded.count {
                    guard let number = sessionOfString[Int(decoded.sessions[position])] else { continue }
                    events[number].append(
                        Location(sequence: decoded.sequence(position), segment: Int32(segment), block: Int32(block), position: Int32(position)))
                }
            }
        }
    }

    /// Puts `events` in the order E4 replays them and marks the late ones.
    /// - Returns: whether the order differs from log order.
    @discardableResult
    static func sortForReplay(_ events: inout [Location]) -> Bool {
        var highest: UInt64?
        var reordered = false
        for index in events.indices {
            guard let sequence = events[index].sequence else { return false }
            if let top = highest, sequence < top {
                events[index].late = true
                reordered = true
            }
            highest = max(highest ?? sequence, sequence)
        }
        guard reordered else { return false }
        // Stable: equal seqs keep log order.
        events = events.enumerated().sorted { ($0.element.sequence!, $0.offset) < ($1.element.sequence!, $1.offset) }.map(\.element)
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
