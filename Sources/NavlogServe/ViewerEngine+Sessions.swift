import Dispatch
import NavlogAnalytics
import NavlogStore

/// One line of the sessions page: a few words per session, so that 100k sessions fit in a few
/// megabytes and any page of them is sorted and filtered in memory.
struct SessionSummary: Sendable {
    var session: String
    var app: String
    var version: String
    var device: String
    var idiom: String
    var first: Int64
    var last: Int64
    var events: Int
    var anomalies: Int
    var ended: Bool
}

/// Every session's summary, and the log position they describe.
struct SessionSummaries {
    var rows: [SessionSummary]
    var through: UInt64
    /// When they were built (monotonic ns): a live log rebuilds them at most every few seconds.
    var builtAt: UInt64
}

/// The sessions page's question: filters, order and page.
struct SessionsQuery: Sendable, Hashable {
    /// Sort keys; a leading `-` sorts descending.
    static let sortKeys: Set<String> = ["first", "last", "duration", "events", "anomalies", "app", "version", "device", "session"]

    var app: String?
    var version: String?
    var device: String?
    var idiom: String?
    /// A part of the session id.
    var search: String?
    var withAnomalies = false
    var liveOnly = false
    var sort = "-first"
    var offset = 0
    var limit = 50
}

/// Collects one summary per session from the analytics scan's session rows.
private struct SummarySink: DerivedTableSink {
    var rows: [SessionSummary] = []

    mutating func session(_ row: SessionRow) {
        rows.append(
            SessionSummary(
                session: row.session, app: row.tags.app, version: row.tags.version, device: row.tags.device, idiom: row.tags.idiom, first: row.first,
                last: row.last, events: row.events, anomalies: row.anomalies, ended: row.ended))
    }
}

extension ViewerEngine {
    /// The summaries, rebuilt from the focus journals when the log grew (at most every
    /// `maximumAge` seconds while it keeps growing, so that a busy daemon does not make every
    /// page view a scan).
    func sessionSummaries(maximumAge seconds: Double = 2) throws -> SessionSummaries {
        let now = DispatchTime.now().uptimeNanoseconds
        if let summaries, summaries.through == newestLSN || Double(now - summaries.builtAt) < seconds * 1e9 {
            return summaries
        }
        var sink = SummarySink()
        if try !JournalScanner(index: index).scan(into: &sink) {
            sink = SummarySink()
            var scanner = DerivedTableScanner(reader: reader)
            try scanner.scan(into: &sink)
        }
        let built = SessionSummaries(rows: sink.rows, through: newestLSN, builtAt: now)
        summaries = built
        return built
    }

    /// The page of sessions `query` asks for, as the JSON of `GET /api/sessions`.
    func sessionsPage(_ query: SessionsQuery) throws -> [UInt8] {
        let all = try sessionSummaries()
        let search = query.search?.lowercased()
        let matching = all.rows.filter { row in
            if let app = query.app, row.app != app { return false }
            if let version = query.version, row.version != version { return false }
            if let device = query.device, row.device != device { return false }
            if let idiom = query.idiom, row.idiom != idiom { return false }
            if query.withAnomalies && row.anomalies == 0 { return false }
            if query.liveOnly && row.ended { return false }
            if let search, !search.isEmpty, !row.session.lowercased().contains(search) { return false }
            return true
        }
        let descending = query.sort.hasPrefix("-")
        let key = descending ? String(query.sort.dropFirst()) : query.sort
        func ordered(_ a: SessionSummary, _ b: SessionSummary) -> Bool {
            func compare<T: Comparable>(_ x: T, _ y: T) -> Bool? { x == y ? nil : (x < y) != descending }
            let decided: Bool? =
                switch key {
                case "last": compare(a.last, b.last)
                case "duration": compare(a.last - a.first, b.last - b.first)
                case "events": compare(a.events, b.events)
                case "anomalies": compare(a.anomalies, b.anomalies)
                case "app": compare(a.app, b.app)
                case "version": compare(a.version, b.version)
                case "device": compare(a.device, b.device)
                case "session": compare(a.session, b.session)
                default: compare(a.first, b.first)
                }
            return decided ?? (a.session < b.session)
        }
        // Only the requested page is sorted fully: a partial selection would do, but sorting
        // 100k small rows takes milliseconds.
        let sorted = matching.sorted(by: ordered)
        let page = sorted.dropFirst(query.offset).prefix(query.limit)
        var json = JSONBuffer()
        json.raw("{")
        json.key("total", first: true)
        json.number(matching.count)
        json.key("offset")
        json.number(query.offset)
        json.key("limit")
        json.number(query.limit)
        json.key("through")
        json.number(all.through)
        json.key("sessions")
        json.array(page) { json, row in
            json.raw("{")
            json.key("session", first: true)
            json.string(row.session)
            json.key("app")
            json.string(row.app)
            json.key("version")
            json.string(row.version)
            json.key("device")
            json.string(row.device)
            json.key("idiom")
            json.string(row.idiom)
            json.key("first")
            json.number(row.first)
            json.key("last")
            json.number(row.last)
            json.key("duration")
            json.number(row.last - row.first)
            json.key("events")
            json.number(row.events)
            json.key("anomalies")
            json.number(row.anomalies)
            json.key("ended")
            json.bool(row.ended)
            json.raw("}")
        }
        // The values each filter can take, for the page's drop-downs (over all sessions).
        json.key("facets")
        json.raw("{")
        for (number, (name, path)) in [("app", \SessionSummary.app), ("version", \.version), ("device", \.device), ("idiom", \.idiom)].enumerated() {
            json.key(name, first: number == 0)
            json.array(Set(all.rows.map { $0[keyPath: path] }).filter { !$0.isEmpty }.sorted()) { json, value in json.string(value) }
        }
        json.raw("}}")
        return json.bytes
    }
}
