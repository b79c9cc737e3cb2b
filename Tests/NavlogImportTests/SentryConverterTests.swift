import NavlogImport
import Testing

@Suite("Sentry breadcrumbs → navlog events")
struct SentryConverterTests {
    /// 2024-05-02T10:00:00Z in µs.
    static let base: Int64 = 1_714_644_000_000_000

    @Test("an events-API event: containers, internals and other categories are left out, a child is part of its parent's screen, a presented context and its dismissal are rebuilt")
    func eventsAPIEvent() throws {
        let result = try ImportTestSupport.convert(.sentry, ImportTestSupport.fixture("sentry-event-api.json"), base: Self.base)
        // Written by hand from the rules in docs/IMPORT.md, crumb by crumb.
        let session = "sentry:5c7a3b9e0f1d4e2a8b6c4d2e0f1a3b5c"
        #expect(
            result.lines == [
                "1 +100 session.start \(session) app=com.example.cookbook version=2.3.1 os=iOS 17.4.1 device=iPhone15,2",
                "2 +100 mark import source=sentry",
                "3 +220 window.root RecipeListViewController “Recipes”",
                "4 +220 vc.appear RecipeListViewController “Recipes” did",
                "5 +230 vc.appear RecipeFilterChipsViewController did",
                "6 +4400 window.root RecipeDetailViewController “Pancakes”",
                "7 +4400 vc.appear RecipeDetailViewController “Pancakes” did",
                "8 +12010 present RecipeDetailViewController “Pancakes”→ShoppingListViewController “Shopping list”",
                "9 +12010 vc.appear ShoppingListViewController “Shopping list” did",
                "10 +20100 app.background",
                "11 +80000 app.foreground",
                "12 +90000 dismiss RecipeDetailViewController “Pancakes”",
                "13 +90000 vc.appear RecipeDetailViewController “Pancakes” did",
                "14 +95000 window.root RecipeListViewController “Recipes”",
                "15 +95000 vc.appear RecipeListViewController “Recipes” did",
                "16 +95010 vc.appear RecipeFilterChipsViewController did",
            ])
        #expect(result.issues.isEmpty)
        #expect(result.statistics.records == 1)
        #expect(result.statistics.ignored == 4)  // started, active, touch, inactive
        #expect(result.statistics.notScreens == 5)  // tab bar, navigation ×2, the keyboard's two controllers
        #expect(result.statistics.skipped == 0)
    }

    @Test("events tied by a session tag are one session, crumbs repeated from the ring buffer kept once; every timestamp form is read")
    func sessionTagAndTimestamps() throws {
        let result = try ImportTestSupport.convert(.sentry, ImportTestSupport.fixture("sentry-events.jsonl"), base: Self.base, chunk: 97)
        let tagged = "sentry:A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"
        let alone = "sentry:1f2e3d4c5b6a4798a6b5c4d3e2f1a0b9"
        #expect(
            result.lines == [
                "1 +6000000 session.start \(alone) app=com.example.cookbook version=2.3.1+45",
                "2 +6000000 mark import source=sentry",
                "3 +6000000 window.root HomeViewController",
                "4 +6000000 vc.appear HomeViewController did",
                "1 +100 session.start \(tagged) app=com.example.cookbook version=2.3.1 os=iOS 17.4",
                "2 +100 mark import source=sentry",
                "3 +200 window.root HomeViewController “Home”",
                "4 +200 vc.appear HomeViewController “Home” did",
                "5 +3000 present HomeViewController “Home”→SettingsViewController",
                "6 +3000 vc.appear SettingsViewController did",
                "7 +20000 dismiss HomeViewController “Home”",
                "8 +20000 vc.appear HomeViewController “Home” did",
                "9 +25000 window.root ProfileViewController",
                "10 +25000 vc.appear ProfileViewController did",
            ])
        #expect(result.issues.isEmpty)
        #expect(result.statistics.records == 3)
        #expect(result.statistics.superseded == 3)
        #expect(result.statistics.ignored == 2)
    }

    @Test("the same events in another order, or given twice, give the same lines")
    func reorderedAndDuplicated() throws {
        let lines = try ImportTestSupport.fixture("sentry-events.jsonl").split(separator: 0x0A).map(Array.init)
        let shuffled: [UInt8] = [lines[2], lines[1], lines[0], lines[1]].flatMap { $0 + [UInt8(0x0A)] }
        let original = try ImportTestSupport.convert(.sentry, ImportTestSupport.fixture("sentry-events.jsonl"), base: Self.base)
        let again = try ImportTestSupport.convert(.sentry, shuffled, base: Self.base)
        #expect(again.raw == original.raw)
    }

    @Test("crumbs of open sessions spilled to disk after every event give the same lines and counts as crumbs held in memory")
    func spilledCrumbs() throws {
        let lines = try ImportTestSupport.fixture("sentry-events.jsonl").split(separator: 0x0A).map(Array.init)
        // The tagged session's events twice and out of order: repeats across spilled runs and memory.
        let input: [UInt8] = [lines[1], lines[0], lines[2], lines[1], lines[0]].flatMap { $0 + [UInt8(0x0A)] }
        let held = try ImportTestSupport.convert(.sentry, input, base: Self.base)
        for chunk in [97, 4096] {
            let spilled = try ImportTestSupport.convert(.sentry, input, base: Self.base, chunk: chunk, writeCompleted: true, maximumHeldCrumbs: 1)
            #expect(Set(spilled.raw) == Set(held.raw))
            #expect(spilled.raw.count == held.raw.count)
            #expect(spilled.statistics == held.statistics)
        }
        #expect(held.statistics.superseded > 3)
    }

    @Test("an untagged event whose id is a spilled session's tag adds to that session; nothing spilled is lost")
    func untaggedEventNamedLikeASpilledTag() throws {
        func crumb(_ seconds: Double, _ screen: String) -> String {
            #"{"timestamp":\#(1_714_644_000 + seconds),"category":"ui.lifecycle","data":{"screen":"\#(screen)"}}"#
        }
        let input =
            [
                #"{"event_id":"e1","tags":{"session_id":"S"},"breadcrumbs":[\#(crumb(1, "AViewController")),\#(crumb(2, "BViewController"))]}"#,
                #"{"event_id":"e2","tags":{"session_id":"T"},"breadcrumbs":[\#(crumb(3, "CViewController"))]}"#,
                #"{"event_id":"S","breadcrumbs":[\#(crumb(2, "BViewController")),\#(crumb(4, "DViewController"))]}"#,
            ].joined(separator: "\n") + "\n"
        let held = try ImportTestSupport.convert(.sentry, Array(input.utf8), base: Self.base)
        let spilled = try ImportTestSupport.convert(.sentry, Array(input.utf8), base: Self.base, chunk: 64, writeCompleted: true, maximumHeldCrumbs: 1)
        #expect(Set(spilled.raw) == Set(held.raw))
        #expect(spilled.statistics == held.statistics)
        #expect(held.lines.filter { $0.contains("vc.appear") }.count == 4)
        #expect(held.statistics.superseded == 1)
    }

    @Test("an event without a session tag is written as soon as it is read; the same lines come out, an event read again is no new session")
    func completedEarly() throws {
        let file = try ImportTestSupport.fixture("sentry-events.jsonl")
        let whole = try ImportTestSupport.convert(.sentry, file, base: Self.base)
        let early = try ImportTestSupport.convert(.sentry, file + file, base: Self.base, chunk: 700, writeCompleted: true)
        #expect(early.raw.count == whole.raw.count)
        #expect(Set(early.raw) == Set(whole.raw))
        // The untagged event (the third line) comes out before the end of the input.
        #expect(early.lines.first?.contains("sentry:1f2e3d4c5b6a4798a6b5c4d3e2f1a0b9") == true)
        #expect(early.statistics.superseded == whole.statistics.superseded + 9)  // the tagged events' 3 + 5 crumbs again, the untagged event again
    }

    @Test("wrong types, missing fields and unknown categories: each bad crumb is reported with its line and path, the rest imports")
    func badCrumbs() throws {
        let input = """
            {"event_id":"e1","breadcrumbs":[
            {"timestamp":"2024-05-02T10:00:01Z","category":"ui.lifecycle","data":{"screen":"AViewController","is_window_rootViewController":"true"}},
            {"timestamp":"2024-05-02T10:00:02Z","category":"ui.lifecycle","data":{"screen":7}},
            {"timestamp":"2024-05-02T10:00:03Z","category":"ui.lifecycle","data":"BViewController"},
            {"timestamp":"2024-05-02T10:00:04Z","category":"ui.lifecycle"},
            {"timestamp":"soon","category":"ui.lifecycle","data":{"screen":"CViewController"}},
            {"category":"ui.lifecycle","data":{"screen":"DViewController"}},
            {"timestamp":"2024-05-02T10:00:05Z","category":["ui.lifecycle"],"data":{"screen":"EViewController"}},
            {"timestamp":"2024-05-02T10:00:06Z","category":"app.lifecycle","data":{"state":true}},
            {"timestamp":"2024-05-02T10:00:07Z","category":"my.own.category","data":{"screen":"FViewController"}},
            "not a crumb",
            {"timestamp":"2024-05-02T10:00:08Z","category":"ui.lifecycle","data":{"screen":"GViewController","beingPresented":true}}
            ]}
            {"event_id":"e2","breadcrumbs":{"values":5}}
            {"breadcrumbs":[]}

            """
        let result = try ImportTestSupport.convert(.sentry, Array(input.utf8), base: Self.base)
        #expect(
            result.issues.map(\.description) == [
                "line 3, breadcrumbs[1].data.screen: expected a non-empty string, found a number; the breadcrumb was skipped",
                "line 4, breadcrumbs[2].data: a ui.lifecycle breadcrumb needs a data object; it was skipped",
                "line 5, breadcrumbs[3].data: a ui.lifecycle breadcrumb needs a data object; it was skipped",
                "line 6, breadcrumbs[4].timestamp: \"soon\" is neither an ISO 8601 time nor a number; the breadcrumb was skipped",
                "line 7, breadcrumbs[5].timestamp: the breadcrumb has no timestamp; it was skipped",
                "line 8, breadcrumbs[6].category: expected a string, found an array; the breadcrumb was skipped",
                "line 9, breadcrumbs[7].data.state: expected the state as a string; the breadcrumb was skipped",
                "line 11, breadcrumbs[9]: expected a breadcrumb object, found a string; it was skipped",
                "line 14, breadcrumbs: expected an array of breadcrumbs or {\"values\": [...]}, found an object; the event was skipped",
                "line 15, event_id: the event has no event_id (or eventID, id) and no session tag, so it cannot be given a stable session id; it was skipped",
            ])
        #expect(
            result.lines == [
                "1 +1000 session.start sentry:e1 app=sentry",
                "2 +1000 mark import source=sentry",
                "3 +1000 window.root AViewController",
                "4 +1000 vc.appear AViewController did",
                "5 +8000 present AViewController→GViewController",
                "6 +8000 vc.appear GViewController did",
            ])
        #expect(result.statistics.ignored == 1)
        #expect(result.statistics.skipped == 10)
    }

    @Test("a bad crumb's line counts from its own record's first line when records before it were read from the same chunk (the reader keeps a chunk's records in one buffer)")
    func badCrumbAfterOtherRecords() throws {
        let before = try ImportTestSupport.fixture("sentry-event-api.json")
        let bad = Array(
            """
            {"event_id":"e1","breadcrumbs":[
            {"timestamp":"2024-05-02T10:00:01Z","category":"ui.lifecycle","data":{"screen":"AViewController"}},
            {"timestamp":"soon","category":"ui.lifecycle","data":{"screen":"CViewController"}}
            ]}
            {"broken": tru}

            """.utf8)
        let linesBefore = before.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        #expect(before.last == 0x0A)
        let result = try ImportTestSupport.convert(.sentry, before + bad, base: Self.base, chunk: 1 << 20)
        #expect(
            result.issues.map(\.description) == [
                "line \(linesBefore + 3), breadcrumbs[1].timestamp: \"soon\" is neither an ISO 8601 time nor a number; the breadcrumb was skipped",
                "line \(linesBefore + 5): not valid JSON: expected a JSON value (byte 12 of the record); it was skipped",
            ])
    }

    @Test("a truncated file: the records before the cut import, the cut one is reported")
    func truncated() throws {
        let full = try ImportTestSupport.fixture("sentry-events.jsonl")
        let cut = Array(full[..<(full.count - 200)])
        let result = try ImportTestSupport.convert(.sentry, cut, base: Self.base)
        #expect(result.issues.map(\.description) == ["line 3: the input ends inside this record (a truncated file?)"])
        #expect(result.lines.count == 10)  // the tagged session, whole
        let pretty = try ImportTestSupport.fixture("sentry-event-api.json")
        let cutPretty = try ImportTestSupport.convert(.sentry, Array(pretty[..<(pretty.count / 2)]), base: Self.base)
        #expect(cutPretty.issues.map(\.description) == ["line 1: the input ends inside this record (a truncated file?)"])
        #expect(cutPretty.lines.isEmpty)
    }

    @Test("a record over the size limit is skipped and reported, the next one imports")
    func oversized() throws {
        let big = #"{"event_id":"big","breadcrumbs":[{"category":"x","message":""# + String(repeating: "a", count: 5000) + #""}]}"#
        let small = #"{"event_id":"s","breadcrumbs":[{"timestamp":1714644001,"category":"ui.lifecycle","data":{"screen":"AViewController"}}]}"#
        let result = try ImportTestSupport.convert(.sentry, Array((big + "\n" + small + "\n").utf8), base: Self.base, maximumRecordBytes: 4096)
        #expect(result.issues.map(\.code) == [.tooLarge])
        #expect(result.issues.first?.line == 1)
        #expect(result.lines.count == 4)
    }

    @Test(
        "class names: containers and UIKit internals are never screens, app classes are",
        arguments: [
            ("UINavigationController", ControllerClassification.container), ("MyApp.MainTabBarController", .container), ("UISplitViewController", .container),
            ("UIPageViewController", .container), ("UIInputWindowController", .system), ("UICompatibilityInputViewController", .system),
            ("_UIRemoteViewController", .system), ("UIKeyboardCandidateViewController", .system), ("RecipeListViewController", .content),
            ("UIAlertController", .content), ("UIHostingController<ContentView>", .content),
        ])
    func classification(name: String, expected: ControllerClassification) {
        #expect(ControllerClassification(className: name) == expected)
    }
}
