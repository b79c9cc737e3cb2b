import Foundation
import NavlogTesting
import Testing

/// E6 as a user sees it, through the built `navlog` on a log written by `navlog ingest`: a
/// session recorded with will and did callbacks and no transitions, with one cancelled
/// swipe-back (UIKit's pop is recorded; the detail screen appears again before the list's
/// did-appear). Expected values are written from the rules, by hand.
@Suite("A cancelled swipe-back without transition events (E6), end to end")
struct CancelledGestureEndToEndTests {
    static let session = "e6-swipe"

    /// List (launch) → push detail at 2.3 s → a swipe-back begun at 5.65 s and cancelled at
    /// 6.05 s → push photo at 9.05 s → end at 11.4 s.
    static func events() -> String {
        var script = SessionScript(session: session)
        func event(_ type: String, after delay: Int64 = 0, _ fields: String) { script.event(type, after: delay, fields) }
        event("session.start", #""app":"Shop""#)
        event("window.root", #""vc":{"id":"nav","class":"UINavigationController"}"#)
        event("nav.push", #""nav":"nav","vc":{"id":"list","class":"ListViewController"},"animated":false"#)
        event("vc.appear", #""vc":"list","phase":"will""#)
        event("vc.appear", after: 300_000, #""vc":"list","phase":"did""#)
        event("nav.push", after: 2_000_000, #""nav":"nav","vc":{"id":"detail","class":"DetailViewController"},"animated":true"#)
        event("vc.disappear", #""vc":"list","phase":"will""#)
        event("vc.appear", #""vc":"detail","phase":"will""#)
        event("vc.disappear", after: 350_000, #""vc":"list","phase":"did""#)
        event("vc.appear", #""vc":"detail","phase":"did""#)
        event("nav.pop", after: 3_000_000, #""nav":"nav","animated":true"#)  // seq 11: the swipe begins
        event("vc.disappear", #""vc":"detail","phase":"will""#)
        event("vc.appear", #""vc":"list","phase":"will""#)  // seq 13: mid-gesture
        event("vc.disappear", after: 400_000, #""vc":"list","phase":"will""#)
        event("vc.disappear", #""vc":"list","phase":"did""#)
        event("vc.appear", #""vc":"detail","phase":"will""#)  // seq 16: the detail appears again: cancelled
        event("vc.appear", #""vc":"detail","phase":"did""#)
        event("nav.push", after: 3_000_000, #""nav":"nav","vc":{"id":"photo","class":"PhotoViewController"},"animated":true"#)
        event("vc.disappear", #""vc":"detail","phase":"will""#)
        event("vc.appear", #""vc":"photo","phase":"will""#)
        event("vc.disappear", after: 350_000, #""vc":"detail","phase":"did""#)
        event("vc.appear", #""vc":"photo","phase":"did""#)
        event("session.end", after: 2_000_000, "")
        return script.text
    }

    /// Ingests `events` (this suite's session by default) into a data directory in `dir`; returns its path.
    static func ingest(_ events: String = events(), into dir: URL) throws -> String {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("events.jsonl")
        try events.write(to: file, atomically: true, encoding: .utf8)
        let data = dir.appendingPathComponent("data").path
        let ingest = try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path])
        #expect(ingest.status == 0, "\(ingest.errorOutput)")
        return data
    }

    /// `navlog replay --seq` of `session` in `data` as JSON: with the index's checkpoints, then without.
    static func replayStates(_ data: String, _ session: String, seq: String) throws -> [[String: Any]] {
        try [true, false].map { checkpoints in
            let replay = try ProcessRunner.navlog(
                ["replay", "--data-dir", data, "--session", session, "--seq", seq, "--format", "json"] + (checkpoints ? [] : ["--no-checkpoints"]))
            #expect(replay.status == 0, "\(replay.errorOutput)")
            return try #require(try JSONSerialization.jsonObject(with: replay.standardOutput) as? [String: Any])
        }
    }

    /// The ids on the stack of the first window's root in a replay state.
    static func stack(of state: [String: Any]) -> [String] {
        let root = (state["windows"] as? [[String: Any]])?.first?["root"] as? [String: Any]
        return (root?["stack"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func stack(_ replay: ProcessResult) throws -> [String] {
        let state = try #require(try JSONSerialization.jsonObject(with: replay.standardOutput) as? [String: Any])
        let windows = try #require(state["windows"] as? [[String: Any]])
        let root = try #require(windows.first?["root"] as? [String: Any])
        return (root["stack"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test("replay in the middle of the gesture, at its end and after it: the stack the user had, the detail focused, no anomaly")
    func replayAtAnyInstant() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            for seq in ["11", "13", "16"] {
                let replay = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", Self.session, "--seq", seq, "--format", "json"])
                #expect(replay.status == 0, "\(replay.errorOutput)")
                #expect(try Self.stack(replay) == ["list", "detail"], "at seq \(seq)")
                let state = try JSONSerialization.jsonObject(with: replay.standardOutput) as? [String: Any]
                #expect(state?["focus"] as? String == "detail", "at seq \(seq)")
                #expect((state?["anomalies"] as? [Any])?.isEmpty == true, "at seq \(seq): \(replay.output)")
            }
            let end = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", Self.session, "--end", "--format", "json"])
            #expect(try Self.stack(end) == ["list", "detail", "photo"])
            // Without the rollback the stack was [list, photo], with A13 on the detail's will-appear.
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0 && anomalies.output.isEmpty, "\(anomalies.output)")
        }
    }

    @Test("screen views: one view of the list and one unbroken view of the detail (no 0.4 s list view reached by pop)")
    func screenViews() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let query = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv",
                "select screen, count(*) as views, sum(dwell) as dwell from screen_visits group by screen order by screen",
            ])
            #expect(query.status == 0, "\(query.errorOutput)")
            // List 0 → 2.3 s; detail 2.3 s → 9.05 s (the cancelled swipe included); photo to the end.
            #expect(
                query.output.split(separator: "\n").dropFirst().map(String.init) == [
                    "DetailViewController,1,6750000", "ListViewController,1,2300000", "PhotoViewController,1,2350000",
                ], "\(query.output)")
        }
    }

    @Test("timeline: the pop is marked rolled back and every line of the gesture names the detail as the focus")
    func timeline() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", Self.session])
            #expect(timeline.status == 0, "\(timeline.errorOutput)")
            let lines = timeline.output.split(separator: "\n")
            let pop = try #require(lines.first { $0.contains("seq 11 ") })
            #expect(pop.contains("rolled back, E6") && pop.hasSuffix("focus: detail"), "\(pop)")
            for seq in 12...17 {
                let line = try #require(lines.first { $0.contains("seq \(seq) ") })
                #expect(line.hasSuffix("focus: detail"), "\(line)")
            }
        }
    }
}

/// E7 as a user sees it: a session recorded with navigation calls only, whose swipe-back is
/// cancelled: UIKit's pop is recorded, and only the next call (the detail presents a sheet)
/// shows the user never left the detail. Expected values are written from the rules, by hand.
@Suite("A cancelled swipe-back in a navigation-only session (E7), end to end")
struct NavigationOnlyCancelledGestureEndToEndTests {
    static let session = "e7-swipe"

    /// List (launch) → push detail at 2 s → a swipe-back begun at 5 s → the detail presents a
    /// sheet at 9 s → the sheet dismissed (no animation) at 11 s → end at 12 s.
    static func events() -> String {
        var script = SessionScript(session: session)
        func event(_ type: String, after delay: Int64 = 0, _ fields: String) { script.event(type, after: delay, fields) }
        script.openListThenDetail(detailAfter: 2_000_000)
        event("nav.pop", after: 3_000_000, #""nav":"nav","animated":true"#)  // seq 5: the swipe begins
        event("present", after: 4_000_000, #""from":"detail","vc":{"id":"share","class":"ShareViewController"},"style":"pageSheet","animated":true"#)
        event("dismiss", after: 2_000_000, #""vc":"share","animated":false"#)
        event("session.end", after: 1_000_000, "")
        return script.text
    }

    @Test("replay at the pop shows the stack the user had; the views are the list's, one unbroken detail view, the sheet's; no anomaly")
    func navigationOnly() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(Self.events(), into: dir)
            for seq in ["5", "6"] {
                let replay = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", Self.session, "--seq", seq, "--format", "json"])
                #expect(replay.status == 0, "\(replay.errorOutput)")
                #expect(try CancelledGestureEndToEndTests.stack(replay) == ["list", "detail"], "at seq \(seq)")
                let state = try JSONSerialization.jsonObject(with: replay.standardOutput) as? [String: Any]
                #expect(state?["focus"] as? String == (seq == "5" ? "detail" : "share"), "at seq \(seq)")
            }
            // Without E7: an A1 (the detail, taken as popped, presents) and a 4 s view of the list.
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0 && anomalies.output.isEmpty, "\(anomalies.output)")
            let query = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv",
                "select screen, count(*) as views, sum(dwell) as dwell from screen_visits group by screen order by screen",
            ])
            #expect(query.status == 0, "\(query.errorOutput)")
            // List 0 → 2 s; detail 2 s → 9 s and 11 s → 12 s; the sheet 9 s → 11 s.
            #expect(
                query.output.split(separator: "\n").dropFirst().map(String.init) == [
                    "DetailViewController,2,8000000", "ListViewController,1,2000000", "ShareViewController,1,2000000",
                ], "\(query.output)")
        }
    }
}

/// E7 in hindsight: a navigation-only session whose cancelled swipe-back only a call several
/// operations later proves (the detail presents a sheet after an edit screen was pushed over it
/// and popped). Until then the pop stands as recorded; once proved, every reader shows the
/// session as the user had it from the pop on: the replay index re-derives it, and replays,
/// timelines and analytics rows agree. Expected values are written from the rules, by hand.
@Suite("A cancelled swipe-back proved several calls later in a navigation-only session (E7), end to end")
struct LateProvedCancelledGestureEndToEndTests {
    static let session = "e7-late-proof"

    /// See ``SessionScript/lateProvedCancelledSwipe(session:)``.
    static func events() -> String { SessionScript.lateProvedCancelledSwipe(session: session) }

    @Test("replay before the proof, timeline, screen views, transitions: the session as the user had it; no anomaly")
    func provedLater() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(Self.events(), into: dir)
            // R8, R9 with the swipe at seq 5 rolled back (E6, E7): the stack at each step.
            let expected: [(seq: String, stack: [String], focus: String)] = [
                ("5", ["list", "detail"], "detail"), ("6", ["list", "detail", "edit"], "edit"), ("7", ["list", "detail"], "detail"),
                ("8", ["list", "detail"], "share"), ("10", ["list", "detail"], "detail"),
            ]
            for step in expected {
                for state in try CancelledGestureEndToEndTests.replayStates(data, Self.session, seq: step.seq) {
                    #expect(CancelledGestureEndToEndTests.stack(of: state) == step.stack, "at seq \(step.seq)")
                    #expect(state["focus"] as? String == step.focus, "at seq \(step.seq)")
                    // Rolled back at seq 5 in hindsight; nothing left unproven.
                    #expect(state["cancelledGestures"] as? Int == 1 && state["unprovenRemovals"] as? Int == 0, "at seq \(step.seq)")
                }
            }
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0 && anomalies.output.isEmpty, "\(anomalies.output)")
            // Cut short before the proof, the pop stands as recorded, and the replay says it is unproven.
            let cut = SessionScript.lateProvedCancelledSwipe(session: "e7-cut").split(separator: "\n").prefix(7).joined(separator: "\n") + "\n"
            let cutData = try CancelledGestureEndToEndTests.ingest(cut, into: dir.appendingPathComponent("cut"))
            let open = try ProcessRunner.navlog(["replay", "--data-dir", cutData, "--session", "e7-cut", "--end"])
            #expect(open.status == 0, "\(open.errorOutput)")
            #expect(open.output.contains("unproven: 1 animated pop or dismissal taken as done"), "\(open.output)")
            let visits = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv", "select screen, start, dwell, how from screen_visits order by start",
            ])
            #expect(visits.status == 0, "\(visits.errorOutput)")
            let origin: Int64 = 1_763_715_600_000_000
            func at(_ seconds: Int64) -> String { String(origin + seconds * 1_000_000) }
            // List 0 → 1 s; detail 1 → 8 s (never left at 5 s); edit 8 → 12 s; detail 12 → 15 s;
            // the sheet 15 → 17 s; detail 17 → 18 s.
            #expect(
                visits.output.split(separator: "\n").dropFirst().map(String.init) == [
                    "ListViewController,\(at(0)),1000000,root", "DetailViewController,\(at(1)),7000000,push", "EditViewController,\(at(8)),4000000,push",
                    "DetailViewController,\(at(12)),3000000,pop", "ShareViewController,\(at(15)),2000000,present",
                    "DetailViewController,\(at(17)),1000000,dismiss",
                ], "\(visits.output)")
            let transitions = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv", "select \"from\", \"to\", how from transitions order by timestamp",
            ])
            #expect(transitions.status == 0, "\(transitions.errorOutput)")
            #expect(
                transitions.output.split(separator: "\n").dropFirst().map(String.init) == [
                    ",ListViewController,root", "ListViewController,DetailViewController,push", "DetailViewController,EditViewController,push",
                    "EditViewController,DetailViewController,pop", "DetailViewController,ShareViewController,present",
                    "ShareViewController,DetailViewController,dismiss",
                ], "\(transitions.output)")
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", Self.session])
            #expect(timeline.status == 0, "\(timeline.errorOutput)")
            let lines = timeline.output.split(separator: "\n").map(String.init)
            let pop = lines.first { $0.contains("seq 5 ") }
            #expect(pop?.contains("rolled back, E7") == true && pop?.hasSuffix("focus: detail") == true, "\(pop ?? timeline.output)")
            #expect(lines.first { $0.contains("seq 7 ") }?.hasSuffix("focus: detail") == true, "\(timeline.output)")
        }
    }
}

/// Two swipe-backs in a row in a navigation-only session: the second pop proves the first
/// cancelled (taken as done, it would leave only the root to pop, A9), and is itself a gesture
/// whose outcome the next call tells. The timeline names the focus the user had right after the
/// rollback on the first pop's line, not the one the second pop moved to.
@Suite("Two swipe-backs in a row in a navigation-only session (E7): the timeline, end to end")
struct ChainedSwipesTimelineEndToEndTests {
    @Test("the first pop is marked rolled back (E7) and names the detail, the second names the list")
    func chain() throws {
        var script = SessionScript(session: "e7-chain")
        script.openListThenDetail(detailAfter: 1_000_000)
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":true"#)  // seq 5: cancelled
        script.event("nav.pop", after: 3_000_000, #""nav":"nav","animated":true"#)  // seq 6: completed
        script.event("nav.push", after: 2_000_000, #""nav":"nav","vc":{"id":"search","class":"SearchViewController"},"animated":true"#)
        script.event("session.end", after: 1_000_000, "")
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(script.text, into: dir)
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", "e7-chain"])
            #expect(timeline.status == 0, "\(timeline.errorOutput)")
            let lines = timeline.output.split(separator: "\n").map(String.init)
            let first = lines.first { $0.contains("seq 5 ") }, second = lines.first { $0.contains("seq 6 ") }
            #expect(first?.contains("rolled back, E7") == true && first?.hasSuffix("focus: detail") == true, "\(timeline.output)")
            #expect(second?.contains("rolled back") == false && second?.hasSuffix("focus: list") == true, "\(timeline.output)")
            // The views: list 0–1 s, detail 1–6 s (never left at 3 s), list 6–8 s, search 8–9 s.
            let visits = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv", "select screen, dwell from screen_visits order by start",
            ])
            #expect(
                visits.output.split(separator: "\n").dropFirst().map(String.init) == [
                    "ListViewController,1000000", "DetailViewController,5000000", "ListViewController,2000000", "SearchViewController,1000000",
                ], "\(visits.output)")
        }
    }
}

/// A sheet dismissed (completed) right before a swipe-back that a call several operations later
/// proves cancelled, in a navigation-only session (E7). Replayed in hindsight, the pop's own
/// event resolves the dismissal still pending from the call before it (completed: the pop acts
/// through neither the sheet nor its presenter) and then rolls the pop back. Readers must tell
/// the two apart: the dismissal stands, only the pop is rolled back. Expected values written
/// from the rules, by hand.
@Suite("A completed dismissal followed by a swipe-back proved cancelled later (E7), end to end")
struct DismissalBeforeCancelledSwipeEndToEndTests {
    static let session = "e7-dismiss-then-swipe"

    /// List (launch) → push detail at 1 s → the detail presents a sheet at 2 s → the sheet is
    /// dismissed at 4 s (seq 6, completed) → a swipe-back begun at 5 s (seq 7, cancelled) → push
    /// edit at 8 s → edit popped (no animation) at 12 s → the detail presents another sheet at
    /// 15 s (seq 10, the proof: the detail is still there) → end at 16 s.
    static func events() -> String {
        var script = SessionScript(session: session)
        func event(_ type: String, after delay: Int64 = 0, _ fields: String) { script.event(type, after: delay, fields) }
        script.openListThenDetail(detailAfter: 1_000_000)
        event("present", after: 1_000_000, #""from":"detail","vc":{"id":"sheet","class":"FilterViewController"},"style":"pageSheet","animated":true"#)
        event("dismiss", after: 2_000_000, #""vc":"sheet","animated":true"#)
        event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)
        event("nav.push", after: 3_000_000, #""nav":"nav","vc":{"id":"edit","class":"EditViewController"},"animated":true"#)
        event("nav.pop", after: 4_000_000, #""nav":"nav","animated":false"#)
        event("present", after: 3_000_000, #""from":"detail","vc":{"id":"share","class":"ShareViewController"},"style":"pageSheet","animated":true"#)
        event("session.end", after: 1_000_000, "")
        return script.text
    }

    @Test("timeline marks only the pop rolled back; replay after the dismissal shows no sheet; the views are the user's")
    func onlyThePopIsRolledBack() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(Self.events(), into: dir)
            for format in ["text", "json"] {
                let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", Self.session, "--format", format])
                #expect(timeline.status == 0, "\(timeline.errorOutput)")
                let lines = timeline.output.split(separator: "\n").map(String.init)
                let dismissal = lines.first { $0.contains(format == "json" ? #""seq":6,"# : "seq 6 ") }
                let pop = lines.first { $0.contains(format == "json" ? #""seq":7,"# : "seq 7 ") }
                #expect(dismissal != nil && dismissal?.contains(format == "json" ? "rolledBack" : "rolled back") == false, "\(timeline.output)")
                #expect(pop?.contains(format == "json" ? #""rolledBack":"E7""# : "rolled back, E7") == true, "\(timeline.output)")
            }
            // R11: the dismissal took the sheet away at seq 6 (no gesture was cancelled there);
            // E7: the pop at seq 7 never happened for the user; R8, R9 after it.
            let expected: [(seq: String, stack: [String], focus: String, presented: String?)] = [
                ("5", ["list", "detail"], "sheet", "sheet"), ("6", ["list", "detail"], "detail", nil), ("7", ["list", "detail"], "detail", nil),
                ("8", ["list", "detail", "edit"], "edit", nil), ("9", ["list", "detail"], "detail", nil), ("10", ["list", "detail"], "share", "share"),
            ]
            for step in expected {
                for state in try CancelledGestureEndToEndTests.replayStates(data, Self.session, seq: step.seq) {
                    #expect(CancelledGestureEndToEndTests.stack(of: state) == step.stack, "at seq \(step.seq)")
                    #expect(state["focus"] as? String == step.focus, "at seq \(step.seq): \(state)")
                    let root = (state["windows"] as? [[String: Any]])?.first?["root"] as? [String: Any]
                    let presented = (root?["presented"] as? [String: Any])?["node"] as? [String: Any]
                    #expect(presented?["id"] as? String == step.presented, "at seq \(step.seq): \(state)")
                }
            }
            let visits = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", data, "--format", "csv", "select screen, dwell, how from screen_visits order by start",
            ])
            #expect(visits.status == 0, "\(visits.errorOutput)")
            // List 0–1 s, detail 1–2 s, the sheet 2–4 s, detail 4–8 s (never left at 5 s), edit
            // 8–12 s, detail 12–15 s, share 15–16 s.
            #expect(
                visits.output.split(separator: "\n").dropFirst().map(String.init) == [
                    "ListViewController,1000000,root", "DetailViewController,1000000,push", "FilterViewController,2000000,present",
                    "DetailViewController,4000000,dismiss", "EditViewController,4000000,push", "DetailViewController,3000000,pop",
                    "ShareViewController,1000000,present",
                ], "\(visits.output)")
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0 && anomalies.output.isEmpty, "\(anomalies.output)")
        }
    }
}

/// A pop past the root in a navigation-only session proves that one of the stack's pending or
/// unproven pops was a cancelled swipe, not which (E7): navlog rolls back the most recent and
/// says it chose, in the timeline and the replay; when only one pop could have been cancelled,
/// nothing is chosen. Expected values written from the rules, by hand.
@Suite("A pop past the root that fits several cancelled swipes (E7): the rollback is marked as a choice, end to end")
struct ChosenRollbackEndToEndTests {
    /// The timeline's JSON lines of `session` in `data`, by seq.
    static func timeline(_ data: String, _ session: String) throws -> [Int: [String: Any]] {
        let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", session, "--format", "json"])
        #expect(timeline.status == 0, "\(timeline.errorOutput)")
        var lines: [Int: [String: Any]] = [:]
        for line in timeline.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            lines[try #require(object["seq"] as? Int)] = object
        }
        return lines
    }

    @Test("two swipes then a pop past the root: the second swipe is rolled back as a choice (decided at the next call)")
    func chosenAtTheNextCall() throws {
        var script = SessionScript(session: "e7-chosen")
        script.openListThenDetail(detailAfter: 1_000_000)
        script.event("nav.push", after: 1_000_000, #""nav":"nav","vc":{"id":"photo","class":"PhotoViewController"},"animated":true"#)
        script.event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)  // seq 6: photo
        script.event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)  // seq 7: detail
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":true"#)  // seq 8: past the root
        script.event("session.end", after: 1_000_000, "")
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(script.text, into: dir)
            let lines = try Self.timeline(data, "e7-chosen")
            // Seq 8 pops past the root unless seq 6 or seq 7 was cancelled; the calls do not say
            // which. The most recent, seq 7, is rolled back, and marked as chosen.
            #expect(lines[6]?["rolledBack"] == nil && lines[8]?["rolledBack"] == nil, "\(lines)")
            #expect(lines[7]?["rolledBack"] as? String == "E7" && lines[7]?["rollbackChosen"] as? Bool == true, "\(lines)")
            // At seq 7 the pop is pending; the replay resolves it with the calls after it.
            for state in try CancelledGestureEndToEndTests.replayStates(data, "e7-chosen", seq: "7") + CancelledGestureEndToEndTests.replayStates(data, "e7-chosen", seq: "8") {
                #expect(state["cancelledGestures"] as? Int == 1 && state["cancelledGesturesChosen"] as? Int == 1, "\(state)")
            }
            let text = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e7-chosen", "--end"])
            #expect(text.output.contains("1 of them chosen: a pop past the root"), "\(text.output)")
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0 && anomalies.output.isEmpty, "\(anomalies.output)")
        }
    }

    @Test("two swipes, a push and pop, then a pop past the root: the second swipe is rolled back in hindsight, as a choice")
    func chosenInHindsight() throws {
        var script = SessionScript(session: "e7-chosen-later")
        script.openListThenDetail(detailAfter: 1_000_000)
        script.event("nav.push", after: 1_000_000, #""nav":"nav","vc":{"id":"photo","class":"PhotoViewController"},"animated":true"#)
        script.event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)  // seq 6: photo
        script.event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)  // seq 7: detail
        script.event("nav.push", after: 2_000_000, #""nav":"nav","vc":{"id":"search","class":"SearchViewController"},"animated":true"#)
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":false"#)  // seq 9: search
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":true"#)  // seq 10: past the root
        script.event("session.end", after: 1_000_000, "")
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(script.text, into: dir)
            let lines = try Self.timeline(data, "e7-chosen-later")
            #expect(lines[6]?["rolledBack"] == nil && lines[10]?["rolledBack"] == nil, "\(lines)")
            #expect(lines[7]?["rolledBack"] as? String == "E7" && lines[7]?["rollbackChosen"] as? Bool == true, "\(lines)")
            // R8 with seq 7 rolled back: search pushed onto the detail.
            for state in try CancelledGestureEndToEndTests.replayStates(data, "e7-chosen-later", seq: "8") {
                #expect(CancelledGestureEndToEndTests.stack(of: state) == ["list", "detail", "search"], "\(state)")
                #expect(state["cancelledGestures"] as? Int == 1 && state["cancelledGesturesChosen"] as? Int == 1, "\(state)")
            }
        }
    }

    /// Two swipes on [list, detail, photo], then the detail presents: `naming`, the second pop
    /// names the controller it took.
    static func swipesThenPresent(_ session: String, naming: Bool) -> String {
        var script = SessionScript(session: session)
        script.openListThenDetail(detailAfter: 1_000_000)
        script.event("nav.push", after: 1_000_000, #""nav":"nav","vc":{"id":"photo","class":"PhotoViewController"},"animated":true"#)
        script.event("nav.pop", after: 1_000_000, #""nav":"nav","animated":true"#)  // seq 6: photo
        script.event("nav.pop", after: 1_000_000, naming ? #""nav":"nav","vc":"detail","animated":true"# : #""nav":"nav","animated":true"#)  // seq 7
        script.event("present", after: 2_000_000, #""from":"detail","vc":{"id":"share","class":"ShareViewController"},"style":"pageSheet","animated":true"#)
        script.event("session.end", after: 1_000_000, "")
        return script.text
    }

    @Test("two swipes then a call through the controller the second took: either swipe fits, the second is rolled back as a choice")
    func chosenByController() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(Self.swipesThenPresent("e7-chosen-controller", naming: false), into: dir)
            let lines = try Self.timeline(data, "e7-chosen-controller")
            // The detail presents at seq 8, so it was still there: either the pop at seq 7 was
            // cancelled, or the one at seq 6 was and seq 7 took the photo (neither names what
            // it popped). navlog rolls back seq 7, and says it chose.
            #expect(lines[6]?["rolledBack"] == nil, "\(lines)")
            #expect(lines[7]?["rolledBack"] as? String == "E7" && lines[7]?["rollbackChosen"] as? Bool == true, "\(lines)")
            for state in try CancelledGestureEndToEndTests.replayStates(data, "e7-chosen-controller", seq: "8") {
                #expect(state["cancelledGestures"] as? Int == 1 && state["cancelledGesturesChosen"] as? Int == 1, "\(state)")
            }
            // The same calls with the pop at seq 7 naming the controller it took: no choice.
            let namedData = try CancelledGestureEndToEndTests.ingest(Self.swipesThenPresent("e7-named", naming: true), into: dir.appendingPathComponent("named"))
            let namedLines = try Self.timeline(namedData, "e7-named")
            #expect(namedLines[7]?["rolledBack"] as? String == "E7" && namedLines[7]?["rollbackChosen"] == nil, "\(namedLines)")
        }
    }

    @Test("one swipe then a pop past the root: that swipe is the only one that fits, rolled back with no choice made")
    func onlyOneFits() throws {
        var script = SessionScript(session: "e7-one")
        script.openListThenDetail(detailAfter: 1_000_000)
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":true"#)  // seq 5: cancelled
        script.event("nav.pop", after: 2_000_000, #""nav":"nav","animated":true"#)  // seq 6: past the root
        script.event("session.end", after: 1_000_000, "")
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try CancelledGestureEndToEndTests.ingest(script.text, into: dir)
            let lines = try Self.timeline(data, "e7-one")
            #expect(lines[5]?["rolledBack"] as? String == "E7" && lines[5]?["rollbackChosen"] == nil, "\(lines)")
            for state in try CancelledGestureEndToEndTests.replayStates(data, "e7-one", seq: "6") {
                #expect(state["cancelledGestures"] as? Int == 1 && state["cancelledGesturesChosen"] as? Int == 0, "\(state)")
            }
        }
    }
}
