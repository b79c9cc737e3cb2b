import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// `navlog replay`, `sessions`, `timeline` and `anomalies` run as a user runs them, on logs
/// written by `navlog ingest` and by a live navlogd.
@Suite("navlog replay, sessions, timeline and anomalies end to end")
struct ReplayEndToEndTests {
    /// A phone session: a tab bar of two navigation stacks, a push, a form sheet, a duplicate
    /// push (A6, fatal), a dismissal, and a tap on the second tab.
    static let session = [
        #"{"type":"session.start","session":"e2e","seq":1,"ts":1763715601000000,"app":"Demo","version":"1.0","device":"iPhone16,2","idiom":"phone","traits":{"h":"compact","v":"regular"}}"#,
        #"{"type":"window.root","session":"e2e","seq":2,"ts":1763715602000000,"vc":{"id":"tab","class":"UITabBarController"}}"#,
        #"{"type":"tab.set","session":"e2e","seq":3,"ts":1763715603000000,"tab":"tab","vcs":[{"id":"nav1","class":"UINavigationController"},{"id":"nav2","class":"UINavigationController"}],"selected":0}"#,
        #"{"type":"nav.set","session":"e2e","seq":4,"ts":1763715604000000,"nav":"nav1","vcs":[{"id":"home","class":"HomeViewController","title":"Home"}]}"#,
        #"{"type":"nav.set","session":"e2e","seq":5,"ts":1763715605000000,"nav":"nav2","vcs":[{"id":"settings","class":"SettingsViewController"}]}"#,
        #"{"type":"nav.push","session":"e2e","seq":6,"ts":1763715606000000,"nav":"nav1","vc":{"id":"detail","class":"DetailViewController"},"animated":false}"#,
        #"{"type":"present","session":"e2e","seq":7,"ts":1763715607000000,"from":"detail","vc":{"id":"sheet","class":"ComposeViewController"},"style":"formSheet"}"#,
        #"{"type":"nav.push","session":"e2e","seq":8,"ts":1763715608000000,"nav":"nav1","vc":"detail"}"#,
        #"{"type":"dismiss","session":"e2e","seq":9,"ts":1763715609000000,"vc":"sheet"}"#,
        #"{"type":"tab.select","session":"e2e","seq":10,"ts":1763715610000000,"tab":"tab","index":1,"byUser":true}"#,
    ]

    /// A data directory holding the session above and some generated ones.
    static func ingest(into dir: URL) throws -> String {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 77))
        let lines = session.map { Array($0.utf8) } + generator.lines(3_000)
        let file = dir.appendingPathComponent("events.jsonl")
        try Data(lines.flatMap { $0 + [0x0A] }).write(to: file)
        let data = dir.appendingPathComponent("data").path
        let ingest = try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path])
        #expect(ingest.status == 0, "\(ingest.errorOutput)")
        return data
    }

    /// The tab bar (empty for 1 s) and nav1 (empty for 1 s) have no dwell: a container whose
    /// content is not set is no focused screen (E3).
    @Test("an index written by another navlog version is rebuilt with one line saying so, and answers the same")
    func indexOfAnotherVersionRebuilt() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let first = try ProcessRunner.navlog(["sessions", "--format", "json", "--data-dir", data])
            #expect(first.status == 0 && first.errorOutput.isEmpty, "\(first.errorOutput)")
            // Make every index file look like an older format's (version 4 in the header).
            let replay = URL(fileURLWithPath: data).appendingPathComponent("replay")
            for name in try FileManager.default.contentsOfDirectory(atPath: replay.path) where name.hasSuffix(".nrx") {
                let handle = try FileHandle(forUpdating: replay.appendingPathComponent(name))
                try handle.seek(toOffset: 4)
                handle.write(Data([4, 0]))
                try handle.close()
            }
            let upgraded = try ProcessRunner.navlog(["sessions", "--format", "json", "--data-dir", data])
            #expect(upgraded.status == 0)
            #expect(upgraded.output == first.output)
            #expect(upgraded.errorOutput.contains("written by another navlog version (index format 4); rebuilt"), "\(upgraded.errorOutput)")
            #expect(upgraded.errorOutput.split(separator: "\n").count == 1, "one line: \(upgraded.errorOutput)")
            let again = try ProcessRunner.navlog(["query", "screens", "--data-dir", data])
            #expect(again.status == 0 && again.errorOutput.isEmpty, "once: \(again.errorOutput)")
        }
    }

    @Test("the tree format shows stacks, tabs, the presentation with its adapted style, the focus and what is hidden")
    func treeFormat() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let result = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--seq", "7"])
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(
                result.output == """
                    session e2e · event 6 (seq 7) · 2025-11-21T09:00:07.000000Z · traits h=compact v=regular · foreground
                    window main
                    └─ ● tab UITabBarController [tab]
                       ├─ ○ tab 0 ✓ nav1 UINavigationController [navigation]
                       │  ├─ ○ [0] home HomeViewController “Home”
                       │  └─ ○ [1] detail DetailViewController
                       ├─ ○ tab 1 nav2 UINavigationController [navigation]
                       │  └─ ○ [0] settings SettingsViewController
                       └─ ◉ presents (formSheet → fullScreen) sheet ComposeViewController  ← focus
                    dwell (focused in the foreground): home 2.0s, detail 1.0s
                    records: navigation calls
                    no anomalies

                    """)
            // After the dismissal and the tap on the second tab, with the A6 listed.
            let end = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--end"])
            #expect(end.output.contains("◉ [0] settings SettingsViewController  ← focus"), "\(end.output)")
            #expect(end.output.contains("A6 push-duplicate R8 FATAL at event 7 seq 8"), "\(end.output)")
        }
    }

    @Test("--format json matches schemas/replay-output.schema.json at every event, and says what events.md says")
    func jsonFormat() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            var outputs: [String] = []
            for index in 0..<Self.session.count {
                let result = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--index", "\(index)", "--format", "json"])
                #expect(result.status == 0, "\(result.errorOutput)")
                outputs.append(result.output)
            }
            // Generated sessions too, at their end.
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "csv"]).output.split(separator: "\n").dropFirst()
            for line in sessions.prefix(8) {
                let id = String(line.prefix { $0 != "," })
                outputs.append(try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", id, "--format", "json"]).output)
            }
            let check = try SchemaValidator.validate(lines: outputs.map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 }, schema: "schemas/replay-output.schema.json", in: dir)
            #expect(check.status == 0, "\(check.output)\(check.errorOutput)")
            let seven = try JSONSerialization.jsonObject(with: Data(outputs[6].utf8)) as! [String: Any]
            #expect(seven["focus"] as? String == "sheet")
            #expect(seven["focusPath"] as? [String] == ["tab", "sheet"])
            #expect(seven["visible"] as? [String] == ["tab", "sheet"], "a form sheet in a compact width is full screen: nothing beneath is visible (R4, R5)")
            let at = seven["at"] as! [String: Any]
            #expect(at["seq"] as? Int == 7 && at["index"] as? Int == 6 && at["lsn"] as? Int == 7)
            let last = try JSONSerialization.jsonObject(with: Data(outputs[9].utf8)) as! [String: Any]
            #expect(last["focus"] as? String == "settings")
            let anomalies = last["anomalies"] as! [[String: Any]]
            #expect(anomalies.count == 1)
            #expect(anomalies.first?["code"] as? String == "A6" && anomalies.first?["fatal"] as? Bool == true)
            #expect((anomalies.first?["event"] as? [String: Any])?["lsn"] as? Int == 8)
        }
    }

    @Test("--format dot is a Graphviz digraph with the focus marked; --at takes an offset from the session start")
    func dotFormatAndOffsets() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let dot = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--format", "dot"])
            #expect(dot.output.hasPrefix("digraph navlog {"))
            #expect(dot.output.contains(#""settings" [label="settings\nSettingsViewController", style="filled,bold""#), "\(dot.output)")
            #expect(dot.output.contains(#""nav1" -> "detail" [label="1"];"#))
            // +5.5s after 09:00:01 is 09:00:06.5: the state after the push at 09:00:06.
            let offset = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--at", "+5.5s", "--format", "json"])
            let state = try JSONSerialization.jsonObject(with: Data(offset.output.utf8)) as! [String: Any]
            #expect((state["at"] as? [String: Any])?["seq"] as? Int == 6)
            #expect(state["focus"] as? String == "detail")
            let absolute = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--at", "2025-11-21T09:00:06.5Z", "--format", "json"])
            #expect(absolute.output == offset.output)
        }
    }

    @Test("sessions, timeline and anomalies list what happened; mistakes get a clear error and a failing status")
    func listingsAndErrors() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "json", "--app", "Demo"])
            #expect(
                sessions.output
                    == #"{"session":"e2e","app":"Demo","version":"1.0","device":"iPhone16,2","idiom":"phone","first":"2025-11-21T09:00:01.000000Z","last":"2025-11-21T09:00:10.000000Z","events":10,"anomalies":1}"#
                    + "\n")
            let csv = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "csv"]).output
            #expect(csv.hasPrefix("session,app,version,device,idiom,first,last,events,anomalies\n"))
            #expect(csv.contains("e2e,Demo,1.0,\"iPhone16,2\",phone,"), "a field with a comma is quoted")
            let all = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "json"]).output.split(separator: "\n")
            let events = try all.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }.map { $0["events"] as! Int }
            #expect(events.reduce(0, +) == 3_010, "every event belongs to one listed session")
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", "e2e", "--anomalies-only"])
            #expect(timeline.output.hasPrefix("#7  2025-11-21T09:00:08.000000Z  seq 8  nav.push nav=nav1 vc=detail  focus: sheet\n    ⚠ A6 push-duplicate (R8) FATAL"))
            #expect(timeline.output.split(separator: "\n").count == 2)
            let full = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", "e2e", "--format", "json"]).output.split(separator: "\n")
            #expect(full.count == 10)
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--code", "push-duplicate", "--format", "json"])
            let lines = anomalies.output.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.contains(#""code":"A6""#) == true && lines.first?.contains(#""app":"Demo""#) == true)

            let missing = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "nope"])
            #expect(missing.status == 1)
            #expect(missing.errorOutput.contains("holds no events of session nope. List the sessions with: navlog sessions"))
            let past = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--index", "10"])
            #expect(past.status == 1)
            #expect(past.errorOutput.contains("session e2e has 10 events (--index 0 to 9); 10 is past its end."))
            let early = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--at", "2025-11-21T08:00:00Z"])
            #expect(early.status == 1 && early.errorOutput.contains("is before the first event of session e2e"))
            let both = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "e2e", "--index", "1", "--end"])
            #expect(both.status == 64 && both.errorOutput.contains("Give only one of --at, --seq, --index and --end."))
            let code = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--code", "A99"])
            #expect(code.status == 64 && code.errorOutput.contains("A99 is not an anomaly code"))
        }
    }

    @Test("replay works on a data directory while navlogd writes to it, and sees what was stored since")
    func replayWhileDaemonWrites() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let first = dir.appendingPathComponent("first.jsonl")
            try (Self.session.prefix(6).joined(separator: "\n") + "\n").write(to: first, atomically: true, encoding: .utf8)
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, first.path]).status == 0)
            let before = try ProcessRunner.navlog(["replay", "--data-dir", daemon.dataDirectory, "--session", "e2e", "--format", "json"])
            #expect(before.status == 0, "\(before.errorOutput)")
            #expect(before.output.contains(#""focus":"detail""#), "\(before.output)")
            let rest = dir.appendingPathComponent("rest.jsonl")
            try (Self.session.dropFirst(6).joined(separator: "\n") + "\n").write(to: rest, atomically: true, encoding: .utf8)
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, rest.path]).status == 0)
            let after = try ProcessRunner.navlog(["replay", "--data-dir", daemon.dataDirectory, "--session", "e2e", "--format", "json"])
            #expect(after.output.contains(#""focus":"settings""#), "\(after.output)")
            let listed = try ProcessRunner.navlog(["sessions", "--data-dir", daemon.dataDirectory, "--format", "csv"])
            #expect(listed.output.contains(",10,1\n"), "\(listed.output)")
            #expect(daemon.terminate() == 0)
        }
    }
}
