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

    /// Per-session bookkeeping while reading.
    private struct Session {
        var tags = SessionTags()
        var included = true
        var screens = Set<String>()
        var ended = false
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
        var sessions: [Session] = []
        var numbers: [String: Int] = [:]
        var frameSessions: [Int] = []
        let filter = self.filter
        @inline(__always) func inWindow(_ timestamp: Int64) -> Bool { filter.contains(timestamp) }
        func number(_ id: String, _ key: Int) -> Int {
            if key < frameSessions.count, frameSessions[key] >= 0 { return frameSessions[key] }
            let found =
                numbers[id]
                ?? {
                    var fresh = Session()
                    fresh.included = filter.session.map { $0 == id } ?? true
                    sessions.append(fresh)
                    numbers[id] = sessions.count - 1
                    return sessions.count - 1
                }()
            if key >= frameSessions.count { frameSessions.append(contentsOf: repeatElement(-1, count: key + 1 - frameSessions.count)) }
            frameSessions[key] = found
            return found
        }
        func visitRow(_ id: String, _ number: Int, _ session: Session, _ visit: FocusJournal.Visit) -> ScreenVisit {
            ScreenVisit(
                session: id, sessionNumber: number, tags: session.tags, screen: visit.screen, storyboardID: visit.storyboardID, controller: visit.controller, start: visit.start,
                end: visit.end, dwell: visit.dwell, how: DerivedTableScanner.how(visit.cause, detail: visit.detail), index: visit.index)
        }
        func finish(_ id: String, _ number: Int, _ session: inout Session, _ record: FocusJournal.Record, ended: Bool) {
            guard case .end(_, let timestamp, let ending) = record else { return }
            let closed = ending.closed
            session.ended = true
            guard session.included else { return }
            // As DerivedTableScanner does: a session's last visit counts when it began before
            // --until; its end and its row always (reports such as paths flush on the row).
            if let closed {
                session.screens.insert(closed.screen)
                let row = visitRow(id, number, session, closed)
                if inWindow(closed.start) { sink.transition(DerivedTableScanner.transitionRow(closed, session: id, number: number, tags: session.tags)) }
                if filter.until.map({ row.start <= $0 }) ?? true { sink.visit(row) }
                sink.exit(ExitRow(session: id, sessionNumber: number, tags: session.tags, timestamp: timestamp, screen: closed.screen, reason: "end"))
            }
            sink.session(
                SessionRow(
                    session: id, sessionNumber: number, tags: session.tags, first: ending.first, last: ending.last, events: ending.events, visits: ending.visits,
                    screens: session.screens.count, anomalies: ending.anomalies, maxStackDepth: ending.stack, maxPresentationDepth: ending.presentations,
                    exitScreen: closed?.screen, ended: ended))
        }
        // Every journal is checked before the first record is given, so a fallback never follows rows.
        let usable = try index.forEachJournalRecord(frameStarted: { frameSessions.removeAll(keepingCapacity: true) }) { record, key in
            switch record {
            case .start(let id, _, let app, let version, let idiom, let device):
                let n = number(id, key)
                sessions[n].tags = SessionTags(app: app, version: version, idiom: idiom, device: device)
                sessions[n].included =
                    (filter.session.map { $0 == id } ?? true) && (filter.app.map { $0 == app } ?? true) && (filter.version.map { $0 == version } ?? true)
                    && (filter.idiom.map { $0 == idiom } ?? true)
            case .view(let id, let timestamp, let closed):
                let n = number(id, key)
                sessions[n].screens.insert(closed.screen)
                guard sessions[n].included else { break }
                // As DerivedTableScanner does: the view's transition in by its start, the view by its end.
                if inWindow(closed.start) { sink.transition(DerivedTableScanner.transitionRow(closed, session: id, number: n, tags: sessions[n].tags)) }
                if inWindow(timestamp) { sink.visit(visitRow(id, n, sessions[n], closed)) }
            case .background(let id, let timestamp, let screen):
                let n = number(id, key)
                if sessions[n].included, inWindow(timestamp), let screen {
                    sink.exit(ExitRow(session: id, sessionNumber: n, tags: sessions[n].tags, timestamp: timestamp, screen: screen, reason: "background"))
                }
            case .end(let id, _, _):
                let n = number(id, key)
                finish(id, n, &sessions[n], record, ended: true)
            case .anomaly(let id, let timestamp, let sequence, let lsn, let code, let name, let rule, let fatal, let controllers, let message):
                let n = number(id, key)
                if sessions[n].included && inWindow(timestamp) {
                    sink.anomaly(
                        AnomalyRow(
                            session: id, sessionNumber: n, tags: sessions[n].tags, timestamp: timestamp, sequence: sequence, lsn: lsn, code: code, name: name,
                            rule: rule, fatal: fatal, controllers: controllers, message: message))
                }
            }
        }
        guard usable else { return false }
        // Sessions with no session.end yet: their last visit and figures from their end state
        // (the seeker takes the one the index keeps for such a session).
        let seeker = SessionSeeker(index: index)
        for (id, n) in numbers.sorted(by: { $0.key < $1.key }) where !sessions[n].ended {
            guard let end = try seeker.replay(session: id, to: .end), let (_, figures) = FocusJournal.openSession(end) else { continue }
            if sessions[n].tags == SessionTags() {
                let info = end.info
                sessions[n].tags = SessionTags(
                    app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? "")
            }
            finish(id, n, &sessions[n], figures, ended: false)
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
