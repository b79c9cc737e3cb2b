import Foundation
import NavlogTesting
import Testing

/// `navlog simulate` into a live navlogd, then `navlog storyboard coverage` and the replay
/// commands over what it stored.
@Suite("navlog simulate and storyboard coverage end to end")
struct SimulateCoverageEndToEndTests {
    static let storyboard = TestEnvironment.packageRoot.appendingPathComponent("tools/demo-storyboards/Cookbook.storyboard").path

    @Test("simulated sessions sent to navlogd are all stored, replay with no anomaly, and cover every scene and segue of the demo storyboard")
    func simulateToDaemonThenCoverage() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let simulate = try ProcessRunner.navlog([
                "simulate", "--storyboard", Self.storyboard, "--sessions", "150", "--idiom", "pad", "--seed", "9", "--to", daemon.socket, "--connections", "3",
            ])
            #expect(simulate.status == 0, "\(simulate.errorOutput)")
            let events = Int(simulate.errorOutput.split(separator: " ").dropFirst(4).first ?? "") ?? -1
            #expect(simulate.errorOutput.contains("150 sessions"), "\(simulate.errorOutput)")
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", daemon.dataDirectory, "--format", "json"]).output.split(separator: "\n")
            #expect(sessions.count == 150)
            let counts = try sessions.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(counts.map { $0["events"] as! Int }.reduce(0, +) == events, "every simulated event is stored")
            #expect(counts.allSatisfy { $0["anomalies"] as? Int == 0 })
            let coverage = try ProcessRunner.navlog(["storyboard", "coverage", "--storyboard", Self.storyboard, "--data-dir", daemon.dataDirectory])
            #expect(coverage.status == 0, "\(coverage.errorOutput)")
            #expect(coverage.output.contains("scenes exercised: 17 of 17; segues: 21 of 21"), "\(coverage.output)")
            #expect(coverage.output.contains("Every recorded transition is a segue of the storyboards."))
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("--templates sends copies of simulated sessions under new ids at full speed: all stored, valid, no duplicates")
    func templatesLoad() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let load = try ProcessRunner.navlog([
                "simulate", "--storyboard", Self.storyboard, "--sessions", "300", "--templates", "25", "--seed", "4", "--to", daemon.socket, "--connections", "3",
            ])
            #expect(load.status == 0, "\(load.errorOutput)")
            let written = try #require(Int(load.errorOutput.split(separator: " ").first { Int($0) != nil && $0.count > 3 } ?? ""), "\(load.errorOutput)")
            // Nothing is acknowledged in this mode: wait for navlogd to have stored it all.
            var accepted = 0
            for _ in 0..<400 where accepted < written {
                let stats = try ProcessRunner.navlog(["stats", "--socket", daemon.socket])
                accepted = stats.output.split(separator: "\n").first { $0.hasPrefix("accepted") }.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                if accepted < written { usleep(50_000) }
            }
            #expect(accepted == written)
            #expect(daemon.terminate() == 0)
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", daemon.dataDirectory, "--format", "json"]).output.split(separator: "\n")
            #expect(sessions.count == 300)
            #expect(sessions.allSatisfy { $0.contains(#""anomalies":0"#) }, "copies are as valid as the sessions they copy")
        }
    }

    @Test("a recorded transition the storyboard does not allow is listed with an example, and unused scenes are marked")
    func unexpectedTransition() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = [
                #"{"type":"session.start","session":"odd","seq":1,"ts":1763715601000000,"app":"Cookbook","idiom":"phone","traits":{"h":"compact","v":"regular"}}"#,
                #"{"type":"nav.set","session":"odd","seq":2,"ts":1763715602000000,"nav":{"id":"n","class":"UINavigationController"},"vcs":[{"id":"l","class":"RecipeListViewController","sbid":"RecipeList"}]}"#,
                #"{"type":"window.root","session":"odd","seq":3,"ts":1763715603000000,"vc":"n"}"#,
                #"{"type":"nav.push","session":"odd","seq":4,"ts":1763715604000000,"nav":"n","vc":{"id":"d","class":"RecipeDetailViewController","sbid":"RecipeDetail"}}"#,
                #"{"type":"nav.push","session":"odd","seq":5,"ts":1763715605000000,"nav":"n","vc":{"id":"a","class":"AboutViewController"}}"#,
            ]
            let file = dir.appendingPathComponent("odd.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let data = dir.appendingPathComponent("data").path
            #expect(try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path]).status == 0)
            let coverage = try ProcessRunner.navlog(["storyboard", "coverage", "--storyboard", Self.storyboard, "--data-dir", data])
            #expect(coverage.output.contains("Recorded transitions the storyboards do not allow:"), "\(coverage.output)")
            let row = coverage.output.split(separator: "\n").first { $0.contains("AboutViewController") && $0.contains("nav.push") }
            #expect(row?.contains("RecipeDetailViewController (RecipeDetail)") == true && row?.contains("odd seq 5") == true, "\(coverage.output)")
            #expect(coverage.output.contains("✓  Cookbook    RecipeListViewController (RecipeList) → RecipeDetailViewController (RecipeDetail)"), "\(coverage.output)")
            #expect(coverage.output.contains("✗  Cookbook    SettingsViewController"), "\(coverage.output)")
            let json = try ProcessRunner.navlog(["storyboard", "coverage", "--storyboard", Self.storyboard, "--data-dir", data, "--format", "json"])
            #expect(
                json.output.contains(
                    #"{"record":"unexpected","from":"RecipeDetailViewController (RecipeDetail)","to":"AboutViewController","how":"nav.push","count":1,"session":"odd","seq":5}"#),
                "\(json.output)")
        }
    }
}
