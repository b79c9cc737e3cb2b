import Foundation
import NavlogTesting
import Testing

/// `navlog import` run as a program on the hand-written fixtures of `Tests/Fixtures/import`,
/// then `navlog query sql` / `navlog replay` on the data directory: the screens a person saw
/// (never a container, an embedded child or a keyboard controller), what each session records,
/// and a re-import that stores nothing. Expected rows are written by hand from the rules
/// (docs/IMPORT.md, F1, F4, E3).
@Suite("navlog import end to end")
struct ImportEndToEndTests {
    static func fixture(_ name: String) -> String { TestEnvironment.fixture("import/" + name).path }

    /// `session screen how dwell-ms` per screen visit, in order.
    static func visits(_ data: String) throws -> [String] {
        let result = try ProcessRunner.navlog([
            "query", "sql", "--data-dir", data, "--format", "json", #"SELECT session, screen, how, dwell, "index" FROM screen_visits ORDER BY session, "index""#,
        ])
        #expect(result.status == 0, "\(result.errorOutput)")
        return result.output.split(separator: "\n").map { line in
            let row = try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(row["session"]!) \(row["screen"]!) \(row["how"]!) \((row["dwell"] as! Int) / 1000)ms"
        }
    }

    /// `navlog replay --end --format json` of one session, as an object.
    static func replay(_ data: String, _ session: String) throws -> [String: Any] {
        let result = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", session, "--end", "--format", "json"])
        #expect(result.status == 0, "\(result.errorOutput)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    @Test("Sentry: screens are the content controllers the user saw; containers, children and keyboards are none; a re-import stores nothing")
    func sentry() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let files = [Self.fixture("sentry-event-api.json"), Self.fixture("sentry-events.jsonl")]
            let first = try ProcessRunner.navlog(["import", "--from", "sentry", "--data-dir", data] + files)
            #expect(first.status == 0, "\(first.errorOutput)")
            #expect(first.output.contains("4 records read, 3 sessions, 30 events stored"), "\(first.output)")
            #expect(first.output.contains("5 containers and system controllers left out"), "\(first.output)")
            let api = "sentry:5c7a3b9e0f1d4e2a8b6c4d2e0f1a3b5c"
            let tagged = "sentry:A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"
            // Written by hand: the list 0.22–4.4 s; the detail 4.4–12.01 s; the shopping list
            // presented over it 12.01–90 s less the minute in the background; the detail again
            // (its dismissal) 90–95 s; the list again until the last crumb 10 ms later.
            // The tagged session: home, settings presented 3–20 s, home again, profile.
            #expect(
                try Self.visits(data) == [
                    "sentry:1f2e3d4c5b6a4798a6b5c4d3e2f1a0b9 HomeViewController root 0ms",
                    "\(api) RecipeListViewController root 4180ms",
                    "\(api) RecipeDetailViewController root 7610ms",
                    "\(api) ShoppingListViewController present 18090ms",
                    "\(api) RecipeDetailViewController dismiss 5000ms",
                    "\(api) RecipeListViewController root 10ms",
                    "\(tagged) HomeViewController root 2800ms",
                    "\(tagged) SettingsViewController present 17000ms",
                    "\(tagged) HomeViewController dismiss 5000ms",
                    "\(tagged) ProfileViewController root 0ms",
                ])
            let state = try Self.replay(data, api)
            #expect(state["records"] as? [String] == ["didAppear"])
            #expect(state["focus"] as? String == "RecipeListViewController")
            #expect((state["anomalies"] as? [Any])?.isEmpty == true)
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", data, "--session", api, "--type", "mark"])
            #expect(cat.output.contains(#""name":"import","props":{"source":"sentry""#), "\(cat.output)")

            let again = try ProcessRunner.navlog(["import", "--from", "sentry", "--data-dir", data] + files.reversed())
            #expect(again.status == 0, "\(again.errorOutput)")
            #expect(again.output.contains("0 events stored"), "\(again.output)")
            #expect(again.output.contains("30 duplicates (already stored)"), "\(again.output)")
            let count = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(count.output.split(separator: "\n").count == 30)
        }
    }

    @Test("Datadog: raw events and a search-API page from standard input; a view resumed after the background is one view; the replay records did-appear and did-disappear")
    func datadog() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let page = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("datadog-search-page.json")))
            let result = try ProcessRunner.navlog(["import", "--from", "datadog", "--data-dir", data, Self.fixture("datadog-views.jsonl"), "-"], input: page)
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(result.output.contains("11 records read, 2 sessions, 22 events stored"), "\(result.output)")
            let one = "datadog:3e9b6c2a-2222-4d4e-8f5a-000000000001"
            let two = "datadog:8d2e4f6a-3333-4b5c-9d6e-000000000002"
            // The detail 4–10 s and 70–75 s is one view of 11 s (the minute between is background, F4).
            #expect(
                try Self.visits(data) == [
                    "\(one) RecipeListViewController root 4000ms",
                    "\(one) RecipeDetailViewController root 11000ms",
                    "\(one) RecipeListViewController root 0ms",
                    "\(two) OnboardingViewController root 2500ms",
                    "\(two) HomeViewController root 4000ms",
                ])
            let state = try Self.replay(data, one)
            #expect(state["records"] as? [String] == ["didAppear", "didDisappear"])
            #expect((state["anomalies"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("Firebase: screen_view rows in order; a screen replaced at the instant it came is no view (E3)")
    func firebase() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let result = try ProcessRunner.navlog(["import", "--from", "firebase", "--data-dir", data, Self.fixture("firebase-events.jsonl")])
            #expect(result.status == 0, "\(result.errorOutput)")
            let session = "firebase:0A1B2C3D4E5F60718293A4B5C6D7E8F9:1714644000"
            #expect(
                try Self.visits(data) == [
                    "\(session) RecipeListViewController root 4800ms",
                    "\(session) RecipeDetailViewController root 7000ms",
                    "\(session) RecipeListViewController root 0ms",
                ])
            #expect(try Self.replay(data, session)["records"] as? [String] == ["didAppear"])
        }
    }

    @Test("bad input: each skipped record is named with its file and line, the rest is stored, the exit status is 1; a wrong source or path says what to do")
    func badInput() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let file = dir.appendingPathComponent("rows.jsonl")
            try """
            {"event_name":"screen_view","event_timestamp":"1714644000000000","user_pseudo_id":"u","event_params":[{"key":"ga_session_id","value":{"int_value":"1"}},{"key":"firebase_screen_class","value":{"string_value":"AViewController"}}]}
            {"event_name":"screen_view","event_timestamp":"noon","user_pseudo_id":"u","event_params":[]}
            {"event_name":"screen_view","event_timestamp":"1714644001000000","user_pseudo_id":"u","event_params":[{"key":"ga_session_id","value":{"int_value":"1"}},{"key":"firebase_screen_class","value":{"string_value":"BViewController"}}]}
            {"event_name":"screen_view","event_timestamp":"17146
            """.write(to: file, atomically: true, encoding: .utf8)
            let result = try ProcessRunner.navlog(["import", "--from", "firebase", "--data-dir", data, file.path])
            #expect(result.status == 1)
            #expect(
                result.errorOutput.contains("rows.jsonl: line 2, event_timestamp: \"noon\" is neither an ISO 8601 time nor a number; the row was skipped"), "\(result.errorOutput)")
            #expect(result.errorOutput.contains("rows.jsonl: line 4: the input ends inside this record (a truncated file?)"), "\(result.errorOutput)")
            #expect(result.output.contains("4 records read, 1 sessions, 6 events stored"), "\(result.output)")
            #expect(result.output.contains("2 skipped"), "\(result.output)")

            let wrong = try ProcessRunner.navlog(["import", "--from", "mixpanel", "--data-dir", data, file.path])
            #expect(wrong.status != 0)
            #expect(wrong.errorOutput.contains("use sentry, datadog or firebase"), "\(wrong.errorOutput)")
            let missing = try ProcessRunner.navlog(["import", "--from", "sentry", "--data-dir", data, dir.appendingPathComponent("none.json").path])
            #expect(missing.status == 1)
            #expect(missing.errorOutput.contains("cannot open"), "\(missing.errorOutput)")
            // A file that cannot be opened after one that imported: the sessions converted before
            // it are stored (appended on the appender's thread, waited for), so a run again of
            // that file stores nothing new.
            let sentryData = dir.appendingPathComponent("sentry").path
            let cut = try ProcessRunner.navlog([
                "import", "--from", "sentry", "--data-dir", sentryData, Self.fixture("sentry-event-api.json"), dir.appendingPathComponent("none.json").path,
            ])
            #expect(cut.status == 1)
            #expect(cut.errorOutput.contains("cannot open") && cut.errorOutput.contains("Sessions completed in earlier files are stored"), "\(cut.errorOutput)")
            let again = try ProcessRunner.navlog(["import", "--from", "sentry", "--data-dir", sentryData, Self.fixture("sentry-event-api.json")])
            #expect(again.status == 0, "\(again.errorOutput)")
            #expect(again.output.contains(" 0 events stored") && !again.output.contains(" 0 duplicates"), "\(again.output)")
            let help = try ProcessRunner.navlog(["import", "--help"])
            #expect(help.output.contains("sentry") && help.output.contains("datadog") && help.output.contains("firebase"))
        }
    }
}
