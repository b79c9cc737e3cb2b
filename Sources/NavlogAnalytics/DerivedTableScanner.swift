public import NavlogEvents
import NavlogReplay
import NavlogReplayStore
public import NavlogStore

/// Replays every session of a log once and hands the derived rows to a sink (``DerivedTableSink``):
/// screen visits and transitions from the engine's focus after each event, dwell from F4,
/// anomalies, exits, one row per session.
public struct DerivedTableScanner {
    /// The log.
    public let reader: LogReader
    /// Which sessions and times.
    public let filter: AnalyticsFilter
    /// Events read by the last scan.
    public private(set) var eventsRead = 0
    /// Only these sessions are replayed (all when nil): an incremental export replays the
    /// sessions that became complete since its last run.
    public var sessions: Set<String>?
    /// Events after this LSN are not read (all when nil), so that a rerun of an incremental
    /// export's run sees the same events however much the log has grown since.
    public var throughLSN: UInt64?

    /// A scanner of `reader` restricted by `filter`.
    public init(reader: LogReader, filter: AnalyticsFilter = AnalyticsFilter()) {
        self.reader = reader
        self.filter = filter
    }

    /// One live session. A class, so that the per-event work mutates it in place (a struct
    /// taken out of the array and put back copies every array it holds, per event).
    private final class Live {
        var replayer = SessionReplayer()
        /// What the scan knows of the session: its tags, whether the filter keeps it, its screens.
        var rows: DerivedRowMaker.Session
        /// Anomalies of the replayer given as rows so far.
        var anomaliesSeen = 0
        /// E7: rows made since a navigation-only gesture that a later event may still prove
        /// cancelled, held back until it cannot (then given) or until it does (then dropped:
        /// the session is replayed again knowing it, after the pass).
        var held: [DerivedRowMaker.Row] = []
        var holding = false
        /// The session's position (0-based) of the first event whose rows were held: a replay
        /// again gives the rows from there on (those before are the same in both replays).
        var heldFrom = 0
        /// Whether an event proved a gesture cancelled: the rest of its events are not replayed
        /// in this pass (their `events` rows are still given).
        var replayAgain = false
        /// Events of the session handed to the scan.
        var eventsSeen = 0
        /// Whether this is that replay again: it knows every gesture its events prove cancelled,
        /// and gives only the rows of events from ``heldFrom`` on.
        var final = false

        /// A session known so far by its id.
        init(id: String, filter: AnalyticsFilter) {
            rows = DerivedRowMaker.Session(id: id, filter: filter)
        }
    }

    /// Gives `row` of `state`'s session to `sink`, or holds it (E7); a replay again gives only
    /// the rows of events from where the first replay began to hold them. A session row is
    /// given at once: it is made at the session's end, when nothing is held any more.
    private static func put<Sink: DerivedTableSink>(_ row: DerivedRowMaker.Row, of state: Live, into sink: inout Sink) {
        if case .session(let session) = row { return sink.session(session) }
        if state.holding { return state.held.append(row) }
        if state.final, state.replayer.eventCount - 1 < state.heldFrom { return }
        sink.take(row)
    }

    /// Gives the rows `state` held (E7: no later event can prove its gestures cancelled now).
    private static func release<Sink: DerivedTableSink>(_ state: Live, into sink: inout Sink) {
        state.holding = false
        for row in state.held { put(row, of: state, into: &sink) }
        state.held.removeAll()
    }

    /// Reads the log and calls `sink` with every row; `progress` is told how many events were
    /// read, now and then.
    /// - Throws: ``StoreError`` for I/O failures (damaged blocks are skipped: see ``LogReader/damage``).
    public mutating func scan<Sink: DerivedTableSink>(into sink: inout Sink, progress: ((Int) -> Void)? = nil) throws {
        // E4: sessions the log stored out of seq order are left out of the pass in log order
        // and replayed after it, sorted (a first pass finds them: without the replay index,
        // nothing else knows).
        let late = try sessionsStoredOutOfOrder()
        var pass = Pass<Sink>(filter: filter, wantsEvents: sink.wantsEvents && !sink.takesEventSource, takesEventSource: sink.takesEventSource)
        let through = throughLSN ?? .max
        let read = try pass.readInLogOrder(
            reader, leavingOut: late.table, lateCount: late.ids.count, sessions: sessions, through: through, progress: progress, into: &sink)
        try pass.replayLate(late.ids, counts: late.counts, reader, through: through, into: &sink)
        try pass.replayAgain(reader, through: through, into: &sink)
        pass.finishOpenSessions(into: &sink)
        if pass.takesEventSource { try sink.events(EventRowSource(reader: reader, filter: filter, sessions: pass.known)) }
        eventsRead = read
        progress?(read)
    }

    /// One scan: the sessions being replayed; each step hands their rows to the scan's sink.
    private struct Pass<Sink: DerivedTableSink> {
        let filter: AnalyticsFilter
        let maker: DerivedRowMaker
        var sessions = ByteStringTable()
        var live: [Live?] = []
        var names: [String] = []
        /// Per slot: whether the session is left out (not in ``DerivedTableScanner/sessions``).
        var skipped: [Bool] = []
        /// A sink that takes the events as a source reads them after the scan, with each
        /// session's tags as the scan ends knowing them (as from the journals).
        let wantsEvents: Bool
        let takesEventSource: Bool
        var known: [String: (tags: SessionTags, included: Bool)] = [:]
        /// E7: sessions whose events proved a gesture cancelled, replayed again after the pass.
        var replayedAgain: [Int] = []

        init(filter: AnalyticsFilter, wantsEvents: Bool, takesEventSource: Bool) {
            self.filter = filter
            maker = DerivedRowMaker(filter: filter)
            self.wantsEvents = wantsEvents
            self.takesEventSource = takesEventSource
        }

        /// The pass over the log in log order (sessions stored out of `seq` order left out);
        /// returns how many events it read.
        mutating func readInLogOrder(
            _ reader: LogReader, leavingOut late: ByteStringTable, lateCount: Int, sessions wanted: Set<String>?, through: UInt64, progress: ((Int) -> Void)?,
            into sink: inout Sink
        ) throws -> Int {
            var read = 0
            try reader.scan(LogQuery(session: filter.session)) { block, index in
                guard block.lsn(index) <= through else { return false }
                read += 1
                if read & 0xFFFF == 0 { progress?(read) }
                block.withEvent(index) { strings, sessionBytes, tokens in
                    if lateCount > 0, late.reference(of: sessionBytes) != nil { return }
                    let (reference, inserted) = sessions.insert(sessionBytes)
                    let slot = Int(reference)
                    if inserted {
                        let name = String(decoding: sessionBytes, as: UTF8.self)
                        let skip = wanted.map { !$0.contains(name) } ?? false
                        live.append(skip ? nil : Live(id: name, filter: filter))
                        skipped.append(skip)
                        names.append(name)
                    }
                    if skipped[slot] { return }
                    handle(
                        slot: slot, type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index),
                        receivedAt: block.receiveTimes[index], key: block.peers[Int(block.peerIndexes[index])].relayKey,
                        body: StoredBody(tokens: tokens, strings: strings), late: false, into: &sink)
                }
                return true
            }
            return read
        }

        /// E4: the sessions stored out of `seq` order, each replayed in `seq` order.
        mutating func replayLate(_ ids: [String], counts: [Int], _ reader: LogReader, through: UInt64, into sink: inout Sink) throws {
            var slots: [Int] = []
            for id in ids {
                let (reference, inserted) = withBytes(id) { sessions.insert($0) }
                if inserted {
                    live.append(Live(id: id, filter: filter))
                    skipped.append(false)
                    names.append(id)
                }
                slots.append(Int(reference))
            }
            try SequenceOrderedSessions.forEachEvent(of: ids, eventCounts: counts, log: reader) { number, event, fields in
                guard event.lsn <= through else { return }
                handle(
                    slot: slots[number], type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, receivedAt: event.receivedAt,
                    key: event.relayKey, body: fields, late: event.late, into: &sink)
            }
        }

        /// E7: each session an event proved a gesture of cancelled, replayed again knowing
        /// every gesture its events prove (in the order E4 replays), its rows given from where
        /// the first replay held them.
        mutating func replayAgain(_ reader: LogReader, through: UInt64, into sink: inout Sink) throws {
            guard !replayedAgain.isEmpty else { return }
            let again = replayedAgain
            let ids = again.map { names[$0] }
            let counts = again.map { live[$0]?.eventsSeen ?? 0 }
            // Each session starts again from a replayer that knows its proved gestures.
            func knowing(_ number: Int, _ cancelled: [SessionReplayer.CancelledGesture]) {
                let slot = again[number]
                let state = Live(id: names[slot], filter: filter)
                state.replayer = SessionReplayer(gesturesCancelledInHindsight: cancelled)
                state.final = true
                state.heldFrom = live[slot]?.heldFrom ?? 0
                live[slot] = state
            }
            try withoutActuallyEscaping(knowing) { knowing in
                try SequenceOrderedSessions.forEachEvent(of: ids, eventCounts: counts, log: reader, throughLSN: through, knowing: knowing) { number, event, fields in
                    handle(
                        slot: again[number], type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, receivedAt: event.receivedAt,
                        key: event.relayKey, body: fields, late: event.late, into: &sink)
                }
            }
        }

        /// The sessions still open at the end of the log, finished at their last event.
        mutating func finishOpenSessions(into sink: inout Sink) {
            for slot in live.indices {
                guard let state = live[slot], !state.replayAgain else { continue }
                let last = state.replayer.info.lastTimestamp ?? 0
                finish(state, slot: slot, ending: FocusJournal.Ending(state.replayer, end: last), at: last, into: &sink)
            }
        }

        /// Applies one event of session `slot` and hands the rows it makes to the sink.
        mutating func handle(
            slot: Int, type: EventType, sequence: UInt64?, timestamp: Int64, lsn: UInt64, receivedAt: Int64, key: RelayKey, body: StoredBody, late: Bool,
            into sink: inout Sink
        ) {
            if live[slot] == nil { live[slot] = Live(id: names[slot], filter: filter) }
            let state = live[slot]!
            state.eventsSeen += 1
            let eventRow = EventFacts(lsn: lsn, sequence: sequence, timestamp: timestamp, receivedAt: receivedAt, type: type, key: key)
            // Replayed again after the pass (E7); its `events` rows are given as they come.
            if state.replayAgain { return giveEventRow(eventRow, slot: slot, state, into: &sink) }
            if late { state.replayer.noteLateEvent() }
            let knownCancelled = state.replayer.gesturesCancelledInHindsight.count
            state.replayer.apply(ReplayEvent(type: type, sequence: sequence, timestamp: timestamp, lsn: lsn, body: body))
            if !state.final, state.replayer.gesturesCancelledInHindsight.count > knownCancelled {
                // E7: a gesture taken as done was cancelled; what was held since is wrong.
                state.replayAgain = true
                state.held.removeAll()
                replayedAgain.append(slot)
                state.holding = false
                return giveEventRow(eventRow, slot: slot, state, into: &sink)
            } else if !state.final, !state.holding, state.replayer.mayBeCancelledInHindsight {
                state.holding = true
                state.heldFrom = state.replayer.eventCount - 1
            }
            giveRows(of: state, slot: slot, type: type, timestamp: timestamp, event: eventRow, into: &sink)
            if type == .sessionEnd {
                live[slot] = nil
            } else if state.holding, !state.replayer.mayBeCancelledInHindsight {
                DerivedTableScanner.release(state, into: &sink)
            }
        }

        /// The event's `events` row, given once: in the first replay (not by a replay again).
        private func giveEventRow(_ event: EventFacts, slot: Int, _ state: Live, into sink: inout Sink) {
            guard wantsEvents, !state.final, state.rows.included, filter.contains(event.timestamp) else { return }
            sink.event(
                EventRow(
                    lsn: event.lsn, session: names[slot], tags: state.rows.tags, sequence: event.sequence, timestamp: event.timestamp, receivedAt: event.receivedAt,
                    type: event.type.name, key: event.key.name))
        }

        /// What an `events` row says of its event, kept until the row is made (most scans make none).
        struct EventFacts {
            var lsn: UInt64
            var sequence: UInt64?
            var timestamp: Int64
            var receivedAt: Int64
            var type: EventType
            var key: RelayKey
        }

        /// The event's rows: its `events` row (after its session's `session.start` gave the
        /// session's tags), then the rows of what it changed (``FocusJournal/changes(made:before:after:timestamp:_:)``),
        /// held while a gesture may still prove cancelled (E7).
        private mutating func giveRows(of state: Live, slot: Int, type: EventType, timestamp: Int64, event: EventFacts, into sink: inout Sink) {
            let anomaliesBefore = state.anomaliesSeen
            state.anomaliesSeen = state.replayer.anomalies.count
            // Most events change nothing: asked from three figures, without lending the state.
            guard
                FocusJournal.mayHaveChanged(
                    type, anomaliesBefore: anomaliesBefore, anomaliesAfter: state.anomaliesSeen,
                    viewsClosedByLastEvent: state.replayer.viewsClosedByLastEvent)
            else { return giveEventRow(event, slot: slot, state, into: &sink) }
            var eventRowGiven = false
            FocusJournal.changes(made: type, before: FocusJournal.Before(anomalies: anomaliesBefore), after: state.replayer, timestamp: timestamp) { time, change in
                if case .start = change {
                    var none = NoRows()
                    maker.rows(of: change, at: time, session: names[slot], number: slot, &state.rows, ended: true, into: &none)
                    return
                }
                if !eventRowGiven {
                    eventRowGiven = true
                    giveEventRow(event, slot: slot, state, into: &sink)
                }
                if case .end(let ending) = change { return finish(state, slot: slot, ending: ending, at: time, into: &sink) }
                place(change, at: time, slot: slot, state, ended: true, into: &sink)
            }
            if !eventRowGiven { giveEventRow(event, slot: slot, state, into: &sink) }
        }

        /// Makes the rows of `change` and places each where it goes (given, held or dropped,
        /// ``DerivedTableScanner/put(_:of:into:)``) as it is made.
        private func place(_ change: FocusJournal.Change, at time: Int64, slot: Int, _ state: Live, ended: Bool, into sink: inout Sink) {
            withUnsafeMutablePointer(to: &sink) { sink in
                var placer = RowPlacer(state: state, sink: sink)
                maker.rows(of: change, at: time, session: names[slot], number: slot, &state.rows, ended: ended, into: &placer)
            }
        }

        /// The session's end (its `session.end`, or its last event for a session still open):
        /// the rows it held first (no later event can prove its gestures cancelled), then its
        /// last view, its exit and its session row.
        private mutating func finish(_ state: Live, slot: Int, ending: FocusJournal.Ending, at timestamp: Int64, into sink: inout Sink) {
            if state.holding { DerivedTableScanner.release(state, into: &sink) }
            place(.end(ending), at: timestamp, slot: slot, state, ended: state.replayer.info.ended, into: &sink)
            if takesEventSource { known[names[slot]] = (state.rows.tags, state.rows.included) }
        }
    }

    /// The sessions (of the filter) with an event the log stored after a higher `seq` of
    /// theirs, with their event counts; all their events carry a `seq` (E4 sorts only then).
    private func sessionsStoredOutOfOrder() throws -> (ids: [String], counts: [Int], table: ByteStringTable) {
        var table = ByteStringTable()
        var highest: [UInt64] = []
        var counts: [Int] = []
        var late: [Bool] = []
        var unnumbered: [Bool] = []
        let wanted = sessions
        try reader.scan(LogQuery(session: filter.session)) { block, index in
            let sequence = block.sequence(index)
            block.withEvent(index) { _, session, _ in
                let (reference, inserted) = table.insert(session)
                let slot = Int(reference)
                if inserted {
                    highest.append(0)
                    counts.append(0)
                    late.append(false)
                    // A session left out of the scan is never sorted: as if it had no seq.
                    unnumbered.append(wanted.map { !$0.contains(String(decoding: session, as: UTF8.self)) } ?? false)
                }
                counts[slot] += 1
                guard let sequence else {
                    unnumbered[slot] = true
                    return
                }
                if counts[slot] > 1, sequence < highest[slot] { late[slot] = true }
                highest[slot] = max(highest[slot], sequence)
            }
            return true
        }
        var ids: [String] = []
        var lateCounts: [Int] = []
        var lateTable = ByteStringTable()
        for slot in late.indices where late[slot] && !unnumbered[slot] {
            table.withString(UInt32(slot)) { raw in
                ids.append(String(decoding: raw, as: UTF8.self))
                _ = lateTable.insert(raw)
            }
            lateCounts.append(counts[slot])
        }
        return (ids, lateCounts, lateTable)
    }

}

/// Calls `body` with the UTF-8 bytes of `text`.
private func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var text = text
    return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
}

extension DerivedTableScanner {
    /// Places each row a change makes as it is made (E7: given, held while a gesture may still
    /// prove cancelled, or dropped; ``DerivedTableScanner/put(_:of:into:)``).
    ///
    /// It reaches the scan's sink through a pointer that is valid only inside the
    /// `withUnsafeMutablePointer` call that makes the placer: a struct cannot hold an `inout`, and
    /// a copy of the sink (a report's tables) would be copied again on its first change.
    private struct RowPlacer<Sink: DerivedTableSink>: DerivedTableSink {
        let state: Live
        let sink: UnsafeMutablePointer<Sink>

        mutating func visit(_ row: ScreenVisit) { DerivedTableScanner.put(.visit(row), of: state, into: &sink.pointee) }
        mutating func transition(_ row: TransitionRow) { DerivedTableScanner.put(.transition(row), of: state, into: &sink.pointee) }
        mutating func session(_ row: SessionRow) { DerivedTableScanner.put(.session(row), of: state, into: &sink.pointee) }
        mutating func anomaly(_ row: AnomalyRow) { DerivedTableScanner.put(.anomaly(row), of: state, into: &sink.pointee) }
        mutating func exit(_ row: ExitRow) { DerivedTableScanner.put(.exit(row), of: state, into: &sink.pointee) }
    }
}
