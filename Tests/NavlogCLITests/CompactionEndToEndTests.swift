import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// navlogd compacts the small blocks durable clients make (issue 14), killed with SIGKILL at
/// random instants in the middle of it all: every acknowledged event stays, exactly once.
@Suite("navlogd compacts durable segments in the background")
struct CompactionEndToEndTests {
    @Test("durable clients, kill -9 at random instants and restarts: every event stored once, every sealed segment compacted")
    func durableClientsWithCrashes() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = dir.appendingPathComponent("navlogd.json")
            // Small segments so that many are sealed (and compacted) while the clients send.
            try #"{"segmentBytes": 16384, "compactionIntervalSeconds": 0.1}"#.write(to: config, atomically: true, encoding: .utf8)
            var generator = WorkloadGenerator(WorkloadConfiguration(seed: 77))
            let lines = generator.lines(5000).map { String(decoding: $0, as: UTF8.self) }
            let expected = Set(lines.compactMap(ExactlyOnceChaosTests.key))
            var random = SystemRandomNumberGenerator()
            var next = 0  // the first line not acknowledged as durable
            var crashes = 0
            var compactedLines = 0
            while next < lines.count {
                let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
                let client = try SocketClient(path: daemon.socket)
                try client.send(#"{"hello":1,"ack":"durable"}"# + "\n")
                var sent = 0
                // A crash after a random number of acknowledged groups, in the first rounds.
                let crashAfter = crashes < 5 ? Int.random(in: 20...150, using: &random) : Int.max
                var groups = 0
                var crashed = false
                while next < lines.count {
                    // A few lines at a time, each group waited for: a block (and an fsync) each.
                    let end = min(lines.count, next + Int.random(in: 1...6, using: &random))
                    try client.send(lines[next..<end].joined(separator: "\n") + "\n")
                    sent += end - next
                    groups += 1
                    if groups == crashAfter {
                        // Killed with the group in flight: it may or may not be stored; it is sent again.
                        usleep(useconds_t(Int.random(in: 0...3000, using: &random)))
                        daemon.crash()
                        crashed = true
                        crashes += 1
                        break
                    }
                    let replies = client.readUntil(timeout: 30) { ($0["ack"] as? Int ?? 0) >= sent + 1 }
                    try #require((replies.last?["ack"] as? Int ?? 0) >= sent + 1, "no durable ack: \(daemon.log)")
                    next = end
                }
                client.close()
                if !crashed {
                    // Let the compactor catch up with the last sealed segments, then stop.
                    let deadline = Date().addingTimeInterval(30)
                    while Date() < deadline, !SegmentCompaction.candidates(try LogReader(directory: daemon.dataDirectory), options: LogOptions()).isEmpty {
                        usleep(100_000)
                    }
                    #expect(daemon.terminate() == 0, "\(daemon.log)")
                    compactedLines = daemon.log.components(separatedBy: "Compacted ").count - 1
                }
            }
            #expect(crashes == 5)
            let data = dir.appendingPathComponent("data").path
            let stored = try DaemonEndToEndTests.storedEvents(data)
            let keys = stored.compactMap { event -> String? in
                guard let session = event["session"] as? String, let sequence = event["seq"] as? Int else { return nil }
                return "\(session)#\(sequence)"
            }
            #expect(keys.count == Set(keys).count, "no event stored twice: \(keys.count - Set(keys).count) doubles")
            #expect(Set(keys) == expected, "every event stored: \(expected.subtracting(keys).count) missing")
            let reader = try LogReader(directory: data)
            let sealed = reader.segments.filter(\.sealed)
            #expect(sealed.count >= 5, "\(sealed.count) sealed segments")
            #expect(SegmentCompaction.candidates(reader, options: LogOptions()).isEmpty, "every sealed segment compacted")
            #expect(compactedLines > 0, "the last navlogd said what it compacted")
            #expect(sealed.allSatisfy { $0.blocks.count <= 2 }, "\(sealed.map(\.blocks.count)) blocks per sealed segment")
            #expect(sealed.allSatisfy { $0.compressionLevel == 19 }, "written again at the sealed level: \(sealed.map(\.compressionLevel))")
            let verify = try ProcessRunner.navlog(["verify", "--data-dir", data])
            #expect(verify.status == 0, "\(verify.output)\(verify.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: data + "/compaction"), "no unfinished copy left")
        }
    }

    @Test("navlog compact writes sealed segments again at the sealed level, changes no event, says what it did, and refuses while a writer holds the log")
    func compactCommand() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            // A log as a writer at level 3 leaves it, sealed in small segments.
            var options = LogOptions()
            options.maximumSegmentBytes = 32 << 10
            options.compressionLevel = 3
            let log = try EventLog(directory: data, options: options)
            var generator = WorkloadGenerator(WorkloadConfiguration(seed: 12))
            let lines = generator.lines(6000)
            for start in stride(from: 0, to: lines.count, by: 600) {
                var batch = EventBatch()
                var parser = EventLineParser()
                for line in lines[start..<(start + 600)] {
                    _ = try parser.parse(String(decoding: line, as: UTF8.self), receivedAt: 1_763_720_000_000_000 + Int64(start), into: &batch)
                }
                _ = try log.append(batch)
                _ = try log.flush()
            }
            let before = try ProcessRunner.navlog(["cat", "--data-dir", data])
            // The writer still holds the lock: the command must not touch the log.
            let refused = try ProcessRunner.navlog(["compact", "--data-dir", data])
            #expect(refused.status != 0)
            #expect(refused.errorOutput.contains("navlog compact:"), "\(refused.errorOutput)")
            try log.close()
            let sealed = try LogReader(directory: data).segments.filter(\.sealed)
            #expect(sealed.count >= 3 && sealed.allSatisfy { $0.compressionLevel == 3 })
            let compacted = try ProcessRunner.navlog(["compact", "--data-dir", data])
            #expect(compacted.status == 0, "\(compacted.errorOutput)")
            #expect(compacted.output.contains("Compacted \(sealed.count) of \(sealed.count) segments"), "\(compacted.output)")
            for segment in sealed { #expect(compacted.output.contains(segment.name + ": "), "\(compacted.output)") }
            #expect(try LogReader(directory: data).segments.filter(\.sealed).allSatisfy { $0.compressionLevel == 19 })
            let after = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(after.output == before.output, "every event as it was")
            let again = try ProcessRunner.navlog(["compact", "--data-dir", data])
            #expect(again.status == 0 && again.output.hasPrefix("Nothing to compact"), "\(again.output)")
            let badLevel = try ProcessRunner.navlog(["compact", "--data-dir", data, "--level", "30"])
            #expect(badLevel.status != 0 && badLevel.errorOutput.contains("use 1 to 22"), "\(badLevel.errorOutput)")
            let verify = try ProcessRunner.navlog(["verify", "--data-dir", data])
            #expect(verify.status == 0, "\(verify.output)")
        }
    }

    @Test("a zstd level out of range in navlogd's configuration is refused at start, naming the setting and what to use")
    func levelOutOfRange() throws {
        for (setting, value, advice) in [("sealedCompressionLevel", 23, "or 0 to keep sealed segments as written"), ("compressionLevel", 0, "zstd levels go from 1 to 22")] {
            try TestEnvironment.withTemporaryDirectory { dir in
                let config = try DaemonEndToEndTests.write(Array("{\"\(setting)\": \(value)}".utf8), to: dir.appendingPathComponent("c.json"))
                let result = try ProcessRunner.run(
                    TestEnvironment.binaries.appendingPathComponent("navlogd"),
                    ["--config", config.path, "--socket", dir.appendingPathComponent("s.sock").path, "--data-dir", dir.appendingPathComponent("d").path], timeout: 30)
                #expect(result.status != 0)
                #expect(result.errorOutput.contains("\(setting) is \(value)") && result.errorOutput.contains(advice), "\(result.errorOutput)")
            }
        }
    }
}
