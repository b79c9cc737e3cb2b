import NavlogReplay
public import NavlogReplayStore

/// Makes the derived rows of a session from what its events changed (``FocusJournal/Change``):
/// the one place analytics decides which rows a change makes and which of them a filter's
/// window keeps. Both routes to the rows use it: ``JournalScanner`` with the changes the replay
/// index recorded, ``DerivedTableScanner`` with the changes of its own replay of the log, so a
/// fix to how screens are counted is made once and holds for both.
struct DerivedRowMaker {
    /// Which sessions and times.
    let filter: AnalyticsFilter

    /// What a scan knows of one session while it makes the session's rows.
    struct Session {
        /// Who it is, from its `session.start` (empty before, or without one).
        var tags = SessionTags()
        /// Whether the filter keeps its rows.
        var included: Bool
        /// The distinct screens it has viewed.
        var screens = Set<String>()
        /// Whether its end was made (its session row given).
        var ended = false

        /// A session known so far by its id only.
        init(id: String, filter: AnalyticsFilter) {
            included = filter.session.map { $0 == id } ?? true
        }
    }

    /// One row of any table.
    enum Row {
        case visit(ScreenVisit)
        case transition(TransitionRow)
        case anomaly(AnomalyRow)
        case exit(ExitRow)
        case session(SessionRow)
    }

    /// Gives `receiver` the rows that `change` of session `id` (numbered `number` in this scan)
    /// at `timestamp` makes, updating what the scan knows of the session. `ended`: for an end,
    /// whether it is the session's `session.end` (false: a session still open, finished at its
    /// last event). Each row goes straight to the receiver's method for its table: no row is
    /// copied into a ``Row`` on the way (a report takes millions).
    func rows<Receiver: DerivedTableSink>(
        of change: FocusJournal.Change, at timestamp: Int64, session id: String, number: Int, _ session: inout Session, ended: Bool,
        into receiver: inout Receiver
    ) {
        switch change {
        case .start(let app, let version, let idiom, let device):
            session.tags = SessionTags(app: app, version: version, idiom: idiom, device: device)
            session.included =
                (filter.session.map { $0 == id } ?? true) && (filter.app.map { $0 == app } ?? true) && (filter.version.map { $0 == version } ?? true)
                && (filter.idiom.map { $0 == idiom } ?? true)
        case .view(let view):
            if receiver.wantsSessions { session.screens.insert(view.screen) }
            guard session.included else { return }
            // The view's transition in counts by its start, the view by its end.
            if receiver.wantsTransitions, filter.contains(view.start) {
                receiver.transition(transition(into: view, session: id, number: number, tags: session.tags))
            }
            if receiver.wantsVisits, filter.contains(timestamp) { receiver.visit(ScreenVisit(session: id, sessionNumber: number, tags: session.tags, view: view)) }
        case .background(let screen):
            guard session.included, filter.contains(timestamp), let screen else { return }
            receiver.exit(ExitRow(session: id, sessionNumber: number, tags: session.tags, timestamp: timestamp, screen: screen, reason: "background"))
        case .anomaly(let anomaly):
            guard session.included, filter.contains(timestamp) else { return }
            receiver.anomaly(
                AnomalyRow(
                    session: id, sessionNumber: number, tags: session.tags, timestamp: timestamp, sequence: anomaly.sequence, lsn: anomaly.lsn,
                    code: anomaly.code.code, name: anomaly.code.name, rule: anomaly.rule, fatal: anomaly.code.isFatal, controllers: anomaly.controllers,
                    message: anomaly.message))
        case .end(let ending):
            session.ended = true
            guard session.included else { return }
            let closed = ending.closed
            // A session's last view counts when it began before --until; its end and its
            // session row always (reports such as paths flush on the session row).
            if let closed {
                session.screens.insert(closed.screen)
                if filter.contains(closed.start) { receiver.transition(transition(into: closed, session: id, number: number, tags: session.tags)) }
                if filter.until.map({ closed.start <= $0 }) ?? true {
                    receiver.visit(ScreenVisit(session: id, sessionNumber: number, tags: session.tags, view: closed))
                }
                receiver.exit(ExitRow(session: id, sessionNumber: number, tags: session.tags, timestamp: timestamp, screen: closed.screen, reason: "end"))
            }
            receiver.session(
                SessionRow(
                    session: id, sessionNumber: number, tags: session.tags, first: ending.first, last: ending.last, events: ending.events,
                    visits: ending.visits, screens: session.screens.count, anomalies: ending.anomalies, maxStackDepth: ending.stack,
                    maxPresentationDepth: ending.presentations, exitScreen: closed?.screen, ended: ended))
        }
    }

    /// The transition into a screen view: from the view before it, at the view's start.
    private func transition(into view: ScreenView, session: String, number: Int, tags: SessionTags) -> TransitionRow {
        TransitionRow(
            session: session, sessionNumber: number, tags: tags, timestamp: view.start, sequence: view.sequence, from: view.from, to: view.screen, how: view.how)
    }
}

/// A receiver that takes no row: for a change made only for what it tells the scan (a start's
/// tags).
struct NoRows: DerivedTableSink {}

extension DerivedTableSink {
    /// Takes `row` into the table it belongs to.
    mutating func take(_ row: DerivedRowMaker.Row) {
        switch row {
        case .visit(let visit): self.visit(visit)
        case .transition(let transition): self.transition(transition)
        case .anomaly(let anomaly): self.anomaly(anomaly)
        case .exit(let exit): self.exit(exit)
        case .session(let session): self.session(session)
        }
    }
}
