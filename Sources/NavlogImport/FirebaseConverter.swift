/// Firebase Analytics events as exported to BigQuery (`events_YYYYMMDD` rows, written as JSON
/// Lines by `bq extract --destination_format NEWLINE_DELIMITED_JSON`) → navlog sessions.
///
/// `screen_view` rows (logged from a swizzled viewDidAppear when the screen's name, class or
/// id changes) become did-appearances of the screen (`firebase_screen_class`, told apart by
/// `firebase_screen_id`). The app lifecycle rows (`first_open`, `session_start`, `app_update`,
/// `os_update`) start the session but record no navigation; every other event name is ignored
/// and counted. A session is (`user_pseudo_id`, the `ga_session_id` parameter); its rows are put
/// in order by `event_timestamp` (µs, a number or a string), then `event_bundle_sequence_id`,
/// then `batch_event_index`. A row repeated exactly (same time, bundle and index) is kept once.
public struct FirebaseConverter: RecordConverter {
    /// Event names of the app lifecycle: they begin a session and record no navigation.
    public static let lifecycleEvents: Set<String> = ["first_open", "session_start", "app_update", "os_update"]

    private struct RowKey: Hashable {
        var timestamp: Int64
        var bundle: Int64
        var index: Int64
    }

    /// The `event_params` a row is read for (the node of each one's value).
    private struct Parameters {
        var session: JSONDocument.Node?
        var screenClass: JSONDocument.Node?
        var screen: JSONDocument.Node?
        var screenID: JSONDocument.Node?
    }

    /// The members of a parameter's `value` that hold it, in the order they are looked for.
    private static let valueFields = ["string_value", "int_value", "double_value", "float_value"]

    private struct SessionState {
        var session: ImportedSession
        /// Each `session.start` field with the row it came from: the earliest row that has it
        /// (by time, bundle, index), so that the order of the input does not matter.
        var app: (rank: RowKey, value: String)?
        var version: (rank: RowKey, value: String)?
        var os: (rank: RowKey, value: String)?
        var device: (rank: RowKey, value: String)?

        /// Keeps `value` for `field` if this row is earlier than the one it has; `value` is read
        /// only then (most rows are not a session's earliest).
        mutating func offer(
            _ field: WritableKeyPath<SessionState, (rank: RowKey, value: String)?>, _ value: @autoclosure () -> String?, rank: RowKey
        ) {
            if let kept = self[keyPath: field], (kept.rank.timestamp, kept.rank.bundle, kept.rank.index) <= (rank.timestamp, rank.bundle, rank.index) { return }
            guard let value = value() else { return }
            self[keyPath: field] = (rank, value)
        }
    }

    private var sessions: [String: SessionState] = [:]
    private var strings = StringInterner()

    /// A converter with nothing read.
    public init() {}

    public mutating func convert(_ document: JSONDocument, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void) {
        let root = document.root
        if document.kind(root) == .array {
            for (index, row) in document.elements(root).enumerated() { convertRow(document, row, path: "[\(index)]", line: line, statistics: &statistics, report: report) }
        } else {
            convertRow(document, root, path: "", line: line, statistics: &statistics, report: report)
        }
    }

    /// An integer written as a JSON number or as a string of digits (BigQuery's INT64 in JSON).
    static func integer(_ document: JSONDocument, _ node: JSONDocument.Node) -> Int64? {
        if let text = document.numberText(node) ?? document.string(node) {
            if let value = Int64(text) { return value }
            if let value = Double(text), value == value.rounded(), abs(value) < 9e18 { return Int64(value) }
        }
        return nil
    }

    private mutating func convertRow(
        _ document: JSONDocument, _ row: JSONDocument.Node, path: String, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void
    ) {
        statistics.records += 1
        let issues = RecordIssues(document: document, path: path, line: line, skipped: "the row")
        func issue(_ code: ImportIssue.Code, _ node: JSONDocument.Node, _ field: String, _ reason: String) {
            statistics.skipped += 1
            report(issues.issue(code, node, field, reason))
        }
        let name: String
        switch issues.stringMember(row, "event_name", of: "a BigQuery export row") {
        case .success(let text): name = text
        case .failure(let problem):
            statistics.skipped += 1
            report(problem)
            return
        }
        let isScreen = name == "screen_view"
        guard isScreen || Self.lifecycleEvents.contains(name) else {
            statistics.ignored += 1
            return
        }
        guard let timeNode = document.member(row, "event_timestamp") else {
            issue(.timestamp, row, "event_timestamp", "the row has no event_timestamp")
            return
        }
        let timestamp: Int64
        switch ImportTimestamp.microseconds(document, timeNode, unit: .microseconds) {
        case .success(let value): timestamp = value
        case .failure(let error):
            issue(.timestamp, timeNode, "event_timestamp", error.reason)
            return
        }
        guard let userNode = document.member(row, "user_pseudo_id") else {
            issue(.shape, row, "user_pseudo_id", "the row has no user_pseudo_id")
            return
        }
        guard let user = document.text(userNode), !user.isEmpty else {
            issue(.shape, userNode, "user_pseudo_id", "expected a non-empty string, found \(document.kind(userNode).name)")
            return
        }
        // event_params: [{key, value: {string_value | int_value | float_value | double_value}}].
        // Only the parameters read below are kept (a later one of the same key wins).
        var parameters = Parameters()
        if let list = document.member(row, "event_params") {
            guard document.kind(list) == .array else {
                issue(.shape, list, "event_params", "expected an array of {key, value}, found \(document.kind(list).name)")
                return
            }
            for (index, parameter) in document.elements(list).enumerated() {
                guard let key = document.member(parameter, "key"), document.kind(key) == .string, let value = document.member(parameter, "value"),
                    document.kind(value) == .object
                else {
                    issue(.shape, parameter, "event_params[\(index)]", "expected {\"key\": string, \"value\": {…}}")
                    return
                }
                let slot: WritableKeyPath<Parameters, JSONDocument.Node?>
                if document.stringEquals(key, "ga_session_id") {
                    slot = \.session
                } else if document.stringEquals(key, "firebase_screen_class") {
                    slot = \.screenClass
                } else if document.stringEquals(key, "firebase_screen") {
                    slot = \.screen
                } else if document.stringEquals(key, "firebase_screen_id") {
                    slot = \.screenID
                } else {
                    continue
                }
                for field in Self.valueFields {
                    if let node = document.member(value, field), document.kind(node) != .null {
                        parameters[keyPath: slot] = node
                        break
                    }
                }
            }
        }
        guard let sessionNode = parameters.session else {
            issue(.shape, row, "event_params", "the row has no ga_session_id parameter, so its session is unknown")
            return
        }
        guard let gaSession = Self.integer(document, sessionNode) else {
            issue(.shape, sessionNode, "event_params.ga_session_id", "expected an integer, found \(document.kind(sessionNode).name)")
            return
        }
        let bundle = document.member(row, "event_bundle_sequence_id").flatMap { Self.integer(document, $0) } ?? 0
        let batchIndex = document.member(row, "batch_event_index").flatMap { Self.integer(document, $0) } ?? 0
        let sourceSession = user + ":" + String(gaSession)
        let key = "firebase:" + sourceSession
        // Taken out while it is added to, so that its observations are not copied.
        var state =
            sessions.removeValue(forKey: key) ?? SessionState(session: ImportedSession(id: key, source: .firebase, app: "firebase", sourceSession: sourceSession))
        defer { sessions[key] = state }
        do {
            func string(_ object: String, _ key: String) -> String? {
                document.member(row, object, key).flatMap { document.string($0) }.flatMap { $0.isEmpty ? nil : $0 }
            }
            let rank = RowKey(timestamp: timestamp, bundle: bundle, index: batchIndex)
            state.offer(\.app, string("app_info", "id"), rank: rank)
            state.offer(\.version, string("app_info", "version"), rank: rank)
            state.offer(
                \.os,
                string("device", "operating_system").map { os in
                    // BigQuery's operating_system_version usually repeats the name ("iOS 17.4").
                    guard let version = string("device", "operating_system_version") else { return os }
                    return version.hasPrefix(os) ? version : os + " " + version
                }, rank: rank)
            state.offer(\.device, string("device", "mobile_model_name"), rank: rank)
        }
        guard isScreen else {
            state.session.earliest = min(state.session.earliest ?? .max, timestamp)
            return
        }
        let screenClass = parameters.screenClass.flatMap { document.string($0) }.flatMap { $0.isEmpty ? nil : $0 }
        let screenName = parameters.screen.flatMap { document.string($0) }.flatMap { $0.isEmpty ? nil : $0 }
        guard let className = screenClass ?? screenName else {
            issue(.shape, row, "event_params", "a screen_view needs firebase_screen_class or firebase_screen")
            return
        }
        let screenID = parameters.screenID.flatMap { document.text($0) }
        let internedClass = strings.intern(ImportedController.cut(className))
        let controller = ImportedController(
            id: strings.intern(ImportedController.cut(screenID.map { className + "#" + $0 } ?? className)), className: internedClass,
            title: strings.intern(screenName.map { ImportedController.cut($0) }))
        // Rows are ordered by time, then bundle sequence, then index in the batch.
        let order = Int(truncatingIfNeeded: min(max(bundle, 0), 1 << 40) << 20 | min(max(batchIndex, 0), (1 << 20) - 1))
        state.session.observations.append(ImportedObservation(timestamp: timestamp, kind: .appear(controller, .screen), order: order))
    }

    public mutating func finish(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {
        for key in sessions.keys.sorted() {
            guard let state = sessions.removeValue(forKey: key), !state.session.observations.isEmpty else { continue }
            var session = state.session
            // A row repeated exactly (same time, bundle and index: `order` holds the last two) is
            // kept once; found here, where the rows are in order, rather than with a set per row.
            session.observations.sort { ($0.timestamp, $0.order) < ($1.timestamp, $1.order) }
            var kept = 0
            for index in session.observations.indices {
                if kept > 0, session.observations[kept - 1].timestamp == session.observations[index].timestamp,
                    session.observations[kept - 1].order == session.observations[index].order
                {
                    statistics.superseded += 1
                    continue
                }
                session.observations[kept] = session.observations[index]
                kept += 1
            }
            session.observations.removeSubrange(kept...)
            session.app = state.app?.value ?? "firebase"
            session.version = state.version?.value
            session.os = state.os?.value
            session.device = state.device?.value
            try body(session)
        }
    }
}
