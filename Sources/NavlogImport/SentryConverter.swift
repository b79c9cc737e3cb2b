/// Sentry event JSON (sentry-cocoa) → navlog sessions.
///
/// Takes an event as the events API returns it (breadcrumbs under `entries[]` with
/// `type == "breadcrumbs"`, at `data.values`) or as the SDK sends it (top-level `breadcrumbs`,
/// an array or `{"values": [...]}`), one per record, or a top-level array of them.
/// `ui.lifecycle` crumbs (viewDidAppear of every controller) become appearances placed as far
/// as their `data` proves; `app.lifecycle` crumbs with `state` `foreground`/`background` become
/// `app.foreground`/`app.background`. Other categories are ignored and counted.
///
/// A session is one Sentry event, unless events carry the same session tag (`session_id`,
/// `session.id`, `sessionId` or `session` in `tags`, or `contexts.session.id`): then their
/// crumbs are merged, a crumb repeated in a later event's ring buffer kept once.
public struct SentryConverter: RecordConverter {
    /// Where a crumb is in its event, for messages (the JSON path is written only when one is reported).
    private enum CrumbPlace: CustomStringConvertible {
        /// `entries[entry].data.values[index]` (the events API).
        case entry(Int, Int)
        /// `breadcrumbs[index]` (the SDK's array).
        case top(Int)
        /// `breadcrumbs.values[index]` (the SDK's object).
        case topValues(Int)

        var description: String {
            switch self {
            case .entry(let entry, let index): "entries[\(entry)].data.values[\(index)]"
            case .top(let index): "breadcrumbs[\(index)]"
            case .topValues(let index): "breadcrumbs.values[\(index)]"
            }
        }
    }

    private struct SessionState {
        var session: ImportedSession
        /// Its crumbs read and held in memory, in the order read (repeats are found when it is written).
        var crumbs: [HeldCrumb] = []
        var events = 0
        /// Whether a session tag names it: a later event may add to it, so it is held until the
        /// end (its crumbs spilled to disk meanwhile when too many are held).
        var tagged = false
        /// Which event `session.start`'s fields came from: the one with the smallest
        /// (first crumb time, event id), so that the order of the input does not matter.
        var infoRank: (Int64, String) = (.max, "")
    }

    private var sessions: [String: SessionState] = [:]
    private var order = 0
    /// Sessions of one untagged event each: complete once read, handed over by ``takeCompleted(statistics:_:)``.
    private var completed: [String] = []
    /// Sessions already handed over (an event read again later is a duplicate, not a new session).
    private var handedOver = Set<String>()
    private var strings = StringInterner()
    /// Crumbs of tagged sessions held in memory; past ``maximumHeldCrumbs`` they are spilled to a
    /// temporary file (``SessionSpill``) and read back when their session is written.
    private var held = 0
    private let maximumHeldCrumbs: Int
    private var spill: SessionSpill?
    /// Whether a spill could not be made or written: everything is then held in memory.
    private var spillFailed = false

    /// A converter with nothing read.
    /// - Parameter maximumHeldCrumbs: how many crumbs of open (tagged) sessions are held in
    ///   memory before they are moved to a temporary file; 262,144 by default (about 30 MiB).
    public init(maximumHeldCrumbs: Int = 1 << 18) {
        self.maximumHeldCrumbs = max(maximumHeldCrumbs, 1)
    }

    public mutating func convert(_ document: JSONDocument, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void) {
        document.forEachRecord { event, path in convertEvent(document, event, path: path, line: line, statistics: &statistics, report: report) }
    }

    /// Where an event keeps its breadcrumbs, once looked for.
    private enum Breadcrumbs {
        /// The crumbs, in the order the event lists them, each with its place for messages.
        case found([(JSONDocument.Node, CrumbPlace)])
        /// The event has no breadcrumbs: it records no navigation.
        case absent
        /// They are not where the event's form keeps them (reported): the event is skipped.
        case malformed
    }

    /// What one breadcrumb comes to.
    private enum CrumbReading {
        /// A crumb to hold until its session is written; `screen` is `data.screen` as written
        /// (empty for `app.lifecycle`), the crumb's identity when events of a session repeat it.
        case hold(timestamp: Int64, screen: String, HeldCrumb.Outcome)
        /// A category or state navlog does not import.
        case ignored
        /// A crumb that cannot be imported, and why (the reason says the breadcrumb was skipped).
        case skipped(ImportIssue.Code, JSONDocument.Node, String, String)
    }

    /// Adds one event's crumbs to its session, the one its session tag names, else its own id.
    /// An event without a tag is a whole session, queued for ``takeCompleted(statistics:_:)``
    /// so that it is stored at once rather than held to the end.
    private mutating func convertEvent(
        _ document: JSONDocument, _ event: JSONDocument.Node, path: String, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void
    ) {
        statistics.records += 1
        let issues = RecordIssues(document: document, path: path, line: line, skipped: "the event")
        guard document.kind(event) == .object else {
            statistics.skip(issues.located(.shape, event, "", "expected a Sentry event (an object), found \(document.kind(event).name); it was skipped"), report)
            return
        }
        let crumbs: [(JSONDocument.Node, CrumbPlace)]
        switch Self.breadcrumbs(of: event, issues, statistics: &statistics, report: report) {
        case .found(let list): crumbs = list
        case .malformed: return
        case .absent:
            // An event without breadcrumbs records no navigation: nothing to import.
            statistics.ignored += 1
            return
        }
        let eventID = (["eventID", "event_id", "id"] as [StaticString]).lazy.compactMap { document.member(event, $0).flatMap { document.text($0) } }.first ?? ""
        let sessionTag = Self.sessionTag(document, event)
        guard let sourceSession = sessionTag ?? (eventID.isEmpty ? nil : eventID) else {
            let reason = "the event has no event_id (or eventID, id) and no session tag, so it cannot be given a stable session id; it was skipped"
            statistics.skip(issues.located(.shape, event, "event_id", reason), report)
            return
        }
        let key = "sentry:" + sourceSession
        if handedOver.contains(key) {
            statistics.superseded += 1
            return
        }
        var state = takeSession(key, sourceSession: sourceSession, tagged: sessionTag != nil)
        let heldBefore = state.crumbs.count
        let firstCrumbTime = holdCrumbs(crumbs, into: &state, issues, statistics: &statistics, report: report)
        if (firstCrumbTime, eventID) < state.infoRank {
            state.infoRank = (firstCrumbTime, eventID)
            let info = Self.makeSession(key, sourceSession: sourceSession, document, event)
            state.session.app = info.app
            state.session.version = info.version
            state.session.os = info.os
            state.session.device = info.device
        }
        if state.tagged { held += state.crumbs.count - heldBefore }
        sessions[key] = state
        if held > maximumHeldCrumbs { spillHeldSessions() }
    }

    /// The event's breadcrumbs, wherever its form keeps them: the events API's `entries[]` of
    /// type `breadcrumbs` (a malformed entry is reported and the others kept), then the SDK's
    /// top-level `breadcrumbs` (an array, or an object with `values`).
    private static func breadcrumbs(
        of event: JSONDocument.Node, _ issues: RecordIssues, statistics: inout ImportStatistics, report: (ImportIssue) -> Void
    ) -> Breadcrumbs {
        let document = issues.document
        var crumbs: [(JSONDocument.Node, CrumbPlace)] = []
        var found = false
        if let entries = document.member(event, "entries") {
            guard document.kind(entries) == .array else {
                let reason = "expected an array of entries, found \(document.kind(entries).name); the event was skipped"
                statistics.skip(issues.located(.shape, entries, "entries", reason), report)
                return .malformed
            }
            for (index, entry) in document.elements(entries).enumerated() {
                guard let type = document.member(entry, "type"), document.stringEquals(type, "breadcrumbs") else { continue }
                found = true
                guard let values = document.member(entry, "data", "values"), document.kind(values) == .array else {
                    let reason = "expected the breadcrumbs as an array at data.values; this entry was skipped"
                    statistics.skip(issues.located(.shape, entry, "entries[\(index)].data.values", reason), report)
                    continue
                }
                for (k, crumb) in document.elements(values).enumerated() { crumbs.append((crumb, .entry(index, k))) }
            }
        }
        if let top = document.member(event, "breadcrumbs") {
            found = true
            if document.kind(top) == .array {
                for (k, crumb) in document.elements(top).enumerated() { crumbs.append((crumb, .top(k))) }
            } else if let values = document.member(top, "values"), document.kind(values) == .array {
                for (k, crumb) in document.elements(values).enumerated() { crumbs.append((crumb, .topValues(k))) }
            } else if document.kind(top) != .null {
                let reason = "expected an array of breadcrumbs or {\"values\": [...]}, found \(document.kind(top).name); the event was skipped"
                statistics.skip(issues.located(.shape, top, "breadcrumbs", reason), report)
                return .malformed
            }
        }
        return found ? .found(crumbs) : .absent
    }

    /// The session `key` names, taken out of `sessions` while an event is added to it (so that
    /// its arrays are not copied), or a new one; the caller puts it back.
    private mutating func takeSession(_ key: String, sourceSession: String, tagged: Bool) -> SessionState {
        // An untagged event is a whole session: it can be handed over as soon as it is read.
        if !tagged, sessions[key] == nil { completed.append(key) }
        var state =
            sessions.removeValue(forKey: key) ?? SessionState(session: ImportedSession(id: key, source: .sentry, app: "sentry", sourceSession: sourceSession))
        state.events += 1
        // Once tagged, always: an untagged event whose id equals a tag must not hide what was spilled.
        state.tagged = state.tagged || tagged
        return state
    }

    /// Reads an event's crumbs into its session, in the order listed; a crumb that cannot be
    /// imported is reported and the others kept.
    /// - Returns: the earliest readable crumb time (of any category, and also of crumbs skipped
    ///   for another reason), which ranks the event for `session.start`'s fields; read in the
    ///   same pass as the crumbs, so that no crumb is looked at twice.
    private mutating func holdCrumbs(
        _ crumbs: [(JSONDocument.Node, CrumbPlace)], into state: inout SessionState, _ issues: RecordIssues, statistics: inout ImportStatistics,
        report: (ImportIssue) -> Void
    ) -> Int64 {
        let document = issues.document
        var firstCrumbTime = Int64.max
        for (crumb, place) in crumbs {
            let timeNode = document.member(crumb, "timestamp")
            let time = timeNode.map { ImportTimestamp.microseconds(document, $0, unit: .byMagnitude) }
            if case .success(let value)? = time { firstCrumbTime = min(firstCrumbTime, value) }
            switch readCrumb(crumb, at: place, timeNode: timeNode, time: time, document) {
            case .hold(let timestamp, let screen, let outcome):
                state.crumbs.append(HeldCrumb(timestamp: timestamp, order: order, screen: screen, outcome: outcome))
                order += 1
            case .ignored:
                statistics.ignored += 1
            case .skipped(let code, let node, let subpath, let reason):
                statistics.skip(issues.located(code, node, subpath, reason), report)
            }
        }
        return firstCrumbTime
    }

    /// What one crumb comes to: `ui.lifecycle` and `app.lifecycle` crumbs with a readable time
    /// and a `data` object are read further (``screenCrumb(_:at:timestamp:_:)``,
    /// ``appStateCrumb(_:at:timestamp:_:)``); other categories are ignored.
    /// - Parameters:
    ///   - timeNode: the crumb's `timestamp` member.
    ///   - time: what it reads as: the caller reads it, because it ranks the event by every
    ///     readable crumb time, whatever the crumb comes to.
    private mutating func readCrumb(
        _ crumb: JSONDocument.Node, at place: CrumbPlace, timeNode: JSONDocument.Node?, time: Result<Int64, TimestampError>?, _ document: JSONDocument
    ) -> CrumbReading {
        guard document.kind(crumb) == .object else {
            return .skipped(.shape, crumb, place.description, "expected a breadcrumb object, found \(document.kind(crumb).name); it was skipped")
        }
        guard let categoryNode = document.member(crumb, "category") else { return .ignored }
        guard document.kind(categoryNode) == .string else {
            return .skipped(
                .shape, categoryNode, place.description + ".category", "expected a string, found \(document.kind(categoryNode).name); the breadcrumb was skipped")
        }
        // Compared in place: most crumbs are of other categories, and no string is made for them.
        let isAppState = document.stringEquals(categoryNode, "app.lifecycle")
        guard isAppState || document.stringEquals(categoryNode, "ui.lifecycle") else { return .ignored }
        let category = isAppState ? "app.lifecycle" : "ui.lifecycle"
        guard let timeNode, let time else { return .skipped(.timestamp, crumb, place.description + ".timestamp", "the breadcrumb has no timestamp; it was skipped") }
        let timestamp: Int64
        switch time {
        case .success(let value): timestamp = value
        case .failure(let error): return .skipped(.timestamp, timeNode, place.description + ".timestamp", error.reason + "; the breadcrumb was skipped")
        }
        guard let data = document.member(crumb, "data"), document.kind(data) == .object else {
            let node = document.member(crumb, "data") ?? crumb
            return .skipped(.shape, node, place.description + ".data", "a \(category) breadcrumb needs a data object; it was skipped")
        }
        if isAppState { return Self.appStateCrumb(data, at: place, timestamp: timestamp, document) }
        return screenCrumb(data, at: place, timestamp: timestamp, document)
    }

    /// An `app.lifecycle` crumb: `background` and `foreground` change what the user sees;
    /// `active` and `inactive` do not (the app stays in the foreground), so they are ignored.
    private static func appStateCrumb(_ data: JSONDocument.Node, at place: CrumbPlace, timestamp: Int64, _ document: JSONDocument) -> CrumbReading {
        guard let stateNode = document.member(data, "state"), let value = document.string(stateNode) else {
            return .skipped(.shape, document.member(data, "state") ?? data, place.description + ".data.state", "expected the state as a string; the breadcrumb was skipped")
        }
        switch value {
        case "foreground": return .hold(timestamp: timestamp, screen: "", .foreground)
        case "background": return .hold(timestamp: timestamp, screen: "", .background)
        default: return .ignored
        }
    }

    /// A `ui.lifecycle` crumb (a viewDidAppear): a container or UIKit internal is held as no
    /// screen (so that a repeat of it is still found and counted), any other controller as an
    /// appearance placed as far as the crumb's `data` proves.
    private mutating func screenCrumb(_ data: JSONDocument.Node, at place: CrumbPlace, timestamp: Int64, _ document: JSONDocument) -> CrumbReading {
        guard let screenNode = document.member(data, "screen") else {
            return .skipped(.shape, data, place.description + ".data.screen", "a ui.lifecycle breadcrumb needs data.screen (the controller's class); it was skipped")
        }
        // Interned from its bytes: a class name read again makes no string.
        guard let screen = strings.intern(document, screenNode), !screen.isEmpty else {
            return .skipped(
                .shape, screenNode, place.description + ".data.screen", "expected a non-empty string, found \(document.kind(screenNode).name); the breadcrumb was skipped")
        }
        guard ControllerClassification(className: screen) == .content else {
            return .hold(timestamp: timestamp, screen: screen, .notScreen)
        }
        let placement = Self.placement(data, document)
        let name = screen.utf8.count <= ImportedController.maximumFieldBytes ? screen : strings.intern(ImportedController.cut(screen))
        let title = document.member(data, "title").flatMap { Self.flagText(document, $0) }
        let controller = ImportedController(id: name, className: name, title: strings.intern(title.map { ImportedController.cut($0) }))
        return .hold(timestamp: timestamp, screen: screen, .appear(controller, placement))
    }

    /// Where a content controller is, from what sentry-cocoa writes of it: the child of a
    /// parent that is no container is part of the parent's screen (F1); then
    /// `beingPresented`; then a controller with a presenter that is not the window's root is
    /// inside the presented context; anything else is the window's own screen.
    private static func placement(_ data: JSONDocument.Node, _ document: JSONDocument) -> ImportedObservation.Placement {
        // A string field, or a boolean read as "true"/"false" (no string made for either).
        func isTrue(_ name: StaticString) -> Bool {
            guard let node = document.member(data, name) else { return false }
            return document.bool(node) ?? document.stringEquals(node, "true")
        }
        func isText(_ name: StaticString) -> Bool {
            guard let node = document.member(data, name) else { return false }
            return document.kind(node) == .string || document.kind(node) == .bool
        }
        if let parent = document.member(data, "parentViewController"), ControllerClassification(document, parent) == .content { return .child }
        if isTrue("beingPresented") { return .presented }
        if isText("presentingViewController"), !isTrue("is_window_rootViewController") { return .insidePresentation }
        return .screen
    }

    /// A `data` field as text: sentry-cocoa writes strings; a boolean reads as "true" or
    /// "false" (as ``placement(_:_:)`` reads the flags), so that the crumb is not lost for it.
    private static func flagText(_ document: JSONDocument, _ node: JSONDocument.Node) -> String? {
        document.string(node) ?? document.bool(node).map { $0 ? "true" : "false" }
    }

    public mutating func takeCompleted(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {
        let keys = completed
        completed.removeAll()
        for key in keys {
            handedOver.insert(key)
            guard let state = sessions.removeValue(forKey: key) else { continue }
            let session = resolve(state, spilled: [], statistics: &statistics)
            guard !session.observations.isEmpty else { continue }
            try body(session)
        }
    }

    public mutating func finish(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {
        for key in sessions.keys.sorted() {
            guard let state = sessions.removeValue(forKey: key) else { continue }
            let spilled = state.tagged ? spill?.take(key) ?? [] : []
            let session = resolve(state, spilled: spilled, statistics: &statistics)
            guard !session.observations.isEmpty else { continue }
            try body(session)
        }
        held = 0
        spill = nil
    }

    /// The session with its observations: its crumbs in the order read (spilled ones first,
    /// oldest run first, then those in memory), each repeat kept once.
    private mutating func resolve(_ state: SessionState, spilled: [[UInt8]], statistics: inout ImportStatistics) -> ImportedSession {
        var session = state.session
        // Sized for every crumb: those in memory, and at most one per 17 spilled bytes (the least a crumb takes).
        var seen = Set<HeldCrumb.Key>(minimumCapacity: state.crumbs.count + spilled.reduce(0) { $0 + $1.count } / 17)
        func take(_ crumb: HeldCrumb) {
            guard seen.insert(crumb.key).inserted else {
                statistics.superseded += 1
                return
            }
            if let observation = crumb.observation {
                session.observations.append(observation)
            } else {
                statistics.notScreens += 1
            }
        }
        for block in spilled { HeldCrumb.decode(block, strings: &strings, take) }
        for crumb in state.crumbs { take(crumb) }
        return session
    }

    /// Moves the crumbs of every tagged session held in memory to the spill file, as one run in
    /// order of session id; what is read back is the same whenever it was spilled.
    private mutating func spillHeldSessions() {
        guard !spillFailed else { return }
        if spill == nil { spill = SessionSpill() }
        guard let spill else {
            spillFailed = true
            return
        }
        // A session about to be handed over whole (``takeCompleted(statistics:_:)``) stays in memory.
        let handing = Set(completed)
        let keys = sessions.compactMap { $0.value.tagged && !$0.value.crumbs.isEmpty && !handing.contains($0.key) ? $0.key : nil }.sorted()
        let blocks = keys.map { key in
            var block: [UInt8] = []
            HeldCrumb.encode(sessions[key]!.crumbs, into: &block)
            return (key, block)
        }
        guard spill.spill(blocks) else {
            spillFailed = true
            return
        }
        for key in keys { sessions[key]!.crumbs = [] }
        held = 0
    }

    /// The session tag that ties several events of one app run together, if any.
    static func sessionTag(_ document: JSONDocument, _ event: JSONDocument.Node) -> String? {
        let names: Set<String> = ["session_id", "session.id", "sessionId", "session"]
        if let tags = document.member(event, "tags") {
            switch document.kind(tags) {
            case .object:
                for (key, value) in document.members(tags) where names.contains(key) {
                    if let text = document.text(value), !text.isEmpty { return text }
                }
            case .array:
                for tag in document.elements(tags) {
                    // The API's [{"key": …, "value": …}] and the SDK's [["key", "value"]].
                    if let key = document.member(tag, "key").flatMap({ document.string($0) }), names.contains(key),
                        let value = document.member(tag, "value").flatMap({ document.text($0) }), !value.isEmpty
                    {
                        return value
                    }
                    let pair = document.elements(tag)
                    if pair.count == 2, let key = document.string(pair[0]), names.contains(key), let value = document.text(pair[1]), !value.isEmpty { return value }
                }
            default: break
            }
        }
        if let id = document.member(event, "contexts", "session", "id").flatMap({ document.text($0) }), !id.isEmpty { return id }
        return nil
    }

    /// `session.start`'s fields from the event's `contexts` and `release`.
    static func makeSession(_ key: String, sourceSession: String, _ document: JSONDocument, _ event: JSONDocument.Node) -> ImportedSession {
        func string(_ path: [String]) -> String? { document.nonEmptyString(document.member(event, path: path)) }
        let release = string(["release"]) ?? document.member(event, "release", "version").flatMap { document.string($0) }
        let app =
            string(["contexts", "app", "app_identifier"]) ?? string(["contexts", "app", "app_name"]) ?? release.map { String($0.split(separator: "@").first ?? "") } ?? "sentry"
        var session = ImportedSession(id: key, source: .sentry, app: app, sourceSession: sourceSession)
        session.version = string(["contexts", "app", "app_version"]) ?? release.flatMap { $0.split(separator: "@").dropFirst().first.map(String.init) }
        if let os = string(["contexts", "os", "name"]) { session.os = [os, string(["contexts", "os", "version"])].compactMap { $0 }.joined(separator: " ") }
        session.device = string(["contexts", "device", "model"])
        return session
    }
}
