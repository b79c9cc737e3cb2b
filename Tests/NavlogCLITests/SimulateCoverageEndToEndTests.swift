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
