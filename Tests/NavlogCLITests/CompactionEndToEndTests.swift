import Foundation
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
            let verify = try ProcessRunner.navlog(["verify", "--data-dir", data])
            #expect(verify.status == 0, "\(verify.output)\(verify.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: data + "/compaction"), "no unfinished copy left")
        }
    }
}
