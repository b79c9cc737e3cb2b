import NavlogEvents
import NavlogJSON
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// A viewer request about a session that cannot be answered as asked.
struct ViewerRequestError: Error, Sendable {
    /// HTTP status: 400 for a malformed request, 404 for something that does not exist.
    var status: Int
    /// What was wrong and what to do, as a sentence.
    var message: String

    /// 404: the log holds no event of `session`.
    static func noEvents(of session: String) -> Self {
        Self(status: 404, message: "The log holds no events of session \(session).")
    }

    /// 404: `session`'s `count` events end before the event at `position`.
    static func pastEnd(of session: String, count: Int, position: Int) -> Self {
        Self(status: 404, message: "Session \(session) has \(count) events (index 0 to \(count - 1)); \(position) is past its end.")
    }
}

extension ViewerEngine {
    /// The session's events from position `from` on, as the JSON of
    /// `GET /api/sessions/{id}/events`: the page's timeline, in columns (time, seq, type, the
    /// focused screen after each), with the anomalies each raised and the anchors popovers were
    /// given. About 30 bytes an event, so that a 10,000-event session opens at once; the
    /// details of one event come with its step (``step(session:index:)``). Nil when the log
    /// holds no event of the session.
    func timeline(session: String, from: Int) throws -> [UInt8]? {
        try catchUp()
        // A session opened again (another instant, back and forth between pages) is answered
        // from the last few built, while navlogd has stored no event of it since.
        if from == 0, let cached = timelines.first(where: { $0.session == session }), try !hasEvents(of: session, after: cached.through) {
            return cached.body
        }
        guard let body = try buildTimeline(session: session, from: from) else { return nil }
        if from == 0 {
            timelines.removeAll { $0.session == session }
            timelines.insert((session, newestLSN, body), at: 0)
            if timelines.count > 8 { timelines.removeLast() }
        }
        return body
    }

    /// Whether the log holds events of `session` with an LSN above `lsn`.
    func hasEvents(of session: String, after lsn: UInt64) throws -> Bool {
        try countEvents(of: session, after: lsn, upTo: 1) > 0
    }

    /// How many events of `session` the log holds with an LSN above `lsn`, counting no further
    /// than `limit` (a scan of the blocks after it, through the session's postings).
    func countEvents(of session: String, after lsn: UInt64, upTo limit: Int = .max) throws -> Int {
        guard newestLSN > lsn else { return 0 }
        var query = LogQuery(session: session)
        query.fromLSN = lsn + 1
        query.readsBodies = false
        var count = 0
        try reader.scan(query) { _, _ in
            count += 1
            return count < limit
        }
        return count
    }

    /// The timeline of ``timeline(session:from:)``, from a replay of the whole session (the
    /// focus column needs every event's state).
    private func buildTimeline(session: String, from: Int) throws -> [UInt8]? {
        let current = try indexIsCurrent(for: session)
        var columns = TimelineColumns()
        var anomalyCount = 0
        let found = try seeker.replay(session: session, to: .end, useCheckpoints: false, indexIsCurrent: current) { block, position, state, _ in
            let raised = state.anomalies[anomalyCount...]
            anomalyCount = state.anomalies.count
            if state.eventCount - 1 >= from { columns.add(block, position, state, raised: raised) }
            return true
        }
        guard let found else { return nil }
        let summary = found.info
        var json = JSONWriter()
        json.raw("{")
        json.members(first: true, ("session", session), ("count", found.eventCount), ("from", from))
        columns.appendMembers(to: &json)
        json.members(
            ("app", summary.app), ("version", summary.version), ("device", summary.device), ("idiom", summary.idiom == .unknown ? nil : summary.idiom.description),
            ("first", summary.firstTimestamp), ("last", summary.lastTimestamp), ("ended", summary.ended), ("lateEvents", found.lateEvents), ("through", newestLSN))
        json.raw("}")
        return json.bytes
    }

    /// A popover's anchor in words: "bar button item X", "view Y at [x, y, w, h]".
    static func describeAnchor(_ anchor: StoredValue) -> String {
        // A rect `{x, y, width, height}` reads as (x, y) w×h; anything else as navlog timeline shows it.
        func text(_ value: StoredValue) -> String {
            guard let x = value.member(.x), let y = value.member(.y) else { return value.displayText(arraySeparator: ", ") }
            let size = [value.member(.width), value.member(.height)].compactMap { $0 }.map(text)
            return "(\(text(x)), \(text(y)))" + (size.count == 2 ? " \(size[0])×\(size[1])" : "")
        }
        if let item = anchor.member(.barButtonItem), !item.isNull { return "bar button item \(text(item))" }
        if let view = anchor.member(.sourceView), !view.isNull {
            return "view \(text(view))" + (anchor.member(.sourceRect).map { " at \(text($0))" } ?? "")
        }
        return "no anchor"
    }

    /// One event with what the rules made of it: the JSON of a step's `event`.
    static func appendEvent(
        _ block: borrowing DecodedBlock, _ position: Int, _ state: SessionReplayer, _ resolution: Resolution?, session: String, to json: inout JSONWriter
    ) {
        let lsn = block.lsn(position)
        json.raw("{")
        json.members(
            first: true, ("index", state.eventCount - 1), ("seq", block.sequence(position)), ("ts", block.timestamps[position]), ("lsn", lsn),
            ("type", block.types[position].name))
        json.key("event")
        var line: [UInt8] = []
        if (try? block.appendJSONLine(position, to: &line)) != nil {
            if line.last == 0x0A { line.removeLast() }
            json.raw(line)
        } else {
            json.null()
        }
        json.member("resolution", resolution.map { state.describe($0) })
        json.member("action", resolution?.action)
        // Which rule resolved the intent, and which intent an operation's `cause` confirmed.
        let sequence = block.sequence(position)
        json.member("rule", resolution != nil ? sequence.flatMap { state.rememberedIntentRule(sequence: $0) } : nil)
        let cause = block.withBody(position) { $0.field(.cause)?.integer }
        json.key("confirms")
        if let cause, cause >= 0, resolution == nil {
            json.raw("{\"seq\":")
            json.integer(cause)
            json.member("rule", state.rememberedIntentRule(sequence: UInt64(cause)))
            json.raw("}")
        } else {
            json.null()
        }
        json.member("focus", state.focus.map { state.id(of: $0) })
        json.member("focusClass", state.focus.flatMap { state.controllers[$0].className })
        json.key("anomalies")
        json.array(state.anomalies.lazy.filter { $0.event.lsn == lsn }) { json, anomaly in
            state.appendAnomalyJSON(anomaly, session: session, to: &json.bytes)
        }
        json.raw("}")
    }

    /// The session's hierarchy after the event at position `index` (`navlog replay --index`),
    /// or after its last event when `index` is nil, as the JSON of `navlog replay --format json`.
    func state(session: String, index position: Int?) throws -> [UInt8] {
        try state(session: session, target: position.map { .index($0) } ?? .end)
    }

    /// The session's hierarchy after its event with this `seq` (`navlog replay --seq`).
    func state(session: String, sequence: UInt64) throws -> [UInt8] {
        try state(session: session, target: .sequence(sequence))
    }

    /// The state after `target`, with `navlog replay`'s checks that the target exists.
    private func state(session: String, target: ReplayTarget) throws -> [UInt8] {
        try catchUp()
        let current = try indexIsCurrent(for: session)
        guard let state = try seeker.replay(session: session, to: target, indexIsCurrent: current) else {
            throw ViewerRequestError.noEvents(of: session)
        }
        switch target {
        case .index(let position) where state.eventCount <= position:
            throw ViewerRequestError.pastEnd(of: session, count: state.eventCount, position: position)
        case .sequence(let sequence) where state.position?.sequence != sequence:
            let nearest = state.position?.sequence.map { "the nearest earlier event has seq \($0)" } ?? "its events before it carry no seq"
            throw ViewerRequestError(status: 404, message: "Session \(session) has no event with seq \(sequence); \(nearest).")
        default:
            break
        }
        var output: [UInt8] = []
        state.appendJSON(session: session, to: &output)
        return output
    }

    /// The states after events `index - 1` and `index` from one seek, as the JSON of
    /// `GET /api/sessions/{id}/step?index=K`: what a slider step draws (the state) and marks (what
    /// changed since the previous event). The previous state comes from the same replay when the
    /// checkpoint it starts from is before it, else from a second seek.
    func step(session: String, index position: Int) throws -> [UInt8] {
        try catchUp()
        let current = try indexIsCurrent(for: session)
        var previous: [UInt8]?
        var event = JSONWriter()
        guard
            let state = try seeker.replay(
                session: session, to: .index(position), indexIsCurrent: current,
                visit: { block, index, state, resolution in
                    if state.eventCount == position {
                        var output: [UInt8] = []
                        state.appendJSON(session: session, to: &output)
                        previous = output
                    } else if state.eventCount == position + 1 {
                        event = JSONWriter()
                        Self.appendEvent(block, index, state, resolution, session: session, to: &event)
                    }
                    return true
                })
        else {
            throw ViewerRequestError.noEvents(of: session)
        }
        if state.eventCount <= position {
            throw ViewerRequestError.pastEnd(of: session, count: state.eventCount, position: position)
        }
        if previous == nil, position > 0, let earlier = try seeker.replay(session: session, to: .index(position - 1), indexIsCurrent: current) {
            var output: [UInt8] = []
            earlier.appendJSON(session: session, to: &output)
            previous = output
        }
        var json = JSONWriter()
        json.raw("{\"state\":")
        state.appendJSON(session: session, to: &json.bytes)
        json.key("previous")
        if let previous { json.raw(previous) } else { json.null() }
        json.key("event")
        if event.bytes.isEmpty { json.null() } else { json.raw(event.bytes) }
        json.raw("}")
        return json.bytes
    }

    /// How many events of `session` the log holds past LSN `after`, and the newest LSN: what a
    /// live page polls.
    func newEvents(session: String, after: UInt64) throws -> (count: Int, newest: UInt64) {
        try catchUp()
        return (try countEvents(of: session, after: after), newestLSN)
    }
}

/// A timeline's columns as a replay goes through the session's events: time, seq, type and the
/// focus after each, by number into tables of types and focused screens, with the anomalies each
/// event raised and the anchors popovers were given.
private struct TimelineColumns {
    // The number columns, joined by commas; the brackets are added when they are written out.
    var timestamps = JSONWriter()
    var sequences = JSONWriter()
    var types = JSONWriter()
    var emitted = 0
    /// The event types by number.
    var typeNames: [String] = []
    var typeNumbers: [EventType: Int] = [:]
    /// The focus after each event, by number into the focus table.
    var focusColumn: [Int] = []
    /// Where the entries of a pop or dismissal not yet known to be finished begin (E6).
    var pendingFrom: Int?
    /// The focus table: each focused controller's id and class.
    var focusNumbers: [ControllerHandle: Int] = [:]
    var focusIDs: [String] = []
    var focusClasses: [String?] = []
    /// `{"index","code","name"}` and `{"index","target","anchor"}` objects, joined by commas.
    var anomalies = JSONWriter()
    var anchors = JSONWriter()

    /// Adds the event at `position` of `block`, which `state` has just applied and which raised
    /// `raised`.
    mutating func add(_ block: borrowing DecodedBlock, _ position: Int, _ state: SessionReplayer, raised: ArraySlice<Anomaly>) {
        let number = state.eventCount - 1
        if emitted > 0 {
            timestamps.byte(UInt8(ascii: ","))
            sequences.byte(UInt8(ascii: ","))
            types.byte(UInt8(ascii: ","))
        }
        emitted += 1
        timestamps.integer(block.timestamps[position])
        sequences.integer(block.sequence(position))
        types.integer(typeNumber(block.types[position]))
        addFocus(state)
        for anomaly in raised {
            if !anomalies.bytes.isEmpty { anomalies.byte(UInt8(ascii: ",")) }
            anomalies.object(("index", number), ("code", anomaly.code.code), ("name", anomaly.code.name))
        }
        block.withBody(position) { body in
            guard let anchor = body.field(.anchor) else { return }
            let target = (body.field(.vc) ?? body.field(.destination)).flatMap(ControllerReference.init).map { String(decoding: $0.id, as: UTF8.self) }
            if !anchors.bytes.isEmpty { anchors.byte(UInt8(ascii: ",")) }
            anchors.object(("index", number), ("target", target), ("anchor", ViewerEngine.describeAnchor(anchor)))
        }
    }

    /// The number of `type` in the type table, added when new.
    private mutating func typeNumber(_ type: EventType) -> Int {
        if let known = typeNumbers[type] { return known }
        typeNames.append(type.name)
        typeNumbers[type] = typeNames.count - 1
        return typeNames.count - 1
    }

    /// The number of `focus` in the focus table (-1 for none), added when new.
    private mutating func focusNumber(_ focus: ControllerHandle?, in state: SessionReplayer) -> Int {
        guard let focus else { return -1 }
        if let known = focusNumbers[focus] { return known }
        focusIDs.append(state.id(of: focus))
        focusClasses.append(state.controllers[focus].className)
        focusNumbers[focus] = focusIDs.count - 1
        return focusIDs.count - 1
    }

    /// Adds the focus after the event. E6: the entries from a pop or dismissal that the session
    /// later shows was a cancelled gesture name the focus that never left.
    private mutating func addFocus(_ state: SessionReplayer) {
        let focus = focusNumber(state.focus, in: state)
        if let start = pendingFrom, let outcome = state.heldRemovalOutcome {
            if outcome == .cancelled {
                // The focus right after the rollback (the event that proved it may move it on).
                let rolledBack = state.rolledBackFocus.map { focusNumber($0, in: state) } ?? focus
                for entry in start..<focusColumn.count { focusColumn[entry] = rolledBack }
            }
            pendingFrom = nil
        }
        if state.hasPendingRemoval && pendingFrom == nil {
            pendingFrom = focusColumn.count
        }
        focusColumn.append(focus)
    }

    /// Appends `,"ts":[…],"seq":[…],"type":[…],"focus":[…],"types":[…],"focusIDs":[…],
    /// "focusClasses":[…],"anomalies":[…],"anchors":[…]`.
    func appendMembers(to json: inout JSONWriter) {
        json.raw(",\"ts\":[")
        json.raw(timestamps.bytes)
        json.raw("],\"seq\":[")
        json.raw(sequences.bytes)
        json.raw("],\"type\":[")
        json.raw(types.bytes)
        json.raw("]")
        json.key("focus")
        json.array(focusColumn)
        json.key("types")
        json.array(typeNames)
        json.key("focusIDs")
        json.array(focusIDs)
        json.key("focusClasses")
        json.array(focusClasses)
        json.raw(",\"anomalies\":[")
        json.raw(anomalies.bytes)
        json.raw("],\"anchors\":[")
        json.raw(anchors.bytes)
        json.raw("]")
    }
}
