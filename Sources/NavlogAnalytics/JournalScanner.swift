import NavlogEvents
import NavlogReplay
public import NavlogReplayStore
import NavlogStore

/// The derived rows from the replay index's focus journals (``FocusJournal``) instead of a
/// replay of the log: the journals were written when the checkpoints were built, so a query
/// reads a few records per screen change rather than every event. Sessions still open at the
/// end of the log are finished from their checkpointed end state.
///
/// Gives the same rows as ``DerivedTableScanner`` on a log stored in `seq` order (a test
/// compares the two); where events arrived late, the journals hold each session's rows in `seq`
/// order (E4: the index re-derived it) where a replay in log order would not. `events` rows,
/// which the journals do not hold, come from one plain pass over the log after them.
public struct JournalScanner {
    /// The replay index (refreshed by ``scan(into:)``).
    public let index: ReplayIndex
    /// Which sessions and times.
    public let filter: AnalyticsFilter

    /// A scanner over `index` restricted by `filter`.
    public init(index: ReplayIndex, filter: AnalyticsFilter = AnalyticsFilter()) {
        self.index = index
        self.filter = filter
    }

    /// Brings the index up to date and feeds `sink` from the journals.
    /// - Returns: false when the journals cannot be used (no writable index, or damage): then
    ///   nothing was given to `sink`, and the caller should use ``DerivedTableScanner``.
    /// - Parameter progress: told how many events the index build replayed so far, when it has to.
    public func scan<Sink: DerivedTableSink>(into sink: inout Sink, progress: ((Int) -> Void)? = nil) throws -> Bool {
        guard index.directory != nil else { return false }
        try index.refresh(progress: progress)
        // Sessions by number (in order of first record); the journal's string numbers map to
        // them through `frameSessions`, so most records need no lookup by id.
        var sessions: [DerivedRowMaker.Session] = []
        var numbers: [String: Int] = [:]
        var frameSessions: [Int] = []
        let maker = DerivedRowMaker(filter: filter)
        func number(_ id: String, _ key: Int) -> Int {
            if key < frameSessions.count, frameSessions[key] >= 0 { return frameSessions[key] }
            let found =
                numbers[id]
                ?? {
                    sessions.append(DerivedRowMaker.Session(id: id, filter: filter))
                    numbers[id] = sessions.count - 1
                    return sessions.count - 1
                }()
            if key >= frameSessions.count { frameSessions.append(contentsOf: repeatElement(-1, count: key + 1 - frameSessions.count)) }
            frameSessions[key] = found
            return found
        }
        // Every journal is checked before the first record is given, so a fallback never follows rows.
        let usable = try index.forEachJournalRecord(controllerIDs: sink.wantsControllerIDs, frameStarted: { frameSessions.removeAll(keepingCapacity: true) }) { record, key in
            let n = number(record.session, key)
            maker.rows(of: record.change, at: record.timestamp, session: record.session, number: n, &sessions[n], ended: true, into: &sink)
        }
        guard usable else { return false }
        // Sessions with no session.end yet: their last view and figures from their end state
        // (the seeker takes the one the index keeps for such a session).
        let seeker = SessionSeeker(index: index)
        for (id, n) in numbers.sorted(by: { $0.key < $1.key }) where !sessions[n].ended {
            guard let end = try seeker.replay(session: id, to: .end) else { continue }
            if sessions[n].tags == SessionTags() {
                let info = end.info
                sessions[n].tags = SessionTags(
                    app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? "")
            }
            let last = end.info.lastTimestamp ?? 0
            maker.rows(of: .end(FocusJournal.Ending(end, end: last)), at: last, session: id, number: n, &sessions[n], ended: false, into: &sink)
        }
        if sink.wantsEvents || sink.takesEventSource {
            // Every event gets its session's tags as the journals know them, so an event stored
            // before its session's session.start has them too.
            var known: [String: (tags: SessionTags, included: Bool)] = [:]
            for (id, n) in numbers { known[id] = (sessions[n].tags, sessions[n].included) }
            try sink.events(EventRowSource(reader: index.log, filter: filter, sessions: known))
        }
        return true
    }
}
