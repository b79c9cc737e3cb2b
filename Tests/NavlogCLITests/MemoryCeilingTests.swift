import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// Memory follows the sessions live at once, not the size of the log (issue 14): `navlog index`
/// and the reading commands run under a memory ceiling (a memory cgroup through
/// tools/memory-ceiling.py, or their measured peak against it where no cgroup can be made), on
/// a log of 600 interleaved sessions; and the index build of a log twice as long takes no more.
@Suite("Memory ceiling")
struct MemoryCeilingTests {
    /// The ceiling for every command (the debug build's runtime and libraries take about 30 MB of it).
    static let ceilingMiB = 128

    struct Measured {
        var status: Int?
        var peakKiB: Int
        var enforcedBy: String
        var over: Bool
        var stderr: String
    }

    /// Runs navlog `arguments` under the ceiling.
    static func underCeiling(_ arguments: [String]) throws -> Measured {
        let script = TestEnvironment.packageRoot.appendingPathComponent("tools/memory-ceiling.py").path
        let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "\(ceilingMiB)", navlog] + arguments, timeout: 600)
        let line = try #require(result.output.split(separator: "\n").last, "memory-ceiling.py printed nothing: \(result.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return Measured(
            status: object["status"] as? Int, peakKiB: object["peak_rss_kib"] as? Int ?? 0, enforcedBy: object["enforced_by"] as? String ?? "",
            over: object["over"] as? Bool ?? true, stderr: object["stderr"] as? String ?? "")
    }

    @Test("index and every reading command stay under 128 MiB on 600 live sessions; twice the log, the same index memory")
    func ceiling() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            // Production's mix of recording styles (workload.md), 600 sessions live at once.
            var configuration = WorkloadConfiguration(seed: 614, concurrentSessions: 600, meanEventsPerSession: 60)
            configuration.recordingMix = WorkloadConfiguration.productionRecordingMix
            var generator = WorkloadGenerator(configuration)
            let first = dir.appendingPathComponent("first.jsonl"), second = dir.appendingPathComponent("second.jsonl")
            try Data(generator.lines(50_000).flatMap { $0 + [0x0A] }).write(to: first)
            try Data(generator.lines(50_000).flatMap { $0 + [0x0A] }).write(to: second)

            #expect(try ProcessRunner.navlog(["ingest", "--quiet", first.path, "--data-dir", data], timeout: 600).status == 0)
            let half = try Self.underCeiling(["index", "--data-dir", data])
            #expect(half.status == 0 && !half.over, "navlog index, 50k events: \(half)")
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", second.path, "--data-dir", data], timeout: 600).status == 0)
            try FileManager.default.removeItem(atPath: data + "/replay")
            let whole = try Self.underCeiling(["index", "--data-dir", data])
            #expect(whole.status == 0 && !whole.over, "navlog index, 100k events: \(whole)")
            // Twice the events, the same live sessions: the build holds live sessions' states
            // (and one block), so its peak must not grow with the log (8 MiB for allocator noise).
            #expect(whole.peakKiB <= half.peakKiB + 8 * 1024, "index peak \(half.peakKiB) KiB at 50k events, \(whole.peakKiB) KiB at 100k")

            let session = try #require(
                try ProcessRunner.navlog(["cat", "--data-dir", data, "--type", "session.end"]).output.split(separator: "\n").first.flatMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["session"] as? String
                })
            let commands: [[String]] = [
                ["query", "screens"], ["query", "sql", "SELECT type, count(*) FROM events GROUP BY 1"],
                ["query", "sql", "SELECT screen, count(*), sum(dwell) FROM screen_visits GROUP BY 1"], ["sessions"], ["anomalies"],
                ["replay", "--session", session, "--end"], ["timeline", "--session", session],
                ["export", "--to", dir.appendingPathComponent("out").path, "--format", "jsonl"],
            ]
            for command in commands {
                let measured = try Self.underCeiling(command + ["--data-dir", data])
                #expect(measured.status == 0 && !measured.over, "navlog \(command.joined(separator: " ")): \(measured)")
            }
            #expect(["cgroup-v1", "cgroup-v2", "peak-rss"].contains(half.enforcedBy))
        }
    }
}
