/// Datadog RUM view events (dd-sdk-ios, DataDog/rum-events-format's view schema) → navlog sessions.
///
/// Takes raw RUM events, one per record (JSON Lines), or pages of the RUM events search API
/// (`{"data": [{"attributes": {"attributes": EVENT, "timestamp": …}}], …}`). Events of other
/// `type`s (action, resource, error, long_task) are ignored and counted. A view is sent again
/// each time it changes, with a higher `_dd.document_version`: each `view.id`'s highest
/// version is kept. A view is a did-appear at `date` (ms) and, once it is no longer active,
/// a did-disappear `view.time_spent` (ns) later; a gap of a second or more before the next view
/// of the session is taken as time in the background (the SDK stops the view when the app
/// leaves the foreground and starts a new one when it returns).
public struct DatadogConverter: RecordConverter {
    /// The latest version of one view, kept compact.
    private struct View {
        var version: Int64
        var session: String
        var start: Int64
        var timeSpent: Int64
        var active: Bool
        var controller: ImportedController
        var order: Int
    }

    /// `session.start`'s fields of a session, from its earliest view.
    private struct SessionInfo {
        var start: Int64
        var version: Int64
        var app: String
        var appVersion: String?
        var os: String?
        var device: String?
    }

    /// What navlog reads of a view event, checked.
    private struct ViewFields {
        var viewID: ViewKey
        /// The session id, interned.
        var session: String
        /// `view.name`, else `view.url`: what the screen is called (interned).
        var className: String
        /// `view.url` (interned).
        var url: String?
        /// `_dd.document_version` (0 when absent).
        var version: Int64
        /// When the view started (µs).
        var start: Int64
        /// `view.time_spent` (ns).
        var timeSpent: Double
    }

    /// The least gap between two views taken as the app being in the background (µs).
    public static let backgroundGap: Int64 = 1_000_000

    /// A view id, kept as two independent 64-bit hashes of its bytes (a collision of both is
    /// out of reach: 2⁻¹²⁸ per pair), so a million views do not each keep a 36-byte string.
    private struct ViewKey: Equatable {
        var first: UInt64
        var second: UInt64

        init(utf8 id: UnsafeRawBufferPointer) {
            var a: UInt64 = 0xcbf2_9ce4_8422_2325
            var b: UInt64 = 0x8422_2325_cbf2_9ce4
            for byte in id {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                b = (b &+ UInt64(byte)) &* 0x9e37_79b9_7f4a_7c15
                b ^= b >> 29
            }
            first = a
            second = b
        }
    }

    /// Where each view id's latest version is in ``views``: open addressing on the key's
    /// first hash (already uniform, so no second hashing as a `Dictionary` would do per lookup).
    private struct ViewPositions {
        /// 0 for an empty slot, else the view's position + 1.
        private var slots = [Int32](repeating: 0, count: 1024)
        /// The key of the view at each position.
        private var keys: [ViewKey] = []

        /// The position of the view with `key`, or the slot where it would go.
        private func find(_ key: ViewKey) -> (position: Int32?, slot: Int) {
            slots.withUnsafeBufferPointer { slots in
                let mask = slots.count - 1
                var slot = Int(truncatingIfNeeded: key.first) & mask
                while true {
                    let taken = slots[slot]
                    if taken == 0 { return (nil, slot) }
                    if keys[Int(taken - 1)] == key { return (taken - 1, slot) }
                    slot = (slot + 1) & mask
                }
            }
        }

        /// The position of the view with `key`, if one was added.
        func position(of key: ViewKey) -> Int32? { find(key).position }

        /// Adds `key` as the next position (the view appended to ``views``).
        mutating func append(_ key: ViewKey) {
            let slot = find(key).slot
            keys.append(key)
            slots[slot] = Int32(keys.count)
            if keys.count * 2 > slots.count { grow() }
        }

        private mutating func grow() {
            slots = [Int32](repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for (index, key) in keys.enumerated() {
                var slot = Int(truncatingIfNeeded: key.first) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(index + 1)
            }
        }
    }

    /// The latest version of each view, in the order first read, and where each view id is.
    private var views: [View] = []
    private var positions = ViewPositions()
    private var sessionInfo: [String: SessionInfo] = [:]
    private var order = 0
    private var strings = StringInterner()

    /// A converter with nothing read.
    public init() {}

    public mutating func convert(_ document: JSONDocument, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void) {
        let root = document.root
        if let data = document.member(root, "data"), document.kind(data) == .array {
            // A page of the search API.
            for (index, item) in document.elements(data).enumerated() {
                let path = "data[\(index)]"
                guard let event = document.member(item, "attributes", "attributes"), document.kind(event) == .object else {
                    statistics.records += 1
                    let issues = RecordIssues(document: document, path: path, line: line, skipped: "the event")
                    let reason = "expected the RUM event as an object at attributes.attributes; it was skipped"
                    statistics.skip(issues.located(.shape, item, "attributes.attributes", reason), report)
                    continue
                }
                let fallback = document.member(item, "attributes", "timestamp")
                convertEvent(document, event, fallbackTime: fallback, path: path + ".attributes.attributes", line: line, statistics: &statistics, report: report)
            }
        } else {
            document.forEachRecord { event, path in
                convertEvent(document, event, fallbackTime: nil, path: path, line: line, statistics: &statistics, report: report)
            }
        }
    }

    /// Reads one RUM event: a view is kept if it is its id's latest version so far; other types
    /// are ignored. The type is read first, so that the events navlog does not import (actions,
    /// resources, errors) are counted without reading more of them.
    /// - Parameter fallbackTime: the search API's `attributes.timestamp`, for an event without `date`.
    private mutating func convertEvent(
        _ document: JSONDocument, _ event: JSONDocument.Node, fallbackTime: JSONDocument.Node?, path: String, line: Int, statistics: inout ImportStatistics,
        report: (ImportIssue) -> Void
    ) {
        statistics.records += 1
        let issues = RecordIssues(document: document, path: path, line: line, skipped: "the event")
        do throws(ImportIssue) {
            let type = try issues.stringNode(event, "type", of: "a RUM event")
            guard issues.document.stringEquals(type, "view") else {
                statistics.ignored += 1
                return
            }
            let fields = try viewFields(of: event, fallbackTime: fallbackTime, issues)
            keep(fields, of: event, document, statistics: &statistics)
        } catch {
            statistics.skip(error, report)
        }
    }

    /// Reads and checks what every view event must have, in the order its issues are reported:
    /// its view and session ids, a name for its screen, its document version, its start and
    /// its time spent.
    private mutating func viewFields(of event: JSONDocument.Node, fallbackTime: JSONDocument.Node?, _ issues: RecordIssues) throws(ImportIssue) -> ViewFields {
        let document = issues.document
        let viewNode = try Self.requiredString(event, "view", "id", issues)
        let viewID = document.withStringBytes(viewNode) { ViewKey(utf8: $0) }!
        let session = strings.intern(document, try Self.requiredString(event, "session", "id", issues))!
        let view = document.member(event, "view")
        let name = strings.nonEmpty(document, view.flatMap { document.member($0, "name") })
        let url = strings.nonEmpty(document, view.flatMap { document.member($0, "url") })
        guard let className = name ?? url else { throw issues.issue(.shape, event, "view.name", "a view event needs view.name or view.url to name its screen") }
        var version: Int64 = 0
        if let node = document.member(event, "_dd", "document_version") {
            guard let value = document.number(node), value >= 0, value == value.rounded() else {
                throw issues.issue(.shape, node, "_dd.document_version", "expected a whole number, found \(document.kind(node).name)")
            }
            version = Int64(min(value, 9e18))
        }
        let start = try Self.startTime(of: event, fallbackTime: fallbackTime, issues)
        let spent = try Self.timeSpent(of: event, issues)
        return ViewFields(viewID: viewID, session: session, className: className, url: url, version: version, start: start, timeSpent: spent)
    }

    /// The node of the non-empty string at `object.key`, which a view event must have (`view.id`, `session.id`).
    private static func requiredString(_ event: JSONDocument.Node, _ object: StaticString, _ key: StaticString, _ issues: RecordIssues) throws(ImportIssue) -> JSONDocument.Node {
        let document = issues.document
        guard let node = document.member(event, object, key) else { throw issues.issue(.shape, event, "\(object).\(key)", "a view event needs \(object).\(key)") }
        guard document.withStringBytes(node, { !$0.isEmpty }) == true else {
            throw issues.issue(.shape, node, "\(object).\(key)", "expected a non-empty string, found \(document.kind(node).name)")
        }
        return node
    }

    /// When the view started (µs): `date` (ms); in a search page, where the event may have no
    /// `date`, the item's `attributes.timestamp`.
    private static func startTime(of event: JSONDocument.Node, fallbackTime: JSONDocument.Node?, _ issues: RecordIssues) throws(ImportIssue) -> Int64 {
        if let node = issues.document.member(event, "date") { return try issues.timestamp(node, "date", unit: .milliseconds) }
        if let fallbackTime { return try issues.timestamp(fallbackTime, "timestamp", unit: .milliseconds) }
        throw issues.issue(.timestamp, event, "date", "a view event needs date (ms since the epoch)")
    }

    /// `view.time_spent` (ns): a number, or a string holding one (exports re-serialised as text).
    private static func timeSpent(of event: JSONDocument.Node, _ issues: RecordIssues) throws(ImportIssue) -> Double {
        let document = issues.document
        guard let spentNode = document.member(event, "view", "time_spent") else {
            throw issues.issue(.shape, event, "view.time_spent", "a view event needs view.time_spent (ns)")
        }
        let spent: Double
        if let number = document.number(spentNode) {
            spent = number
        } else if let text = document.string(spentNode), let number = Double(text) {
            spent = number
        } else {
            throw issues.issue(.shape, spentNode, "view.time_spent", "expected a number of ns, found \(document.kind(spentNode).name)")
        }
        guard spent >= 0, spent < 9e18 else { throw issues.issue(.shape, spentNode, "view.time_spent", "\(spent) ns is not a duration") }
        return spent
    }

    /// Keeps a view unless a version of it as recent was read already (either way an earlier
    /// read of its id counts as superseded): the SDK sends a view again each time it changes,
    /// and the versions can come in any order.
    private mutating func keep(_ fields: ViewFields, of event: JSONDocument.Node, _ document: JSONDocument, statistics: inout ImportStatistics) {
        let key = fields.viewID
        let position = positions.position(of: key)
        if let position {
            statistics.superseded += 1
            if views[Int(position)].version >= fields.version { return }
        }
        let screenID = strings.cut(fields.url ?? fields.className)
        let sessionKey = fields.session
        let view = View(
            version: fields.version, session: sessionKey, start: fields.start, timeSpent: Int64(fields.timeSpent / 1000),
            active: document.member(event, "view", "is_active").flatMap { document.bool($0) } ?? false,
            controller: ImportedController(id: screenID, className: strings.cut(fields.className)), order: order)
        if let position {
            views[Int(position)] = view
        } else {
            positions.append(key)
            views.append(view)
        }
        offerSessionInfo(sessionKey, start: fields.start, version: fields.version, from: event, document)
        order += 1
    }

    /// Keeps `session.start`'s fields from the latest version of the session's earliest view,
    /// whatever order they come in. The fields are read only when they are kept: most events
    /// are not their session's earliest.
    private mutating func offerSessionInfo(_ sessionKey: String, start: Int64, version: Int64, from event: JSONDocument.Node, _ document: JSONDocument) {
        if let kept = sessionInfo[sessionKey], (start, -version) >= (kept.start, -kept.version) { return }
        func string(_ first: StaticString, _ second: StaticString? = nil) -> String? {
            document.nonEmptyString(second.map { document.member(event, first, $0) } ?? document.member(event, first))
        }
        let os = string("os", "name").map { [$0, string("os", "version")].compactMap { $0 }.joined(separator: " ") }
        sessionInfo[sessionKey] = SessionInfo(
            start: start, version: version, app: strings.intern(string("application", "id") ?? string("service") ?? "datadog"),
            appVersion: strings.intern(string("version")), os: strings.intern(os),
            device: strings.intern(string("device", "model") ?? string("device", "name")))
    }

    public mutating func finish(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {
        // One array sorted by session, then start: no second copy of the views per session.
        positions = ViewPositions()
        var all = views
        views = []
        all.sort { ($0.session, $0.start, $0.order) < ($1.session, $1.start, $1.order) }
        var lower = 0
        while lower < all.count {
            var upper = lower + 1
            while upper < all.count, all[upper].session == all[lower].session { upper += 1 }
            let sessionID = all[lower].session
            let sessionViews = all[lower..<upper]
            lower = upper
            let info = sessionInfo.removeValue(forKey: sessionID)
            var session = ImportedSession(id: "datadog:" + sessionID, source: .datadog, app: info?.app ?? "datadog", sourceSession: sessionID)
            session.version = info?.appVersion
            session.os = info?.os
            session.device = info?.device
            var order = 0
            func add(_ timestamp: Int64, _ kind: ImportedObservation.Kind) {
                session.observations.append(ImportedObservation(timestamp: timestamp, kind: kind, order: order))
                order += 1
            }
            // Each view is a controller of its own (a push onto a controller of the same class is a
            // new screen view), except a view that resumes the same screen after the background.
            var controller = ImportedController(id: "", className: "")
            var lastChild: ImportedController?
            for index in sessionViews.indices {
                let view = sessionViews[index]
                // UIKit calls an embedded child's viewDidAppear from its parent's, so a view that
                // starts in the same millisecond as the one before it is a child of that one: part
                // of its screen (F1), not a screen that replaced it.
                // The SDK restarts the current view after the background: a child's view resumes alone.
                let previous = index > sessionViews.startIndex ? sessionViews[index - 1] : nil
                let resumesChild =
                    previous.map { !$0.active && view.start - ($0.start + $0.timeSpent) >= Self.backgroundGap && $0.controller == view.controller } ?? false
                    && lastChild?.className == view.controller.className
                if let previous, !previous.active, view.start == previous.start || resumesChild {
                    if resumesChild { add(view.start, .foreground) }
                    let child =
                        resumesChild
                        ? lastChild!
                        : ImportedController(
                            id: view.controller.id + "#" + String(index - sessionViews.startIndex + 1), className: view.controller.className, title: view.controller.title)
                    lastChild = child
                    add(view.start, .appear(child, .child))
                    if !view.active {
                        let end = view.start + view.timeSpent
                        let next = index + 1 < sessionViews.endIndex ? sessionViews[index + 1].start : Int64.max
                        add(min(end, next), .disappear(child))
                        if next != .max, next - end >= Self.backgroundGap { add(end, .background) }
                    }
                    continue
                }
                lastChild = nil
                var resumed = false
                if index > sessionViews.startIndex {
                    let previous = sessionViews[index - 1]
                    if !previous.active, view.start - (previous.start + previous.timeSpent) >= Self.backgroundGap {
                        add(view.start, .foreground)
                        resumed = previous.controller == view.controller
                    }
                }
                if !resumed {
                    controller = ImportedController(
                        id: view.controller.id + "#" + String(index - sessionViews.startIndex + 1), className: view.controller.className, title: view.controller.title)
                }
                add(view.start, .appear(controller, .screen))
                guard !view.active else { continue }
                let end = view.start + view.timeSpent
                // A later view that starts before this one ended stops it then (the SDK keeps one active view).
                let next = index + 1 < sessionViews.endIndex ? sessionViews[index + 1].start : Int64.max
                add(min(end, next), .disappear(controller))
                if next != .max, next - end >= Self.backgroundGap { add(end, .background) }
            }
            try body(session)
        }
    }
}
