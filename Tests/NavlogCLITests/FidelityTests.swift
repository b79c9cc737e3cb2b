import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// The short version of `tools/fidelity/run` (tools/bench/fidelity runs ~2M events): corpora
/// written the way each kind of recorder records UIKit (every callback, did-only, will+did,
/// appear-only, navigation calls only, a mix), labelled by their own generator, stored with the
/// built `navlog ingest` and judged by `navlog anomalies`, `query screens` and `query sql`.
@Suite("Fidelity on recording-profile corpora")
struct FidelityTests {
    @Test(
        "no false alarm and no miss in any profile; screen views, each session's views and transitions in order, and the same navigation's views agree with the generator"
    )
    func fidelity() throws {
        let python = URL(fileURLWithPath: "/usr/bin/env")
        let script = TestEnvironment.packageRoot.appendingPathComponent("tools/fidelity/run").path
        let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
        let result = try ProcessRunner.run(
            python, ["python3", script, "--sessions", "240", "--seed", "5", "--misuse-rate", "0.4", "--navlog", navlog], timeout: 600)
        #expect(result.status == 0, "\(result.output)\n\(result.errorOutput)")
        let summary = result.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            summary.contains(" 0 missed, 0 false alarms; 0 screens differ; 0 sessions' paths differ; 0 navigations differ by recorder; 0 rollbacks of completed gestures unmarked"),
            "\(summary)")
        // Every profile's rows are there, with seeded misuses reported.
        for profile in ["full", "didOnly", "willDid", "appearOnly", "navOnly", "mix"] {
            #expect(result.output.contains("| \(profile) | "), "no row for \(profile)")
        }
        #expect(result.output.contains("| full | 40 (") && result.output.contains("| A11 |"), "\(result.output)")
    }

    @Test("the production workload, its sessions recorded in a mix of styles and interleaved, raises no anomaly")
    func mixedWorkloadNoFalseAlarm() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // The generator makes no misuse: any anomaly is a false alarm. 60 live sessions, so
            // that many of them end and are replaced within 40k events.
            var configuration = WorkloadConfiguration.production(seed: 88)
            configuration.concurrentSessions = 60
            var generator = WorkloadGenerator(configuration)
            let file = dir.appendingPathComponent("mixed.jsonl")
            try Data(generator.lines(40_000).flatMap { $0 + [0x0A] }).write(to: file)
            let data = dir.appendingPathComponent("data").path
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", file.path, "--data-dir", data]).status == 0)
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "csv"])
            #expect(sessions.output.split(separator: "\n").count > 150, "sessions: \(sessions.output.prefix(200))")
            let anomalies = try ProcessRunner.navlog(["anomalies", "--data-dir", data, "--format", "json"])
            #expect(anomalies.status == 0, "\(anomalies.errorOutput)")
            #expect(anomalies.output.isEmpty, "false alarms on a mixed-style workload:\n\(anomalies.output.prefix(2_000))")
        }
    }
}
