import NavlogEvents
import NavlogReplay
import NavlogStore

/// A session's events that an index worker holds as its pass meets them, so that re-deriving
/// the session (E4, E7) needs no second read of the log.
///
/// Each event's interned body is kept as the block had it, and its string references point
/// into a copy of its block's string table that the session's events in that block share
/// (``BlockStrings``): holding an event is a copy of its bytes, with no walk over its tokens
/// and no string interned (copying bodies into a table of the session's own, as
/// ``CopiedSessionEvents`` does, was 4.5% of a build for the sessions held).
struct HeldSessionEvents {
    /// A copy of one block group's string table, shared by the held events that refer to it.
    /// Its bytes are allocated once and read through a plain view (a replay reads one table
    /// per event: two closures over arrays per event cost more than the copy).
    final class BlockStrings {
        private let bytes: UnsafeMutableRawBufferPointer
        private let ends: UnsafeMutableBufferPointer<UInt32>

        /// A copy of `table`.
        init(_ table: StringTable) {
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: table.bytes.count, alignment: 1)
            bytes.copyMemory(from: table.bytes)
            ends = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: table.ends.count)
            _ = ends.initialize(from: table.ends)
        }

        deinit {
            bytes.deallocate()
            ends.deallocate()
        }

        /// A view of the copy, valid while this object lives.
        var table: StringTable { StringTable(bytes: UnsafeRawBufferPointer(bytes), ends: UnsafeBufferPointer(ends)) }

        /// About what it takes in memory.
        var size: Int { bytes.count + 4 * ends.count + 64 }
    }

    /// One held event.
    struct Event {
        var type: EventType
        var sequence: UInt64?
        var timestamp: Int64
        var lsn: UInt64
        /// Where its body's tokens are in ``HeldSessionEvents/tokens``.
        var body: Range<Int>
        /// Its string table, in ``HeldSessionEvents/tables``.
        var table: Int32
        /// Whether the log stored it after an event of the session with a higher `seq`.
        var late = false
    }

    private(set) var events: [Event] = []
    private var tokens: [UInt8] = []
    private var tables: [BlockStrings] = []

    /// About what the events take in memory, their shared string tables left out.
    var size: Int { tokens.count + events.count * MemoryLayout<Event>.stride }

    /// What holding one more event with a body of `bytes` bytes adds to ``size``.
    static func size(ofEventWithBody bytes: Int) -> Int { bytes + MemoryLayout<Event>.stride }

    /// Holds the event `header` describes, with LSN `lsn`, body `body` and its block's string
    /// table `strings` (a copy the caller makes once per block and group).
    mutating func append(_ header: DecodedBlock.EventHeader, lsn: UInt64, body: UnsafeRawBufferPointer, strings: BlockStrings) {
        if tables.last !== strings { tables.append(strings) }
        let start = tokens.count
        tokens.append(contentsOf: body)
        events.append(
            Event(
                type: header.type, sequence: header.sequence, timestamp: header.timestamp, lsn: lsn, body: start..<tokens.count,
                table: Int32(tables.count - 1)))
    }

    /// Puts the events in the order E4 replays them (see ``SessionEventOrder``) and marks the late ones.
    /// - Returns: whether the order differs from log order.
    @discardableResult
    mutating func sortForReplay() -> Bool {
        SessionEventOrder.sortForReplay(&events, sequence: \.sequence, late: \.late)
    }

    /// Calls `body` with each event, in the current order, and a reader of its fields.
    func forEach(_ body: (Event, StoredBody) throws -> Void) rethrows {
        try tokens.withUnsafeBytes { raw in
            // `tables` keeps every copy alive for the whole loop.
            for event in events {
                try body(event, StoredBody(tokens: UnsafeRawBufferPointer(rebasing: raw[event.body]), strings: tables[Int(event.table)].table))
            }
        }
    }
}

/// A session's events copied out of the log, that a re-derivation (``ReplayIndex``) sorts
/// into `seq` order and replays: held by the pass (``HeldSessionEvents``) or read again
/// (``CopiedSessionEvents``).
protocol SessionEventsForReplay {
    /// Puts the events in the order E4 replays them and marks the late ones; whether the
    /// order differs from log order.
    mutating func sortForReplay() -> Bool
    /// Calls `body` with each event, in the current order, as a replay applies it, and
    /// whether it is late (valid only during the call).
    func forEachReplayEvent(_ body: (ReplayEvent, _ late: Bool) throws -> Void) rethrows
}

extension HeldSessionEvents: SessionEventsForReplay {
    func forEachReplayEvent(_ body: (ReplayEvent, _ late: Bool) throws -> Void) rethrows {
        try forEach { event, fields in
            try body(ReplayEvent(type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, body: fields), event.late)
        }
    }
}

extension CopiedSessionEvents: SessionEventsForReplay {
    func forEachReplayEvent(_ body: (ReplayEvent, _ late: Bool) throws -> Void) rethrows {
        try forEach { event, fields in
            try body(ReplayEvent(type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, body: fields), event.late)
        }
    }
}
