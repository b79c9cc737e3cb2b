import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// Every reading command on a damaged log (flipped bytes in a segment, garbage and truncated
/// indexes, damaged replay checkpoints): it answers or reports the damage, never crashes or hangs.
@Suite("Every command on a damaged log")
struct DamagedLogCommandsTests {
    @Test("cat, verify, sessions, replay, timeline, anomalies, query, sql and export answer or report damage, within a time limit")
    func commandsSurviveDamage() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            var options = LogOptions()
            options.maximumEventsPerBlock = 300
            options.maximumSegmentBytes = 32 << 10
            let log = try EventLog(directory: data, options: options)
            var configuration = WorkloadConfiguration(seed: 44)
            configuration.concurrentSessions = 10
            var generator = WorkloadGenerator(configuration)
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in generator.lines(8_000).enumerated() {
                _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
                if batch.count == 250 {
                    _ = try log.append(batch)
                    batch.removeAll()
                }
            }
            _ = try log.append(batch)
            try log.close()
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", data, "--format", "json"])
            #expect(sessions.status == 0)
            let someSession = try #require(
                sessions.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .first { ($0["events"] as? Int ?? 0) > 30 }?["session"] as? String)

            // Damage: bytes flipped inside a sealed segment, indexes garbled or cut, replay checkpoints garbled or cut.
            let files = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
            let segments = files.filter { $0.hasSuffix(".zst") }
            let indexes = files.filter { $0.hasSuffix(".idx") }
            #expect(segments.count >= 4 && indexes.count >= 2)
            var state: UInt64 = 0x5EED
            func random(_ bound: Int) -> Int {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((state >> 33) % UInt64(max(bound, 1)))
            }
            func damage(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
                var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                change(&bytes)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            }
            try damage(data + "/" + segments[1]) { bytes in
                for _ in 0..<24 { bytes[random(bytes.count)] ^= UInt8(1 << random(8)) }
            }
            try damage(data + "/" + indexes[0]) { bytes in bytes = (0..<bytes.count).map { _ in UInt8(random(256)) } }
            try damage(data + "/" + indexes[1]) { bytes in bytes.removeLast(bytes.count / 2) }
            let replay = try FileManager.default.contentsOfDirectory(atPath: data + "/replay").filter { $0.hasSuffix(".nrx") }.sorted()
            #expect(replay.count >= 2)
            try damage(data + "/replay/" + replay[0]) { bytes in
                for _ in 0..<64 { bytes[random(bytes.count)] ^= 0xFF }
            }
            try damage(data + "/replay/" + replay[replay.count - 1]) { bytes in bytes.removeLast(bytes.count / 3) }

            let commands: [[String]] = [
                ["cat"], ["verify"], ["sessions"], ["replay", "--session", someSession, "--index", "20"], ["replay", "--session", someSession, "--format", "json"],
                ["timeline", "--session", someSession], ["anomalies"], ["index"], ["query", "screens"], ["query", "transitions"], ["query", "paths"],
                ["query", "funnel", "HomeFeedViewController", "ProductListViewController"], ["query", "exits"], ["query", "sessions"],
                ["query", "sql", "SELECT count(*) FROM screen_visits"], ["query", "sql", "SELECT count(*) FROM events"],
                ["export", "--to", dir.appendingPathComponent("out").path],
            ]
            for command in commands {
                let started = Date()
                let result = try ProcessRunner.navlog(command + ["--data-dir", data], timeout: 120)
                let seconds = Date().timeIntervalSince(started)
                #expect(result.status == 0 || result.status == 1, "navlog \(command.joined(separator: " ")) ended with \(result.status): \(result.errorOutput.suffix(2_000))")
                #expect(seconds < 100, "navlog \(command.joined(separator: " ")) took \(seconds) s")
                if result.status == 1 {
                    #expect(!(result.errorOutput + result.output).isEmpty, "navlog \(command.joined(separator: " ")) failed without saying why")
                }
            }
            let verify = try ProcessRunner.navlog(["verify", "--data-dir", data])
            #expect(
                verify.status == 1 && (verify.output.contains(segments[1]) || verify.errorOutput.contains(segments[1])),
                "verify names the damaged segment: \(verify.output) \(verify.errorOutput)")
        }
    }
}
