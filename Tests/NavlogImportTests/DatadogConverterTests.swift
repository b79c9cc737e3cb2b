import NavlogImport
import Testing

@Suite("Datadog RUM views → navlog events")
struct DatadogConverterTests {
    /// 2024-05-02T10:00:00Z in µs.
    static let base: Int64 = 1_714_644_000_000_000

    @Test("raw events: each view's highest document_version, a view is did-appear at date and did-disappear time_spent later, a gap is the background")
    func rawEvents() throws {
        let result = try ImportTestSupport.convert(.datadog, ImportTestSupport.fixture("datadog-views.jsonl"), base: Self.base, chunk: 333)
        let session = "datadog:3e9b6c2a-2222-4d4e-8f5a-000000000001"
        // Written by hand: list 0–4 s (version 4 of its view), detail 4–10 s, a minute away,
        // detail again 70–75 s (a new view of the same screen: the same screen continuing),
        // list from 75 s, still active.
        #expect(
            result.lines == [
                "1 +0 session.start \(session) app=7c1f8a52-1111-4c2b-9d3e-000000000001 version=2.3.1 os=iOS 17.4 device=iPhone15,2",
                "2 +0 mark import source=datadog",
                "3 +0 window.root RecipeListViewController#1",
                "4 +0 vc.appear RecipeListViewController#1 did",
                "5 +4000 vc.disappear RecipeListViewController#1 did",
                "6 +4000 window.root RecipeDetailViewController#2",
                "7 +4000 vc.appear RecipeDetailViewController#2 did",
                "8 +10000 vc.disappear RecipeDetailViewController#2 did",
                "9 +10000 app.background",
                "10 +70000 app.foreground",
                "11 +70000 vc.appear RecipeDetailViewController#2 did",
                "12 +75000 vc.disappear RecipeDetailViewController#2 did",
                "13 +75000 window.root RecipeListViewController#4",
                "14 +75000 vc.appear RecipeListViewController#4 did",
            ])
        #expect(result.issues.isEmpty)
        #expect(result.statistics.records == 8)
        #expect(result.statistics.ignored == 2)
        #expect(result.statistics.superseded == 2)
    }

    @Test("a record with far more values than bytes / 8 (a long array of digits) grows the reader's node table and is read again; the records around it read as before")
    func recordWithManyNodes() throws {
        let original = try ImportTestSupport.convert(.datadog, ImportTestSupport.fixture("datadog-views.jsonl"), base: Self.base)
        var lines = try ImportTestSupport.fixture("datadog-views.jsonl").split(separator: 0x0A).map(Array.init)
        // 20,000 one-digit elements: 40 KB holding 20,000 nodes, where the table expects 5,000.
        let padding = Array("{\"_padding\":[".utf8) + Array(repeating: Array("0,".utf8), count: 19_999).flatMap { $0 } + Array("0],".utf8)
        lines[2] = padding + lines[2].dropFirst()
        let padded = try ImportTestSupport.convert(.datadog, Array(lines.joined(separator: [0x0A])) + [0x0A], base: Self.base)
        #expect(padded.issues.isEmpty)
        #expect(padded.lines == original.lines)
        #expect(padded.statistics.records == original.statistics.records)
    }

    @Test("a page of the search API: events under data[].attributes.attributes, the page's timestamp when date is missing, time_spent as a string")
    func searchPage() throws {
        let result = try ImportTestSupport.convert(.datadog, ImportTestSupport.fixture("datadog-search-page.json"), base: Self.base)
        let session = "datadog:8d2e4f6a-3333-4b5c-9d6e-000000000002"
        #expect(
            result.lines == [
                "1 +3600000 session.start \(session) app=7c1f8a52-1111-4c2b-9d3e-000000000001",
                "2 +3600000 mark import source=datadog",
                "3 +3600000 window.root OnboardingViewController#1",
                "4 +3600000 vc.appear OnboardingViewController#1 did",
                "5 +3602500 vc.disappear OnboardingViewController#1 did",
                "6 +3602500 window.root HomeViewController#2",
                "7 +3602500 vc.appear HomeViewController#2 did",
                "8 +3606500 vc.disappear HomeViewController#2 did",
            ])
        #expect(result.issues.isEmpty)
        #expect(result.statistics.records == 3)
        #expect(result.statistics.ignored == 1)
    }

    @Test("versions in any order and repeated events give the same lines")
    func reordered() throws {
        let lines = try ImportTestSupport.fixture("datadog-views.jsonl").split(separator: 0x0A).map(Array.init)
        let original = try ImportTestSupport.convert(.datadog, ImportTestSupport.fixture("datadog-views.jsonl"), base: Self.base)
        let shuffled: [UInt8] = (lines.reversed() + lines.prefix(3)).flatMap { $0 + [UInt8(0x0A)] }
        #expect(try ImportTestSupport.convert(.datadog, shuffled, base: Self.base).raw == original.raw)
    }

    @Test("a view starting in the same millisecond as the one before is an embedded child: part of that screen, also when it resumes after the background")
    func childView() throws {
        func view(_ id: String, _ name: String, _ date: Int64, _ spent: Int64) -> String {
            #"{"type":"view","date":\#(1_714_644_000_000 + date),"session":{"id":"s"},"view":{"id":"\#(id)","name":"\#(name)","time_spent":\#(spent * 1_000_000),"is_active":false},"_dd":{"document_version":2}}"#
        }
        // The profile's view stops at once when its header's starts (the SDK keeps one view);
        // the header's view is the one stopped by the background and restarted after it.
        let input = [
            view("p", "ProfileViewController", 0, 0), view("h", "ProfileHeaderViewController", 0, 5000), view("h2", "ProfileHeaderViewController", 65000, 1000),
            view("x", "SettingsViewController", 66000, 2000),
        ].joined(separator: "\n")
        let result = try ImportTestSupport.convert(.datadog, Array(input.utf8), base: Self.base)
        #expect(
            result.lines == [
                "1 +0 session.start datadog:s app=datadog",
                "2 +0 mark import source=datadog",
                "3 +0 window.root ProfileViewController#1",
                "4 +0 vc.appear ProfileViewController#1 did",
                "5 +0 vc.disappear ProfileViewController#1 did",
                "6 +0 vc.appear ProfileHeaderViewController#2 did",
                "7 +5000 vc.disappear ProfileHeaderViewController#2 did",
                "8 +5000 app.background",
                "9 +65000 app.foreground",
                "10 +65000 vc.appear ProfileHeaderViewController#2 did",
                "11 +66000 vc.disappear ProfileHeaderViewController#2 did",
                "12 +66000 window.root SettingsViewController#4",
                "13 +66000 vc.appear SettingsViewController#4 did",
                "14 +68000 vc.disappear SettingsViewController#4 did",
            ])
    }

    @Test("wrong types and missing fields are reported with line and path; other event types are ignored")
    func badEvents() throws {
        let good = #"{"type":"view","date":1714644000000,"session":{"id":"s"},"view":{"id":"v1","name":"AViewController","time_spent":1000000},"_dd":{"document_version":1}}"#
        let input = [
            good,
            #"{"type":"view","date":"1714644001000","session":{"id":"s"},"view":{"id":"v2","name":"BViewController","time_spent":1000000}}"#,
            #"{"type":"view","date":1714644002000,"session":{"id":"s"},"view":{"id":"v3","name":"C","time_spent":"long"}}"#,
            #"{"type":"view","date":1714644002000,"session":{"id":7},"view":{"id":"v4","name":"D","time_spent":1}}"#,
            #"{"type":"view","date":1714644002000,"session":{"id":"s"},"view":{"id":"v5","time_spent":1}}"#,
            #"{"type":"view","date":true,"session":{"id":"s"},"view":{"id":"v6","name":"E","time_spent":1}}"#,
            #"{"type":"view","date":1714644002000,"session":{"id":"s"},"view":{"id":"v7","name":"F","time_spent":1},"_dd":{"document_version":"2"}}"#,
            #"{"type":3}"#,
            #"{"type":"long_task","date":1714644002000}"#,
            #"{"type":"view","date":1714644002000,"session":{"id":"s"},"view":{"id":"v8","name":"G","time_spent":1}"#,
            #"[1, 2"#,
            #"plain text"#,
        ].joined(separator: "\n")
        let result = try ImportTestSupport.convert(.datadog, Array(input.utf8), base: Self.base)
        #expect(
            result.issues.map(\.description) == [
                "line 3, view.time_spent: expected a number of ns, found a string; the event was skipped",
                "line 4, session.id: expected a non-empty string, found a number; the event was skipped",
                "line 5, view.name: a view event needs view.name or view.url to name its screen; the event was skipped",
                "line 6, date: expected a time (a number or a string), found a boolean; the event was skipped",
                "line 7, _dd.document_version: expected a whole number, found a string; the event was skipped",
                "line 8, type: expected a string, found a number; the event was skipped",
                "line 10: the line ends before its JSON value does (a truncated or split record)",
                "line 11: the line ends before its JSON value does (a truncated or split record)",
                "line 12: expected a JSON object, found text that is not one",
            ])
        #expect(
            result.lines == [
                "1 +0 session.start datadog:s app=datadog",
                "2 +0 mark import source=datadog",
                "3 +0 window.root AViewController#1",
                "4 +0 vc.appear AViewController#1 did",
                "5 +1 vc.disappear AViewController#1 did",
                "6 +1000 window.root BViewController#2",
                "7 +1000 vc.appear BViewController#2 did",
                "8 +1001 vc.disappear BViewController#2 did",
            ])
        #expect(result.statistics.ignored == 1)
        #expect(result.statistics.skipped == 9)
    }
}
