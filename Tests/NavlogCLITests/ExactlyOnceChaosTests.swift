import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// Exactly once whatever the delivery (issue 18): sessions delivered as random permutations,
/// with duplicates, split over several connections at once, with navlogd killed (SIGKILL) and
/// restarted in between and everything sent again after each restart — the way clients resend
/// what they cannot know was stored. Each `(session, seq)` must be stored exactly once.
/// Then every replay and derived answer must equal that of the sorted, deduplicated input.
/// The long version is `tools/chaos order` (more rounds, events and replays, through the
/// environment variables below); this one runs in CI.
@Suite("Exactly once under permuted, duplicated, split delivery and kill -9")
struct ExactlyOnceChaosTests {
    @Test("three rounds of shuffled, duplicated sends over four connections with a crash in each: every event stored once")
    func permutationsAndCrashes() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let environment = ProcessInfo.processInfo.environment
            let rounds = environment["NAVLOG_CHAOS_ROUNDS"].flatMap(Int.init) ?? 3
            let replays = environment["NAVLOG_CHAOS_REPLAYS"].flatMap(Int.init) ?? 12
            var configuration = WorkloadConfiguration(seed: environment["NAVLOG_CHAOS_SEED"].flatMap(UInt64.init) ?? 404)
            configuration.concurrentSessions = environment["NAVLOG_CHAOS_SESSIONS"].flatMap(Int.init) ?? configuration.concurrentSessions
            var generator = WorkloadGenerator(configuration)
            let lines = generator.lines(environment["NAVLOG_CHAOS_EVENTS"].flatMap(Int.init) ?? 40_000).map { String(decoding: $0, as: UTF8.self) }
            let expected = Set(lines.compactMap(Self.key))
            #expect(expected.count == lines.count, "the workload's (session, seq) pairs are unique")
            var random = SystemRandomNumberGenerator()
            for round in 0..<rounds {
                let daemon = try DaemonProcess(directory: dir)
                // Every line, a fifth of them twice, shuffled, dealt to four connections.
                var deliveries = lines
                deliveries += lines.filter { _ in Int.random(in: 0..<5, using: &random) == 0 }
                deliveries.shuffle(using: &random)
                let clients = try (0..<4).map { _ in try SocketClient(path: daemon.socket) }
                for (number, client) in clients.enumerated() {
                    let mine = deliveries.enumerated().filter { $0.offset % 4 == number }.map(\.element)
                    try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + mine.joined(separator: "\n") + "\n")
                }
                if round < rounds - 1 {
                    // A crash while the batches are being written.
                    usleep(useconds_t(Int.random(in: 5_000...60_000, using: &random)))
                    daemon.crash()
                } else {
                    for (number, client) in clients.enumerated() {
                        let count = deliveries.enumerated().filter { $0.offset % 4 == number }.count
                        _ = client.readUntil(timeout: 60) { ($0["ack"] as? Int ?? 0) >= count + 1 }
                    }
                    #expect(daemon.terminate() == 0)
                }
                clients.forEach { $0.close() }
            }
            let stored = try DaemonEndToEndTests.storedEvents(dir.appendingPathComponent("data").path)
            let keys = stored.compactMap { event -> String? in
                guard let session = event["session"] as? String, let sequence = event["seq"] as? Int else { return nil }
                return "\(session)#\(sequence)"
            }
            #expect(keys.count == Set(keys).count, "no (session, seq) stored twice: \(keys.count - Set(keys).count) doubles")
            #expect(Set(keys) == expected, "every event stored: \(expected.subtracting(keys).count) missing")
            let verify = try ProcessRunner.navlog(["verify", "--data-dir", dir.appendingPathComponent("data").path])
            #expect(verify.status == 0, "\(verify.output)\(verify.errorOutput)")

            // Every replay and every derived answer equals that of the sorted, deduplicated input
            // (the generator's lines: each session's events once, in seq order), ingested in order.
            let input = dir.appendingPathComponent("sorted.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
            let sorted = dir.appendingPathComponent("sorted").path
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", sorted, input.path]).status == 0)
            let data = dir.appendingPathComponent("data").path
            for command in [
                ["sessions", "--format", "json"], ["anomalies", "--format", "json"], ["query", "screens", "--format", "json"],
                ["query", "transitions", "--format", "json"], ["query", "paths", "--format", "json"],
            ] {
                let chaos = try ProcessRunner.navlog(command + ["--data-dir", data])
                let inOrder = try ProcessRunner.navlog(command + ["--data-dir", sorted])
                #expect(chaos.status == 0 && inOrder.status == 0, "\(command): \(chaos.errorOutput) \(inOrder.errorOutput)")
                #expect(Self.withoutLSNs(chaos.output) == Self.withoutLSNs(inOrder.output), "navlog \(command.joined(separator: " ")) differs from the sorted input's")
            }
            var late = 0
            for session in Set(lines.compactMap { Self.key($0)?.split(separator: "#").first.map(String.init) }).sorted().prefix(replays) {
                let arguments = ["replay", "--session", session, "--end", "--format", "json", "--data-dir"]
                let chaos = try ProcessRunner.navlog(arguments + [data])
                let inOrder = try ProcessRunner.navlog(arguments + [sorted])
                #expect(Self.withoutLSNs(chaos.output) == Self.withoutLSNs(inOrder.output), "replay of \(session) differs from the sorted input's")
                if !chaos.output.contains("\"lateEvents\":0") { late += 1 }
            }
            #expect(late > 0, "the shuffled delivery stored events late")
        }
    }

    /// Output without LSNs and late-event counts (the two logs store the same events at
    /// different LSNs, and only the shuffled one has late events).
    static func withoutLSNs(_ text: String) -> String {
        text.replacingOccurrences(of: #""lsn":(\d+|null),?"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #""lateEvents":\d+,"#, with: "", options: .regularExpression)
    }

    /// `session#seq` of an event line.
    static func key(_ line: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let session = object["session"] as? String,
            let sequence = object["seq"] as? Int
        else { return nil }
        return "\(session)#\(sequence)"
    }
}
