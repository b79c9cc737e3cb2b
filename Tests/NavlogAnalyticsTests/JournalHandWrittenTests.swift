import Foundation
import NavlogAnalytics
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore
import NavlogTesting
import Testing

/// The focus journals' rows against rows written out by hand from the rules (F1, F4, E3, E4),
/// not against navlog's own replay: controller ids that are addresses and ids that are not
/// (the journal stores the two differently), screens met again, and a session whose events
/// arrive out of order, which the index re-derives (its records replace the ones before).
@Suite("Focus journals against hand-written rows")
struct JournalHandWrittenTests {
    /// Session `id`: the root screen `home` (an id that is not an address), a detail presented
    /// and dismissed (address ids), settings presented and dismissed, then the end.
    static func session(_ id: String, base: Int64) -> [String] {
        func at(_ seconds: Int64) -> Int64 { base + seconds * 1_000_000 }
        return [
            #"{"type":"session.start","session":"\#(id)","seq":1,"ts":\#(at(1)),"app":"Hand","idiom":"phone","traits":{"h":"compact","v":"regular"}}"#,
            #"{"type":"window.root","session":"\#(id)","seq":2,"ts":\#(at(2)),"vc":{"id":"home","class":"HomeVC"}}"#,
            #"{"type":"present","session":"\#(id)","seq":3,"ts":\#(at(5)),"from":"home","vc":{"id":"0x6000a1","class":"DetailVC"},"style":"fullScreen"}"#,
            #"{"type":"dismiss","session":"\#(id)","seq":4,"ts":\#(at(9)),"vc":"0x6000a1"}"#,
            #"{"type":"present","session":"\#(id)","seq":5,"ts":\#(at(12)),"from":"home","vc":{"id":"0x60f0b2","class":"SettingsVC"},"style":"fullScreen"}"#,
            #"{"type":"dismiss","session":"\#(id)","seq":6,"ts":\#(at(16)),"vc":"0x60f0b2"}"#,
            #"{"type":"session.end","session":"\#(id)","seq":7,"ts":\#(at(20))}"#,
        ]
    }

    /// The visits F1/E3 give that session, as (screen, controller, start s, end s, dwell s, how):
    /// the app stays in the foreground, so each dwell (F4) is the whole visit.
    static let visits: [(String, String, Int64, Int64, Int64, String)] = [
        ("HomeVC", "home", 2, 5, 3, "root"),
        ("DetailVC", "0x6000a1", 5, 9, 4, "present"),
        ("HomeVC", "home", 9, 12, 3, "dismiss"),
        ("SettingsVC", "0x60f0b2", 12, 16, 4, "present"),
        ("HomeVC", "home", 16, 20, 4, "dismiss"),
    ]
    /// And its transitions, as (from, to, how).
    static let transitions: [(String?, String, String)] = [
        (nil, "HomeVC", "root"), ("HomeVC", "DetailVC", "present"), ("DetailVC", "HomeVC", "dismiss"),
        ("HomeVC", "SettingsVC", "present"), ("SettingsVC", "HomeVC", "dismiss"),
    ]

    struct Rows: DerivedTableSink {
        var visits: [String: [ScreenVisit]] = [:]
        var transitions: [String: [TransitionRow]] = [:]
        mutating func visit(_ row: ScreenVisit) { visits[row.session, default: []].append(row) }
        mutating func transition(_ row: TransitionRow) { transitions[row.session, default: []].append(row) }
    }

    @Test("visits and transitions of sessions in order and out of order are the rules' rows")
    func handWrittenRows() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let base: Int64 = 1_763_712_000_000_000
            // "inorder" as recorded; "late" with its detail's dismissal stored before the present
            // (E4: replayed in seq order), interleaved with the first.
            var late = Self.session("late", base: base + 500_000)
            late.swapAt(2, 3)
            var lines: [String] = []
            for (a, b) in zip(Self.session("inorder", base: base), late) { lines += [a, b] }
            let input = dir.appendingPathComponent("in.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
            let data = dir.appendingPathComponent("data").path
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", data, input.path]).status == 0)

            let index = ReplayIndex(log: try LogReader(directory: data))
            try index.refresh()
            #expect(index.start(session: "late", for: .end)?.outOfOrder == true, "the late session is re-derived")
            #expect(index.start(session: "inorder", for: .end)?.outOfOrder == false)
            var rows = Rows()
            #expect(try JournalScanner(index: index, filter: AnalyticsFilter()).scan(into: &rows))
            for (session, offset) in [("inorder", Int64(0)), ("late", 500_000)] {
                let visits = rows.visits[session] ?? []
                #expect(visits.count == Self.visits.count, "\(session): \(visits)")
                for (visit, expected) in zip(visits.sorted { $0.view.index < $1.view.index }, Self.visits) {
                    let row = visit.view
                    let (screen, controller, start, end, dwell, how) = expected
                    #expect(row.screen == screen && row.controller == controller && row.how == how, "\(session): \(row)")
                    #expect(row.start == base + offset + start * 1_000_000 && row.end == base + offset + end * 1_000_000, "\(session): \(row)")
                    #expect(row.dwell == dwell * 1_000_000, "\(session): \(row)")
                }
                let transitions = (rows.transitions[session] ?? []).sorted { $0.timestamp < $1.timestamp }
                #expect(transitions.map { "\($0.from ?? "-") \($0.to) \($0.how)" } == Self.transitions.map { "\($0.0 ?? "-") \($0.1) \($0.2)" }, "\(session)")
            }
        }
    }
}
