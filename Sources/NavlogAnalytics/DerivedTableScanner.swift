public import NavlogEvents
import NavlogReplay
public import NavlogStore

/// Replays every session of a log once and hands the derived rows (``DerivedRows``) to a sink:
/// screen visits and transitions from the engine's focus after each event, dwell from F4,
/// anomalies, exits, one row per session.
public struct DerivedTableScanner {
    /// The log.
    public let reader: LogReader
    /// Which sessions and times.
    public let filter: AnalyticsFilter
    /// Events read by the last scan.
    public private(set) var eventsRead = 0

    /// A scanner of `reader` restricted by `filter`.
    public init(reader: LogReader, filter: AnalyticsFilter = AnalyticsFilter()) {
        self.reader = reader
        self.filter = filter
    }

    /// One live session. A class, so that the per-event work mutates it in place (a struct
    /// taken out of the array and put back copies every array it holds, per event).
    private final class Live {
        var replayer = SessionReplayer()
        var tags = SessionTags()
        var included = true
        var focus: ControllerHandle?
        var focusScreen = ""
        var focusStoryboardID: String?
        var focusSince: Int64 = 0
        var focusDwellAtStart: Int64 = 0
        var focusHow = "root"
        var visits = 0
        var screens = Set<String>()
        var maxStack = 0
        var maxPresentation = 0
        var anomaliesSeen = 0
        var lastTimestamp: Int64 = 0
    }

    /// Reads the log and calls `sink` with every row; `progress` is told how many events were
    /// read, now and then.
    /// - Throws: ``StoreError`` for I/O failures (damaged blocks are skipped: see ``LogReader/damage``).
    public mutating func scan<Sink: DerivedTableSink>(into sink: inout Sink, progress: ((Int) -> Void)? = nil) throws {
        var sessions = ByteStringTable()
        var live: [Live?] = []
        var names: [String] = []
        var read = 0
        let wantsEvents = sink.wantsEvents
        let filter = self.filter
        try reader.scan(LogQuery(session: filter.session)) { block, index in
            read += 1
            if read & 0xFFFF == 0 { progress?(read) }
            let type = block.types[index]
            let timestamp = block.timestamps[index]
            let sequence = block.sequence(index)
            try block.withEvent(index) { strings, sessionBytes, tokens in
                let (reference, inserted) = sessions.insert(sessionBytes)
                let slot = Int(reference)
                if inserted {
                    live.append(Live())
                    names.append(String(decoding: sessionBytes, as: UTF8.self))
                }
                if live[slot] == nil { live[slot] = Live() }
                let body = StoredBody(tokens: tokens, strings: strings)
                let state = live[slot]!
                state.replayer.apply(ReplayEvent(type: type, sequence: sequence, timestamp: timestamp, lsn: block.lsn(index), body: body))
                state.lastTimestamp = max(state.lastTimestamp, timestamp)
                if type == .sessionStart {
                    let info = state.replayer.info
                    state.tags = SessionTags(app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? "")
                    state.included =
                        (filter.app.map { $0 == state.tags.app } ?? true) && (filter.version.map { $0 == state.tags.version } ?? true)
                        && (filter.idiom.map { $0 == state.tags.idiom } ?? true)
                }
                let inWindow = (filter.since.map { timestamp >= $0 } ?? true) && (filter.until.map { timestamp <= $0 } ?? true)
                let emit = state.included && inWindow
                if emit && wantsEvents {
                    let session = names[slot]
                    sink.event(
                        EventRow(
                            lsn: block.lsn(index), session: session, tags: state.tags, sequence: sequence, timestamp: timestamp, receivedAt: block.receiveTimes[index],
                            type: type.name))
                }
                var session: String { names[slot] }
                // Anomalies raised by this event.
                if state.replayer.anomalies.count > state.anomaliesSeen {
                    let anomalies = state.replayer.anomalies
                    if emit {
                        for anomaly in anomalies[state.anomaliesSeen...] {
                            sink.anomaly(
                                AnomalyRow(
                                    session: session, sessionNumber: slot, tags: state.tags, timestamp: anomaly.event.timestamp, sequence: anomaly.event.sequence,
                                    lsn: anomaly.event.lsn,
                                    code: anomaly.code.code, name: anomaly.code.name, rule: anomaly.rule, fatal: anomaly.isFatal,
                                    controllers: anomaly.controllers.map { state.replayer.id(of: $0) }.joined(separator: " "), message: anomaly.message))
                        }
                    }
                    state.anomaliesSeen = anomalies.count
                }
                // A change of the focused screen closes a visit and makes a transition.
                let focus = state.replayer.focusedScreenHandle
                if focus != state.focus, let focus {
                    let controller = state.replayer.controllers[focus]
                    let screen = controller.className ?? controller.id
                    let how = Self.how(type, detail: state.replayer.visit.detail)
                    if let previous = state.focus {
                        // Closed (and counted for the session row) whether or not it is in the window.
                        let visit = close(state, previous, at: timestamp, session: session, number: slot)
                        if emit { sink.visit(visit) }
                    }
                    if emit {
                        sink.transition(
                            TransitionRow(
                                session: session, sessionNumber: slot, tags: state.tags, timestamp: timestamp, sequence: sequence,
                                from: state.focus == nil ? nil : state.focusScreen,
                                to: screen, how: how))
                    }
                    state.focus = focus
                    state.focusScreen = screen
                    state.focusStoryboardID = controller.storyboardID
                    state.focusSince = timestamp
                    state.focusDwellAtStart = Int(focus.index) < state.replayer.dwell.count ? state.replayer.dwell[Int(focus.index)] : 0
                    state.focusHow = how
                    state.screens.insert(screen)
                    let (stack, presentations) = Self.depths(state.replayer)
                    state.maxStack = max(state.maxStack, stack)
                    state.maxPresentation = max(state.maxPresentation, presentations)
                }
                if type == .appBackground, emit, state.focus != nil {
                    sink.exit(ExitRow(session: session, sessionNumber: slot, tags: state.tags, timestamp: timestamp, screen: state.focusScreen, reason: "background"))
                }
                if type == .sessionEnd {
                    finish(state, session: session, number: slot, emit: state.included, into: &sink)
                    live[slot] = nil
                }
            }
            return true
        }
        for slot in live.indices {
            guard let state = live[slot] else { continue }
            finish(state, session: names[slot], number: slot, emit: state.included, into: &sink)
        }
        eventsRead = read
        progress?(read)
    }

    /// Closes the open visit of `state`.
    private func close(_ state: Live, _ previous: ControllerHandle, at end: Int64, session: String, number: Int) -> ScreenVisit {
        let total = Int(previous.index) < state.replayer.dwell.count ? state.replayer.dwell[Int(previous.index)] : 0
        let (difference, overflow) = total.subtractingReportingOverflow(state.focusDwellAtStart)
        let dwell = overflow ? 0 : difference
        let visit = ScreenVisit(
            session: session, sessionNumber: number, tags: state.tags, screen: state.focusScreen, storyboardID: state.focusStoryboardID,
            controller: state.replayer.id(of: previous), start: state.focusSince, end: max(end, state.focusSince), dwell: max(0, dwell), how: state.focusHow,
            index: state.visits)
        state.visits += 1
        return visit
    }

    /// The session's last visit, its exit and its row.
    private func finish<Sink: DerivedTableSink>(_ state: Live, session: String, number: Int, emit: Bool, into sink: inout Sink) {
        guard emit else { return }
        let end = state.lastTimestamp
        if let focus = state.focus {
            let visit = close(state, focus, at: end, session: session, number: number)
            if filter.until.map({ visit.start <= $0 }) ?? true { sink.visit(visit) }
            sink.exit(ExitRow(session: session, sessionNumber: number, tags: state.tags, timestamp: end, screen: state.focusScreen, reason: "end"))
        }
        let info = state.replayer.info
        sink.session(
            SessionRow(
                session: session, sessionNumber: number, tags: state.tags, first: info.firstTimestamp ?? 0, last: info.lastTimestamp ?? 0, events: state.replayer.eventCount,
                visits: state.visits, screens: state.screens.count, anomalies: state.replayer.anomalies.count, maxStackDepth: state.maxStack,
                maxPresentationDepth: state.maxPresentation, exitScreen: state.focus == nil ? nil : state.focusScreen, ended: info.ended))
    }

    /// The depth of the navigation stack around the focus and the number of presentations on the focus path.
    static func depths(_ replayer: SessionReplayer) -> (stack: Int, presentations: Int) {
        var stack = 0
        var presentations = 0
        for handle in replayer.focusPath {
            let node = replayer.hierarchy[handle.index]
            if node.placement == .presented { presentations += 1 }
            if replayer.controllers[handle].kind == .navigation { stack = max(stack, node.items.count) }
        }
        return (stack, presentations)
    }

    /// How an event moved the focus, for transitions: from the event that began the visit and,
    /// for a segue, its detail (``SessionReplayer/FocusVisit/detail``).
    public static func how(_ type: EventType, detail: String?) -> String {
        switch type {
        case .navPush: return "push"
        case .navPop, .navPopTo, .navPopToRoot: return "pop"
        case .present: return "present"
        case .dismiss: return "dismiss"
        case .tabSelect, .tabSet: return "tab"
        case .show: return "show"
        case .showDetail: return "showDetail"
        case .unwind: return "unwind"
        case .windowRoot: return "root"
        case .splitSet, .splitCollapse, .splitExpand: return "split"
        case .traitsChange: return "adapt"
        case .transitionEnd: return "cancel"
        case .segue:
            guard let detail else { return "segue:?" }
            if detail == "#unwind" { return "unwind" }
            return "segue:" + (detail.hasPrefix("#") ? String(detail.dropFirst()) : detail)
        default: return type.name
        }
    }
}
