import Foundation
import NavlogTesting
import Testing

/// The short version of `tools/fidelity/run` (tools/bench/fidelity runs ~2M events): corpora
/// written the way each kind of recorder records UIKit (every callback, did-only, will+did,
/// appear-only, navigation calls only, a mix), labelled by their own generator, stored with the
/// built `navlog ingest` and judged by `navlog anomalies`, `query screens` and `query sql`.
@Suite("Fidelity on recording-profile corpora")
struct FidelityTests {
    @Test("no false alarm and no miss in any profile; screen views and the same navigation's views agree with the generator")
    func fidelity() throws {
        let python = URL(fileURLWithPath: "/usr/bin/env")
        let script = TestEnvironment.packageRoot.appendingPathComponent("tools/fidelity/run").path
        let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
        let result = try ProcessRunner.run(
            python, ["python3", script, "--sessions", "240", "--seed", "5", "--misuse-rate", "0.4", "--navlog", navlog], timeout: 600)
        #expect(result.status == 0, "\(result.output)\n\(result.errorOutput)")
        let summary = result.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary.contains(" 0 missed, 0 false alarms; 0 screens differ; 0 navigations differ by recorder"), "\(summary)")
        // Every profile's rows are there, with seeded misuses reported.
        for profile in ["full", "didOnly", "willDid", "appearOnly", "navOnly", "mix"] {
            #expect(result.output.contains("| \(profile) | "), "no row for \(profile)")
        }
        #expect(result.output.contains("| full | 40 (") && result.output.contains("| A11 |"), "\(result.output)")
    }
}
