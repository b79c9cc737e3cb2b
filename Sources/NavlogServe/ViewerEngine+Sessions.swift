import Dispatch
import NavlogAnalytics
import NavlogJSON
import NavlogStore

/// Every session's line of the sessions page, and the log position they describe. The lines are
/// the analytics scan's session rows, kept whole in memory (under 200 bytes a session, so 100k
/// sessions take some 20 MB): any page of them is sorted and filtered in memory.
struct SessionSummaries {
    var rows: [SessionRow]
    var through: UInt64
    /// When they were built (monotonic ns): a live log rebuilds them at most every few seconds.
    var builtAt: UInt64
    /// The values each filter can take (app, version, device, idiom), sorted.
    var facets: [(name: String, values: [String])] = []
    /// The rows' order for each sort key asked so far (positions in `rows`): a page filters an
    /// order already sorted instead of sorting 100k rows per request.
    var orders: [String: [Int32]] = [:]
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

/// Collects the analytics scan's session rows.
private struct SessionRowSink: DerivedTableSink {
    var rows: [SessionRow] = []

    mutating func session(_ row: SessionRow) { rows.append(row) }
}

extension SessionRow {
    /// The session as `GET /api/sessions` lists it.
    fileprivate func appendSessionsPageJSON(to json: inout JSONWriter) {
        json.object(
            ("session", session), ("app", tags.app), ("version", tags.version), ("device", tags.device), ("idiom", tags.idiom), ("first", first), ("last", last),
            ("duration", last - first), ("events", events), ("anomalies", anomalies), ("ended", ended))
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
        var built = SessionSummaries(rows: try derivedRows { SessionRowSink() }.rows, through: newestLSN, builtAt: now)
        built.facets = [("app", \SessionRow.tags.app), ("version", \.tags.version), ("device", \.tags.device), ("idiom", \.tags.idiom)].map { name, path in
            (name, Set(built.rows.map { $0[keyPath: path] }).filter { !$0.isEmpty }.sorted())
        }
        summaries = built
        return built
    }

    /// The summaries' positions in the order `sort` asks (`-` in front: descending), sorted once
    /// per build of the summaries.
    private func order(_ sort: String) -> [Int32] {
        guard var all = summaries else { return [] }
        if let known = all.orders[sort] { return known }
        let descending = sort.hasPrefix("-")
        let key = descending ? String(sort.dropFirst()) : sort
        let rows = all.rows
        // Keys computed once per row and sorted with the row's position as the tie-breaker: no
        // row (five Strings) is copied per comparison.
        func sorted<Key: Comparable>(by key: (SessionRow) -> Key) -> [Int32] {
            var keyed = rows.enumerated().map { (key($1), Int32($0)) }
            if descending {
                keyed.sort { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }
            } else {
                keyed.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            }
            return keyed.map(\.1)
        }
        let sorted: [Int32] =
            switch key {
            case "last": sorted { $0.last }
            case "duration": sorted { $0.last - $0.first }
            case "events": sorted { $0.events }
            case "anomalies": sorted { $0.anomalies }
            case "app": sorted { $0.tags.app }
            case "version": sorted { $0.tags.version }
            case "device": sorted { $0.tags.device }
            case "session": sorted { $0.session }
            default: sorted { $0.first }
            }
        all.orders[sort] = sorted
        summaries = all
        return sorted
    }

    /// Whether `text` contains `needle` (lowercase ASCII bytes), ignoring ASCII case: a byte
    /// scan, fast over 100k session ids.
    static func contains(_ text: String, _ needle: [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard needle.count <= bytes.count else { return false }
            @inline(__always) func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
            outer: for start in 0...(bytes.count - needle.count) {
                for offset in 0..<needle.count where lower(bytes[start + offset]) != needle[offset] { continue outer }
                return true
            }
            return false
        }
    }

    /// The page of sessions `query` asks for, as the JSON of `GET /api/sessions`.
    func sessionsPage(_ query: SessionsQuery) throws -> [UInt8] {
        let all = try sessionSummaries()
        let search = query.search.map { Array($0.lowercased().utf8) } ?? []
        func matches(_ row: SessionRow) -> Bool {
            if let app = query.app, row.tags.app != app { return false }
            if let version = query.version, row.tags.version != version { return false }
            if let device = query.device, row.tags.device != device { return false }
            if let idiom = query.idiom, row.tags.idiom != idiom { return false }
            if query.withAnomalies && row.anomalies == 0 { return false }
            if query.liveOnly && row.ended { return false }
            if !search.isEmpty, !Self.contains(row.session, search) { return false }
            return true
        }
        // Filtering keeps the order: walk the sorted positions, count the matches, keep the page's.
        var total = 0
        var page: [SessionRow] = []
        page.reserveCapacity(query.limit)
        for position in order(query.sort) {
            let row = all.rows[Int(position)]
            guard matches(row) else { continue }
            if total >= query.offset && page.count < query.limit { page.append(row) }
            total += 1
        }
        var json = JSONWriter()
        json.raw("{")
        json.members(first: true, ("total", total), ("offset", query.offset), ("limit", query.limit), ("through", all.through))
        json.key("sessions")
        json.array(page) { json, row in row.appendSessionsPageJSON(to: &json) }
        // The values each filter can take, for the page's drop-downs (over all sessions).
        json.key("facets")
        json.raw("{")
        for (number, facet) in all.facets.enumerated() {
            json.key(escaping: facet.name, first: number == 0)
            json.array(facet.values) { json, value in json.string(value) }
        }
        json.raw("}}")
        return json.bytes
    }
}
