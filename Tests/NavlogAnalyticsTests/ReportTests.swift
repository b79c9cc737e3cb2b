import Foundation
import NavlogAnalytics
import NavlogEvents
import NavlogStore
import NavlogTesting
import Testing

/// The reports of `navlog query` on hand-built sessions whose answers are known.
@Suite("Analytics reports on sessions with known answers")
struct ReportTests {
    static let start: Int64 = 1_763_715_600_000_000
    static func at(_ seconds: Int64) -> Int64 { start + seconds * 1_000_000 }

    /// Session a: list (2s → 10s), detail (10s → 50s, 30 s of it in the background), step
    /// (50s → 60s), detail again (60s → 70s). Session b: list, detail, back to list for ten
    /// minutes, detail.
    static let lines: [String] = {
        func event(_ session: String, _ seq: Int, _ seconds: Int64, _ type: String, _ fields: String = "") -> String {
            #"{"type":"\#(type)","session":"\#(session)","seq":\#(seq),"ts":\#(at(seconds))\#(fields.isEmpty ? "" : "," + fields)}"#
        }
        let start = #""app":"Cook","version":"2.0","idiom":"phone","traits":{"h":"compact","v":"regular"}"#
        return [
            event("a", 1, 0, "session.start", start),
            event("b", 1, 0, "session.start", start),
            event("a", 2, 1, "nav.set", #""nav":{"id":"n","class":"UINavigationController"},"vcs":[{"id":"l","class":"ListVC"}]"#),
            event("b", 2, 1, "nav.set", #""nav":{"id":"n","class":"UINavigationController"},"vcs":[{"id":"l","class":"ListVC"}]"#),
            event("a", 3, 2, "window.root", #""vc":"n""#),
            event("b", 3, 2, "window.root", #""vc":"n""#),
            event("b", 4, 5, "nav.push", #""nav":"n","vc":{"id":"d","class":"DetailVC"}"#),
            event("b", 5, 6, "nav.pop", #""nav":"n""#),
            event("a", 4, 10, "nav.push", #""nav":"n","vc":{"id":"d","class":"DetailVC"}"#),
            event("a", 5, 15, "app.background"),
            event("a", 6, 45, "app.foreground"),
            event("a", 7, 50, "nav.push", #""nav":"n","vc":{"id":"s","class":"StepVC"}"#),
            event("a", 8, 60, "nav.pop", #""nav":"n""#),
            event("a", 9, 70, "session.end", #""reason":"user""#),
            event("b", 6, 600, "nav.push", #""nav":"n","vc":{"id":"d2","class":"DetailVC"}"#),
            event("b", 7, 610, "session.end"),
        ]
    }()

    static func scan<Sink: DerivedTableSink>(_ sink: inout Sink, _ filter: AnalyticsFilter = AnalyticsFilter()) throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in lines.enumerated() { _ = try parser.parse(line, lineNumber: number + 1, into: &batch) }
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path)
            _ = try log.append(batch)
            try log.close()
            var scanner = DerivedTableScanner(reader: try LogReader(directory: dir.path), filter: filter)
            try scanner.scan(into: &sink)
        }
    }

    @Test("screens: views, sessions, and dwell that leaves out the time in the background (F4)")
    func screens() throws {
        var report = ScreensReport()
        try Self.scan(&report)
        let rows = Dictionary(uniqueKeysWithValues: report.rows.map { ($0.screen, $0) })
        let list = try #require(rows["ListVC"])
        #expect(list.views == 3 && list.sessions == 2)
        #expect(list.dwellTotal == 605_000_000, "8 s in a, 3 s and 594 s in b")
        #expect(list.dwellP50 == 8_000_000 && list.dwellP90 == 594_000_000)
        let detail = try #require(rows["DetailVC"])
        #expect(detail.views == 4 && detail.sessions == 2)
        #expect(detail.dwellTotal == 31_000_000, "a: 40 s focused of which 30 s in the background, then 10 s; b: 1 s and 10 s")
        #expect(detail.dwellP50 == 10_000_000)
        #expect(rows["StepVC"]?.dwellTotal == 10_000_000)
        #expect(rows["UINavigationController"] == nil, "a container is never the focused screen")
    }

    @Test("transitions: from, to and how")
    func transitions() throws {
        var report = TransitionsReport()
        try Self.scan(&report)
        let counts = Dictionary(uniqueKeysWithValues: report.rows.map { ("\($0.from ?? "-") > \($0.to) \($0.how)", $0.count) })
        #expect(
            counts == [
                "- > ListVC root": 2, "ListVC > DetailVC push": 3, "DetailVC > StepVC push": 1, "StepVC > DetailVC pop": 1, "DetailVC > ListVC pop": 1,
            ])
    }

    @Test("funnel: steps in order, within the window from the first step; conversion and median time")
    func funnel() throws {
        var open = FunnelReport(steps: ["ListVC", "DetailVC", "StepVC"], within: 60_000_000)
        try Self.scan(&open)
        #expect(open.rows.map(\.sessions) == [2, 2, 1])
        #expect(open.rows[1].medianTime == 3_000_000, "b took 3 s, a 8 s: the median of two is the lower by nearest rank")
        #expect(open.rows[2].medianTime == 40_000_000)
        #expect(open.rows[2].conversion == 0.5 && open.rows[2].overall == 0.5)
        var tight = FunnelReport(steps: ["ListVC", "DetailVC", "StepVC"], within: 20_000_000)
        try Self.scan(&tight)
        #expect(tight.rows.map(\.sessions) == [2, 2, 0], "a reaches StepVC 48 s after ListVC")
        var tighter = FunnelReport(steps: ["ListVC", "DetailVC"], within: 4_000_000)
        try Self.scan(&tighter)
        #expect(tighter.rows.map(\.sessions) == [2, 1], "only b reaches DetailVC within 4 s")
    }

    @Test("exits: the screen at background and at the session's end")
    func exits() throws {
        var report = ExitsReport()
        try Self.scan(&report)
        let rows = report.rows.map { "\($0.reason) \($0.screen) \($0.count)" }
        #expect(rows == ["background DetailVC 1", "end DetailVC 2"])
    }

    @Test("paths, sessions, and filters by app and time")
    func pathsSessionsFilters() throws {
        var paths = PathsReport(length: 3)
        try Self.scan(&paths)
        let all = paths.rows(top: 10).map { "\($0.path.joined(separator: ">")) \($0.count) \($0.sessions)" }
        #expect(
            all == ["DetailVC>ListVC>DetailVC 1 1", "DetailVC>StepVC>DetailVC 1 1", "ListVC>DetailVC>ListVC 1 1", "ListVC>DetailVC>StepVC 1 1"],
            "a: List, Detail, Step, Detail; b: List, Detail, List, Detail")
        var fromList = PathsReport(length: 2, from: "ListVC")
        try Self.scan(&fromList)
        #expect(fromList.rows(top: 5).map { "\($0.path.joined(separator: ">")) \($0.count) \($0.sessions)" } == ["ListVC>DetailVC 3 2"])
        var sessions = SessionsReport()
        try Self.scan(&sessions)
        let depth = try #require(sessions.rows.first { $0.measure == "deepest navigation stack" })
        #expect(depth.max == 3 && depth.sessions == 2)
        var other = ScreensReport()
        try Self.scan(&other, AnalyticsFilter(app: "Other"))
        #expect(other.rows.isEmpty)
        var late = TransitionsReport()
        try Self.scan(&late, AnalyticsFilter(since: Self.at(100)))
        #expect(late.rows.map { "\($0.from ?? "-")>\($0.to)" } == ["ListVC>DetailVC"], "only b's push at 600 s")
    }

    @Test("p50 and p90 found by selection are a sort's nearest ranks, on sorted, reversed, constant and random lists")
    func percentilesBySelection() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int64) -> Int64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64(seed >> 33) % bound
        }
        var lists: [[Int64]] = [[], [7], [3, 1], [5, 5, 5, 5, 5], Array(0..<100), Array((0..<101).reversed())]
        for count in [2, 3, 10, 99, 1000, 4097] {
            lists.append((0..<count).map { _ in next(1_000_000) })
            lists.append((0..<count).map { _ in next(4) })  // many equal values
        }
        for values in lists {
            let sorted = values.sorted()
            let (p50, p90) = percentiles(values, 0.5, 0.9)
            #expect(p50 == percentile(sorted: sorted, 0.5) && p90 == percentile(sorted: sorted, 0.9), "\(values.count) values")
            #expect(percentiles(values, 0.9, 0.9).0 == percentile(sorted: sorted, 0.9))
        }
    }
}
