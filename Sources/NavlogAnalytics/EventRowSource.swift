public import NavlogEvents
public import NavlogStore

/// The `events` table's rows, read from the log when they are asked for rather than made up
/// front: one row per stored event in log order, with its session's tags, restricted by a filter.
///
/// A scanner that knows the sessions (``JournalScanner`` from the focus journals,
/// ``DerivedTableScanner`` from its replay) makes one and hands it to its sink
/// (``DerivedTableSink/events(_:)``). A sink may push every row at once (``forEach(_:)``) or,
/// as `navlog query sql`'s `events` virtual table does, pull them one at a time through a
/// ``Cursor``: then no event row is ever held, however big the log.
public final class EventRowSource {
    /// The log.
    public let reader: LogReader
    /// Which sessions and times.
    public let filter: AnalyticsFilter
    /// The tags of the sessions the scanner met, and whether the filter keeps them.
    let known: [String: (tags: SessionTags, included: Bool)]

    /// A source over `reader`; `sessions` gives the tags of the sessions the scan met and
    /// whether the filter keeps each. A session it does not name (no record of its own) is
    /// untagged, kept when the filter keeps untagged sessions (as a replay sees it).
    public init(reader: LogReader, filter: AnalyticsFilter, sessions: [String: (tags: SessionTags, included: Bool)]) {
        self.reader = reader
        self.filter = filter
        self.known = sessions
    }

    /// Tags and inclusion of session `id`.
    func session(_ id: String) -> (tags: SessionTags, included: Bool) {
        if let found = known[id] { return found }
        let filter = filter
        let untagged =
            (filter.session.map { $0 == id } ?? true) && (filter.app.map { $0.isEmpty } ?? true) && (filter.version.map { $0.isEmpty } ?? true)
            && (filter.idiom.map { $0.isEmpty } ?? true)
        return (SessionTags(), untagged)
    }

    /// Calls `body` with every row, in log order.
    /// - Throws: ``StoreError`` for I/O failures (damaged blocks are skipped and recorded in the reader's damage).
    public func forEach(_ body: (EventRow) throws -> Void) throws {
        var cursor = Cursor(self)
        while try cursor.next() { try body(cursor.row) }
    }

    /// Rows one at a time: ``next()`` moves to the next row, the accessors read the current one.
    /// Holds one decoded block and, per session met, its id and tags. Keep it in one place
    /// and mutate it there: a copy per row would cost more than the row.
    public struct Cursor {
        let source: EventRowSource
        /// The blocks to read, as (segment, block) in log order.
        private var blocks: [(segment: Int, block: Int)] = []
        private var nextBlock = 0
        private var block = DecodedBlock()
        private var position = -1
        /// Per string reference of the current block, the session slot it maps to (-1: not looked up).
        private var blockSlots: [Int32] = []
        /// Sessions met so far, by id bytes.
        private var slotTable = ByteStringTable()
        private var slots: [(id: String, tags: SessionTags)] = []
        /// Per slot, whether the filter keeps the session (apart: read per row, without a copy of the tags).
        private var included: [Bool] = []
        /// The current row's session slot.
        private var slot = 0

        /// A cursor before the first row.
        public init(_ source: EventRowSource) {
            self.source = source
            // The blocks a scan of the filter reads (the session's postings, the time window's
            // block bounds); its rows are still checked one by one.
            let filter = source.filter
            blocks = source.reader.blocks(matching: LogQuery(session: filter.session, since: filter.since, until: filter.until))
        }

        /// Moves to the next row of the filter.
        /// - Returns: false past the last one.
        /// - Throws: ``StoreError`` for I/O failures.
        public mutating func next() throws(StoreError) -> Bool {
            while true {
                position += 1
                while position >= block.count {
                    guard nextBlock < blocks.count else { return false }
                    let (segment, number) = blocks[nextBlock]
                    nextBlock += 1
                    position = 0
                    // Rows have no body column: the bodies are not even located.
                    if try !source.reader.readBlock(segment: segment, block: number, into: &block, locatingBodies: false) {
                        block = DecodedBlock()
                        continue
                    }
                    let strings = block.withStrings { $0.count }
                    blockSlots.removeAll(keepingCapacity: true)
                    blockSlots.append(contentsOf: repeatElement(-1, count: strings))
                }
                guard source.filter.contains(block.timestamps[position]) else { continue }
                let reference = Int(block.sessions[position])
                if blockSlots[reference] < 0 {
                    blockSlots[reference] = Int32(lookUp())
                }
                slot = Int(blockSlots[reference])
                if included[slot] { return true }
            }
        }

        /// The slot of the current event's session, added when first met.
        private mutating func lookUp() -> Int {
            let position = position
            return block.withSession(position) { session in
                let (reference, inserted) = slotTable.insert(session)
                if inserted {
                    let id = String(decoding: session, as: UTF8.self)
                    let (tags, kept) = source.session(id)
                    slots.append((id, tags))
                    included.append(kept)
                }
                return Int(reference)
            }
        }

        /// The current row's session, as a small number (the order in which the cursor met them).
        public var sessionSlot: Int { slot }

        /// The id and tags of session `slot` (a ``sessionSlot`` this cursor gave).
        public func session(ofSlot slot: Int) -> (id: String, tags: SessionTags) { (slots[slot].id, slots[slot].tags) }

        /// The current row's LSN.
        public var lsn: UInt64 { block.lsn(position) }
        /// The current row's session id.
        public var session: String { slots[slot].id }
        /// The current row's session tags.
        public var tags: SessionTags { slots[slot].tags }
        /// The current row's `seq`, if it has one.
        public var sequence: UInt64? { block.sequence(position) }
        /// The current row's device time, µs since the epoch.
        public var timestamp: Int64 { block.timestamps[position] }
        /// When navlog received the current row's event, µs since the epoch.
        public var receivedAt: Int64 { block.receiveTimes[position] }
        /// The current row's event type.
        public var type: EventType { block.types[position] }
        /// The key a trusted relay said sent the current row's event, if one did.
        public var key: String? { block.peers[Int(block.peerIndexes[position])].relayKey.name }

        /// The current row.
        public var row: EventRow {
            EventRow(lsn: lsn, session: session, tags: tags, sequence: sequence, timestamp: timestamp, receivedAt: receivedAt, type: type.name, key: key)
        }
    }
}
