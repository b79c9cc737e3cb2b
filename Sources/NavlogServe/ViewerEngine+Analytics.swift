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
private struct AnomalyTimelineSink: DerivedTableSink {
    var rows: [(time: Int64, code: String)] = []
    var names: [String: (name: String, fatal: Bool)] = [:]
    var sessions: [String: Set<Int>] = [:]

    mutating func anomaly(_ row: AnomalyRow) {
        rows.append((row.timestamp, row.code))
        names[row.code] = (row.name, row.fatal)
        sessions[row.code, default: []].insert(row.sessionNumber)
    }
}

extension ViewerEngine {
    /// Screens, transitions, the funnel and anomalies over time from one scan of the focus
    /// journals (the rows `navlog query` reads), as the JSON of `GET /api/analytics`. Answers are
    /// kept until the log grows.
    func analytics(_ query: AnalyticsQuery) throws -> [UInt8] {
        let key = query.cacheKey
        if let cached = analyticsCache[key], cached.through == newestLSN { return cached.body }
        var sink = CombinedSink(
            CombinedSink(ScreensReport(), TransitionsReport()), CombinedSink(FunnelReport(steps: query.steps, within: query.within), AnomalyTimelineSink()))
        if try !JournalScanner(index: index, filter: query.filter).scan(into: &sink) {
            sink = CombinedSink(
                CombinedSink(ScreensReport(), TransitionsReport()), CombinedSink(FunnelReport(steps: query.steps, within: query.within), AnomalyTimelineSink()))
            var scanner = DerivedTableScanner(reader: reader, filter: query.filter)
            try scanner.scan(into: &sink)
        }
        var json = JSONWriter()
        json.raw("{")
        json.key("screens", first: true)
        json.array(sink.first.first.rows) { json, row in
            json.raw("{\"screen\":")
            json.string(row.screen)
            json.member("storyboardID", row.storyboardID)
            json.member("views", row.views)
            json.member("sessions", row.sessions)
            json.member("dwellTotal", row.dwellTotal)
            json.member("dwellP50", row.dwellP50)
            json.member("dwellP90", row.dwellP90)
            json.raw("}")
        }
        json.key("transitions")
        json.array(sink.first.second.rows) { json, row in
            json.raw("{\"from\":")
            json.string(row.from)
            json.member("to", row.to)
            json.member("how", row.how)
            json.member("count", row.count)
            json.raw("}")
        }
        json.key("funnel")
        if query.steps.isEmpty {
            json.raw("null")
        } else {
            json.array(sink.second.first.rows) { json, row in
                json.raw("{\"step\":")
                json.integer(row.step)
                json.member("screen", row.screen)
                json.member("sessions", row.sessions)
                json.member("conversion", row.conversion)
                json.member("overall", row.overall)
                json.member("medianTime", row.medianTime)
                json.raw("}")
            }
        }
        let anomalies = sink.second.second
        json.key("anomalies")
        json.raw("{\"codes\":")
        let codes = anomalies.names.keys.sorted { (Int($0.dropFirst()) ?? 0) < (Int($1.dropFirst()) ?? 0) }
        var counts: [String: Int] = [:]
        for row in anomalies.rows { counts[row.code, default: 0] += 1 }
        json.array(codes) { json, code in
            json.raw("{\"code\":")
            json.string(code)
            json.member("name", anomalies.names[code]?.name)
            json.member("fatal", anomalies.names[code]?.fatal ?? false)
            json.member("count", counts[code] ?? 0)
            json.member("sessions", anomalies.sessions[code]?.count ?? 0)
            json.raw("}")
        }
        // Equal buckets from the first anomaly to the last, each with its count per code.
        let times = anomalies.rows.map(\.time)
        json.key("buckets")
        if let low = times.min(), let high = times.max() {
            let count = max(1, query.buckets)
            let width = max(1, (high - low + Int64(count)) / Int64(count))
            var perBucket = Array(repeating: [String: Int](), count: count)
            for row in anomalies.rows { perBucket[min(count - 1, Int((row.time - low) / width))][row.code, default: 0] += 1 }
            json.array(perBucket.indices) { json, number in
                json.raw("{\"start\":")
                json.integer(low + Int64(number) * width)
                json.member("end", low + Int64(number + 1) * width)
                json.key("counts")
                json.raw("{")
                for (position, code) in perBucket[number].keys.sorted().enumerated() {
                    json.key(escaping: code, first: position == 0)
                    json.integer(perBucket[number][code])
                }
                json.raw("}}")
            }
        } else {
            json.raw("[]")
        }
        json.raw("}")
        json.member("through", newestLSN)
        json.raw("}")
        if analyticsCache.count >= 64 { analyticsCache.removeAll() }
        analyticsCache[key] = (newestLSN, json.bytes)
        return json.bytes
    }
}
