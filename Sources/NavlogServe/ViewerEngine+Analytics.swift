import NavlogAnalytics
import NavlogJSON
import NavlogStore

/// The analytics page's question: which sessions, and the funnel's steps.
struct AnalyticsQuery: Sendable, Hashable {
    var filter = AnalyticsFilter()
    /// The funnel's screens in order (none: no funnel).
    var steps: [String] = []
    /// Each funnel step within this many µs of the first.
    var within: Int64?
    /// How many time buckets the anomalies chart has.
    var buckets = 48

    var cacheKey: String {
        "\(filter.since ?? -1)|\(filter.until ?? -1)|\(filter.app ?? "")|\(filter.version ?? "")|\(filter.idiom ?? "")|\(steps.joined(separator: "\u{1}"))|\(within ?? -1)|\(buckets)"
    }
}

/// Anomalies by code, and over time in equal buckets from the first to the last one.
private struct AnomalyChartSink: DerivedTableSink {
    var rows: [(time: Int64, code: String)] = []
    var names: [String: (name: String, fatal: Bool)] = [:]
    var sessions: [String: Set<Int>] = [:]

    mutating func anomaly(_ row: AnomalyRow) {
        rows.append((row.timestamp, row.code))
        names[row.code] = (row.name, row.fatal)
        sessions[row.code, default: []].insert(row.sessionNumber)
    }

    /// `{"codes": [...], "buckets": [...]}`, in `buckets` equal buckets.
    func appendJSON(buckets: Int, to json: inout JSONWriter) {
        json.raw("{\"codes\":")
        appendCodes(to: &json)
        json.key("buckets")
        appendBuckets(count: buckets, to: &json)
        json.raw("}")
    }

    /// Each code in the order of its number (A2 before A10).
    private func appendCodes(to json: inout JSONWriter) {
        let codes = names.keys.sorted { (Int($0.dropFirst()) ?? 0, $0) < (Int($1.dropFirst()) ?? 0, $1) }
        var counts: [String: Int] = [:]
        for row in rows { counts[row.code, default: 0] += 1 }
        json.array(
            codes.map { code in
                AnomalyCodeRow(
                    code: code, name: names[code]?.name, fatal: names[code]?.fatal ?? false, count: counts[code] ?? 0, sessions: sessions[code]?.count ?? 0)
            })
    }

    /// Equal buckets from the first anomaly to the last, each with its count per code (none
    /// without anomalies).
    private func appendBuckets(count asked: Int, to json: inout JSONWriter) {
        let times = rows.map(\.time)
        guard let low = times.min(), let high = times.max() else { return json.raw("[]") }
        let count = max(1, asked)
        let width = max(1, (high - low + Int64(count)) / Int64(count))
        var perBucket = Array(repeating: [String: Int](), count: count)
        for row in rows { perBucket[min(count - 1, Int((row.time - low) / width))][row.code, default: 0] += 1 }
        json.array(perBucket.indices) { json, number in
            json.raw("{")
            json.members(first: true, ("start", low + Int64(number) * width), ("end", low + Int64(number + 1) * width))
            json.key("counts")
            json.raw("{")
            for (position, code) in perBucket[number].keys.sorted().enumerated() {
                json.key(escaping: code, first: position == 0)
                json.integer(perBucket[number][code])
            }
            json.raw("}}")
        }
    }
}

/// An anomaly code with its name, whether it is fatal, how often it was raised and in how many
/// sessions.
private struct AnomalyCodeRow: JSONWritable {
    var code: String
    var name: String?
    var fatal: Bool
    var count: Int
    var sessions: Int

    func appendJSON(to json: inout JSONWriter) {
        json.object(("code", code), ("name", name), ("fatal", fatal), ("count", count), ("sessions", sessions))
    }
}

extension ViewerEngine {
    /// Screens, transitions, the funnel and anomalies over time from one scan of the focus
    /// journals (the rows `navlog query` reads), as the JSON of `GET /api/analytics`. Answers are
    /// kept until the log grows.
    func analytics(_ query: AnalyticsQuery) throws -> [UInt8] {
        let key = query.cacheKey
        if let cached = analyticsCache[key], cached.through == newestLSN { return cached.body }
        let scanned = try derivedRows(filter: query.filter) {
            CombinedSink(
                CombinedSink(ScreensReport(), TransitionsReport()), CombinedSink(FunnelReport(steps: query.steps, within: query.within), AnomalyChartSink()))
        }
        let (screens, transitions) = (scanned.first.first, scanned.first.second)
        let (funnel, anomalies) = (scanned.second.first, scanned.second.second)
        var json = JSONWriter()
        json.raw("{")
        json.key("screens", first: true)
        json.array(screens.rows)
        json.key("transitions")
        json.array(transitions.rows)
        json.key("funnel")
        if query.steps.isEmpty { json.null() } else { json.array(funnel.rows) }
        json.key("anomalies")
        anomalies.appendJSON(buckets: query.buckets, to: &json)
        json.member("through", newestLSN)
        json.raw("}")
        if analyticsCache.count >= 64 { analyticsCache.removeAll() }
        analyticsCache[key] = (newestLSN, json.bytes)
        return json.bytes
    }
}
