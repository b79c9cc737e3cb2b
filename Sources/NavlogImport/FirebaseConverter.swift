import NavlogEvents

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
    public static var lifecycleEvents: Set<String> { Set(lifecycleEventNames.map { "\($0)" }) }
    /// ``lifecycleEvents`` as the converter compares them with a row's `event_name`, in place.
    private static let lifecycleEventNames: [StaticString] = ["first_open", "session_start", "app_update", "os_update"]

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
    private static let valueFields: [StaticString] = ["string_value", "int_value", "double_value", "float_value"]

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

        /// Offers the row's `app_info` and `device` fields, each kept from the earliest row that has it.
        mutating func offerInfo(of row: JSONDocument.Node, _ document: JSONDocument, rank: RowKey) {
            func string(_ object: StaticString, _ key: StaticString) -> String? { document.nonEmptyString(document.member(row, object, key)) }
            offer(\.app, string("app_info", "id"), rank: rank)
            offer(\.version, string("app_info", "version"), rank: rank)
            offer(
                \.os,
                string("device", "operating_system").map { os in
                    // BigQuery's operating_system_version usually repeats the name ("iOS 17.4").
                    guard let version = string("device", "operating_system_version") else { return os }
                    return version.hasPrefix(os) ? version : os + " " + version
                }, rank: rank)
            offer(\.device, string("device", "mobile_model_name"), rank: rank)
        }
    }

    /// Where a row belongs: its session, its place in the session's order, and the parameters
    /// a `screen_view` is read for.
    private struct RowPlace {
        /// `<user_pseudo_id>:<ga_session_id>`, as bytes (a string is made once per session).
        var sourceSession: [UInt8]
        var rank: RowKey
        var parameters: Parameters
    }

    /// The sessions read, in the order first read; ``sessionIndex`` finds one by its key.
    private var sessions: [SessionState] = []
    /// Each session's key, by index (the order the sessions are written in).
    private var sessionKeys: [String] = []
    /// Each session's key (`firebase:<user_pseudo_id>:<ga_session_id>`) → its index in ``sessions``.
    private var sessionIndex = ByteStringTable()
    /// A row's session key, built here for each row (no string made unless the session is new).
    private var keyBuffer: [UInt8] = []
    private var strings = StringInterner()

    /// A converter with nothing read.
    public init() {}

    public mutating func convert(_ document: JSONDocument, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void) {
        document.forEachRecord { row, path in convertRow(document, row, path: path, line: line, statistics: &statistics, report: report) }
    }

    /// An integer written as a JSON number or as a string of digits (BigQuery's INT64 in JSON).
    static func integer(_ document: JSONDocument, _ node: JSONDocument.Node) -> Int64? {
        if let value = document.integer(node) ?? document.digitString(node) { return value }
        if let text = document.numberText(node) ?? document.string(node) {
            if let value = Int64(text) { return value }
            if let value = Double(text), value == value.rounded(), abs(value) < 9e18 { return Int64(value) }
        }
        return nil
    }

    /// Adds one row to its session. The row's name is read first, so that the rows of kinds
    /// navlog does not import (most of an export) are counted without reading more of them.
    private mutating func convertRow(
        _ document: JSONDocument, _ row: JSONDocument.Node, path: String, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void
    ) {
        statistics.records += 1
        let issues = RecordIssues(document: document, path: path, line: line, skipped: "the row")
        do throws(ImportIssue) {
            // Compared in place: most rows are of other events, and no string is made for them.
            let name = try issues.stringNode(row, "event_name", of: "a BigQuery export row")
            let isScreen = document.stringEquals(name, "screen_view")
            guard isScreen || Self.lifecycleEventNames.contains(where: { document.stringEquals(name, $0) }) else {
                statistics.ignored += 1
                return
            }
            let place = try Self.place(of: row, issues)
            try add(row, place, isScreen: isScreen, issues)
        } catch {
            statistics.skip(error, report)
        }
    }

    /// Reads where a row belongs: its time, its user and `ga_session_id` (without both its
    /// session is unknown), and its bundle and index in the bundle (its order among rows of the
    /// same time; 0 when absent).
    private static func place(of row: JSONDocument.Node, _ issues: RecordIssues) throws(ImportIssue) -> RowPlace {
        let document = issues.document
        guard let timeNode = document.member(row, "event_timestamp") else { throw issues.issue(.timestamp, row, "event_timestamp", "the row has no event_timestamp") }
        let timestamp = try issues.timestamp(timeNode, "event_timestamp", unit: .microseconds)
        guard let userNode = document.member(row, "user_pseudo_id") else { throw issues.issue(.shape, row, "user_pseudo_id", "the row has no user_pseudo_id") }
        guard let user = document.text(userNode), !user.isEmpty else {
            throw issues.issue(.shape, userNode, "user_pseudo_id", "expected a non-empty string, found \(document.kind(userNode).name)")
        }
        let parameters = try Self.parameters(of: row, issues)
        guard let sessionNode = parameters.session else {
            throw issues.issue(.shape, row, "event_params", "the row has no ga_session_id parameter, so its session is unknown")
        }
        guard let gaSession = Self.integer(document, sessionNode) else {
            throw issues.issue(.shape, sessionNode, "event_params.ga_session_id", "expected an integer, found \(document.kind(sessionNode).name)")
        }
        let bundle = document.member(row, "event_bundle_sequence_id").flatMap { Self.integer(document, $0) } ?? 0
        let batchIndex = document.member(row, "batch_event_index").flatMap { Self.integer(document, $0) } ?? 0
        var sourceSession = Array(user.utf8)
        sourceSession.append(UInt8(ascii: ":"))
        sourceSession.append(contentsOf: String(gaSession).utf8)
        return RowPlace(sourceSession: sourceSession, rank: RowKey(timestamp: timestamp, bundle: bundle, index: batchIndex), parameters: parameters)
    }

    /// The `event_params` navlog reads (`[{key, value: {string_value | int_value | float_value |
    /// double_value}}]`): only those are kept, not a dictionary of every parameter of every
    /// row, and a later one of the same key wins.
    private static func parameters(of row: JSONDocument.Node, _ issues: RecordIssues) throws(ImportIssue) -> Parameters {
        let document = issues.document
        var parameters = Parameters()
        guard let list = document.member(row, "event_params") else { return parameters }
        guard document.kind(list) == .array else {
            throw issues.issue(.shape, list, "event_params", "expected an array of {key, value}, found \(document.kind(list).name)")
        }
        for (index, parameter) in document.elements(list).enumerated() {
            guard let key = document.member(parameter, "key"), document.kind(key) == .string, let value = document.member(parameter, "value"),
                document.kind(value) == .object
            else {
                throw issues.issue(.shape, parameter, "event_params[\(index)]", "expected {\"key\": string, \"value\": {…}}")
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
        return parameters
    }

    /// Adds a row to its session: every row offers its `session.start` fields (also a
    /// `screen_view` skipped for want of a screen name), a lifecycle row can only move the
    /// session's start earlier, a `screen_view` is an appearance.
    private mutating func add(_ row: JSONDocument.Node, _ place: RowPlace, isScreen: Bool, _ issues: RecordIssues) throws(ImportIssue) {
        keyBuffer.removeAll(keepingCapacity: true)
        keyBuffer.append(contentsOf: "firebase:".utf8)
        keyBuffer.append(contentsOf: place.sourceSession)
        let (reference, inserted) = keyBuffer.withUnsafeBytes { sessionIndex.insert($0) }
        let index = Int(reference)
        if inserted {
            let sourceSession = String(decoding: place.sourceSession, as: UTF8.self)
            let key = "firebase:" + sourceSession
            sessionKeys.append(key)
            sessions.append(SessionState(session: ImportedSession(id: key, source: .firebase, app: "firebase", sourceSession: sourceSession)))
        }
        // Changed in place, so that its observations are not copied.
        sessions[index].offerInfo(of: row, issues.document, rank: place.rank)
        guard isScreen else {
            sessions[index].session.earliest = min(sessions[index].session.earliest ?? .max, place.rank.timestamp)
            return
        }
        let observation = try screenView(row, place, issues)
        sessions[index].session.observations.append(observation)
    }

    /// A `screen_view`'s appearance: of the screen class (else the screen name), told apart by
    /// `firebase_screen_id`, as the window's screen (Firebase records no presentations).
    private mutating func screenView(_ row: JSONDocument.Node, _ place: RowPlace, _ issues: RecordIssues) throws(ImportIssue) -> ImportedObservation {
        let document = issues.document
        let screenClass = strings.nonEmpty(document, place.parameters.screenClass)
        let screenName = strings.nonEmpty(document, place.parameters.screen)
        guard let className = screenClass ?? screenName else {
            throw issues.issue(.shape, row, "event_params", "a screen_view needs firebase_screen_class or firebase_screen")
        }
        let screenID = place.parameters.screenID.flatMap { document.text($0) }
        let internedClass = strings.cut(className)
        // The id of a screen instance is not interned: most are read once, and the interner
        // would keep each one's bytes beside its string (56 MiB more at a 1 GB export).
        let controller = ImportedController(
            id: screenID.map { ImportedController.cut(className + "#" + $0) } ?? internedClass, className: internedClass,
            title: screenName.map { strings.cut($0) })
        // Rows are ordered by time, then bundle sequence, then index in the batch.
        let rank = place.rank
        let order = Int(truncatingIfNeeded: min(max(rank.bundle, 0), 1 << 40) << 20 | min(max(rank.index, 0), (1 << 20) - 1))
        return ImportedObservation(timestamp: rank.timestamp, kind: .appear(controller, .screen), order: order)
    }

    public mutating func finish(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {
        let keys = sessionKeys
        sessionKeys = []
        sessionIndex = ByteStringTable()
        // Sessions in order of their keys.
        for index in keys.indices.sorted(by: { keys[$0] < keys[$1] }) {
            // Taken out, so that its observations are not copied.
            let state = sessions[index]
            sessions[index] = SessionState(session: ImportedSession(id: "", source: .firebase, app: "", sourceSession: ""))
            guard !state.session.observations.isEmpty else { continue }
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
        sessions = []
    }
}
