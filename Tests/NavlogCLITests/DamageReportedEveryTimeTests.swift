import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// Damage is said by every reading command every time it affects the answer (issue: "after
/// navlog replay reports damage and builds its index, sessions, query screens and anomalies
/// exit 0 silently with the damaged block's events missing"), and a damaged last block of a
/// log no writer has open is damage, not a write in progress ("cat exits 0 printing 3,285 of
/// 3,500 events with no warning").
@Suite("Damage is reported by every reading command, every time")
struct DamageReportedEveryTimeTests {
    /// A log of sealed segments with several blocks; one block's data frame gets 8 flipped bits
    /// (no repair can undo that; readers skip the block).
    static func damagedLog(_ dir: URL) throws -> String {
        let data = dir.appendingPathComponent("data").path
        var options = LogOptions()
        options.maximumEventsPerBlock = 300
        options.maximumSegmentBytes = 32 << 10
        let log = try EventLog(directory: data, options: options)
        var configuration = WorkloadConfiguration(seed: 45)
        configuration.concurrentSessions = 10
        var generator = WorkloadGenerator(configuration)
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in generator.lines(6_000).enumerated() {
            _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
        }
        _ = try log.append(batch)
        try log.close()
        let segment = try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.hasSuffix(".zst") }.sorted()[1]
        let url = URL(fileURLWithPath: data).appendingPathComponent(segment)
        var bytes = try [UInt8](Data(contentsOf: url))
        bytes[bytes.count / 3] ^= 0xFF
        try Data(bytes).write(to: url)
        return data
    }

    @Test("replay, then sessions, anomalies, timeline, query and export: each exits non-zero and names the damage, twice")
    func everyCommandEveryTime() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.damagedLog(dir)
            let session = try #require(
                try ProcessRunner.navlog(["cat", "--data-dir", data]).output.split(separator: "\n").first.flatMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["session"] as? String
                })
            let commands: [[String]] = [
                ["replay", "--session", session, "--end"], ["sessions"], ["anomalies"], ["timeline", "--session", session], ["query", "screens"],
                ["query", "transitions"], ["query", "sql", "SELECT count(*) FROM screen_visits"],
                ["query", "sql", "SELECT type, count(*) FROM events GROUP BY 1"], ["export", "--overwrite", "--to", dir.appendingPathComponent("out").path],
                ["index"],
            ]
            for round in 1...2 {
                for command in commands {
                    let result = try ProcessRunner.navlog(command + ["--data-dir", data])
                    #expect(result.status != 0, "round \(round), navlog \(command.joined(separator: " ")) exited 0 on a damaged log")
                    #expect(result.errorOutput.contains("skipped damaged data"), "round \(round), navlog \(command[0]): \(result.errorOutput)")
                }
            }
        }
    }

    @Test("a flipped bit in the header of the last block of a log no writer has open: cat reports it")
    func headerFlipWithoutWriter() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            var generator = WorkloadGenerator(WorkloadConfiguration(seed: 46))
            let file = dir.appendingPathComponent("e.jsonl")
            try Data(generator.lines(3_500).flatMap { $0 + [0x0A] }).write(to: file)
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", data, file.path]).status == 0)
            let segment = URL(fileURLWithPath: data).appendingPathComponent(
                try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.hasSuffix(".zst") }.sorted().last!)
            var bytes = try [UInt8](Data(contentsOf: segment))
            // The last block header: the last skippable block-header magic in the file.
            let magic: [UInt8] = [0x5B, 0x2A, 0x4D, 0x18]
            let last = try #require((0..<(bytes.count - 4)).last { Array(bytes[$0..<($0 + 4)]) == magic })
            bytes[last + 30] ^= 0x04
            try Data(bytes).write(to: segment)
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(cat.status != 0)
            #expect(cat.errorOutput.contains("not a write in progress"), "\(cat.errorOutput)")
            // A writer's recovery corrects the flip: every event is back.
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", data, "/dev/null"]).status == 0)
            let after = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(after.status == 0, "\(after.errorOutput)")
            #expect(after.output.split(separator: "\n").count == 3_500)
        }
    }
}
