import Foundation
import NavlogTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// issue 7's "Load" item, short enough for CI: `navlog-bench chaos-load` (idle, trickling,
/// never-reading, bad-input and churning connections) against a real navlogd while good clients
/// stream durable events; `tools/chaos load` is the long version.
@Suite("navlogd under chaos load", .serialized)
struct ChaosLoadTests {
    /// The good clients' sessions and the seqs sent in each, from `--good-events`.
    static func goodSessions(_ file: URL) throws -> [String: [Int]] {
        var sessions: [String: [Int]] = [:]
        for line in TestEnvironment.lines(of: try Data(contentsOf: file)) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            sessions[try #require(object["session"] as? String)] = try #require(object["seqs"] as? [Int])
        }
        return sessions
    }

    /// Whether navlogd died at swift-nio's `assert(lifecycleManager.isRegisteredFully)` in
    /// `unregisterForReadable()` (NIOPosix/BaseSocketChannel.swift:888). A churning client's
    /// reset, read as an EOF on a half-closable channel, reaches it about once in 110 runs of
    /// this test against a debug navlogd (docs/BENCHMARKS.md, "A swift-nio debug assertion"); `assert` is
    /// compiled out of release builds, so an installed navlogd goes on. Only this exact
    /// assertion is forgiven: any other way of dying fails the test.
    static func hitNIODebugAssertion(_ daemon: DaemonProcess) -> Bool {
        guard daemon.waitForExit(timeout: 0) != nil else { return false }
        let log = daemon.log
        return log.contains("BaseSocketChannel.swift:888") && log.contains("Assertion failed")
    }

    /// Runs `navlog-bench chaos-load` against `daemon` with `arguments` (after its socket).
    static func runChaosLoad(_ daemon: DaemonProcess, _ arguments: [String]) throws -> ProcessResult {
        let bench = TestEnvironment.binaries.appendingPathComponent("navlog-bench")
        try #require(
            FileManager.default.isExecutableFile(atPath: bench.path), "navlog-bench is not built in \(TestEnvironment.binaries.path) (swift build --build-tests builds it)")
        return try ProcessRunner.run(bench, ["chaos-load", "--socket", daemon.socket] + arguments, timeout: 60)
    }

    /// The JSON line a chaos-load run printed last, once it exited 0.
    static func report(of run: ProcessResult, _ daemon: DaemonProcess) throws -> [String: Any] {
        #expect(run.status == 0, "chaos-load failed: \(run.output)\(run.errorOutput)\nnavlogd: \(daemon.logForReport)")
        let line = run.output.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "no JSON line from chaos-load: \(run.output)\(run.errorOutput)")
    }

    @Test("300 misbehaving connections for 5 s: good clients keep being served, every good event stored once in order, bad input counted")
    func chaosLoad() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let goodEvents = dir.appendingPathComponent("good.jsonl")
            // --max-wait is generous: a debug navlogd on a shared 2-core CI machine is slow, and
            // the test is about being served at all, not about latency.
            let run = try Self.runChaosLoad(
                daemon,
                [
                    "--connections", "300", "--seconds", "5", "--good", "4", "--good-rate", "300", "--max-wait", "10",
                    "--seed", "\(UInt64(Date().timeIntervalSince1970 * 1000) & 0xFFFF_FFFF)", "--data-dir", daemon.dataDirectory, "--good-events", goodEvents.path,
                ])
            if Self.hitNIODebugAssertion(daemon) {
                withKnownIssue("swift-nio's debug-build assertion in unregisterForReadable (BaseSocketChannel.swift:888)", isIntermittent: true) {
                    Issue.record("navlogd (a debug build) stopped at swift-nio's assertion: \(daemon.logForReport)")
                }
                return
            }
            let report = try Self.report(of: run, daemon)
            #expect(report["goodServed"] as? Bool == true, "good clients not served: \(report["goodProblems"] ?? "?")")
            #expect(report["connections"] as? Int ?? 0 >= 300, "fewer connections than asked for: \(report["connections"] ?? "?")")
            #expect(report["errorsSeen"] as? Int ?? 0 > 0, "the bad-input clients saw no rejection reports")
            let sent = report["goodEventsSent"] as? Int ?? 0
            #expect(sent > 0 && report["goodEventsAcked"] as? Int == sent, "good events sent \(sent), acked \(report["goodEventsAcked"] ?? "?")")

            // The log, checked here rather than trusting the tool's own check.
            let sessions = try Self.goodSessions(goodEvents)
            #expect(sessions.values.reduce(0) { $0 + $1.count } == sent)
            var stored: [String: [Int]] = [:]
            for event in try DaemonEndToEndTests.storedEvents(daemon.dataDirectory) {
                guard let session = event["session"] as? String, sessions[session] != nil, let seq = event["seq"] as? Int else { continue }
                stored[session, default: []].append(seq)
            }
            for (session, seqs) in sessions {
                // Equal lists: each good event once, in the order sent (seq 1, 2, 3, … of the session).
                #expect(stored[session] ?? [] == seqs, "session \(session): sent seqs \(seqs.prefix(20))…, stored \((stored[session] ?? []).prefix(20))…")
            }
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)
            let counters = try daemon.stats()
            let rejected = counters["rejected"] as? [String: Int] ?? [:]
            #expect(rejected.values.reduce(0, +) > 0, "navlogd counted no rejections: \(counters)")
            for code in ["json", "utf8", "too-long", "unknown-type"] {
                #expect(rejected[code] ?? 0 > 0, "no \(code) rejections counted: \(rejected)")
            }
            #expect(daemon.terminate() == 0, "SIGTERM after the chaos stops navlogd cleanly: \(daemon.logForReport)")
        }
    }

    @Test(
        "issue 34's fairness loads (tools/bench/fairness): bursting, streaming and never-reading durable connections each have their events stored, the bursts all at once, beside a served good client"
    )
    func fairnessLoads() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let mix = "idle=0,slowBytes=0,slowLines=0,neverRead=0,controlFlood=0,badInput=0,churn=0,burst=1,stream=1,silentStream=1"
            let run = try Self.runChaosLoad(daemon, ["--connections", "60", "--seconds", "2.5", "--good", "1", "--good-rate", "200", "--max-wait", "10", "--mix", mix])
            let report = try Self.report(of: run, daemon)
            #expect(report["goodServed"] as? Bool == true, "good client not served: \(report["goodProblems"] ?? "?")")
            let behaviours = try #require(report["behaviours"] as? [String: [String: Any]])
            func count(_ behaviour: String, _ key: String) -> Int { behaviours[behaviour]?[key] as? Int ?? -1 }
            for behaviour in ["burst", "stream", "silentStream"] {
                #expect(count(behaviour, "connections") == 20, "\(behaviour): \(behaviours[behaviour] ?? [:])")
                #expect(count(behaviour, "closedByDaemon") == 0 && count(behaviour, "rejections") == 0, "\(behaviour): \(behaviours[behaviour] ?? [:])")
            }
            // Whole bursts of 300 events (and a hello per connection), at least one each.
            let burstLines = count("burst", "linesSent")
            #expect(burstLines >= 20 * 301 && (burstLines - 20) % 300 == 0, "burst lines sent: \(burstLines)")
            #expect(count("burst", "acks") > 0 && count("stream", "acks") > 0, "burst and stream connections read their acks")
            #expect(count("silentStream", "acks") == 0, "silentStream never reads")
            #expect(count("stream", "linesSent") > 20 * 64 && count("silentStream", "linesSent") > 20 * 64)
            // Every line of theirs but the hello is an event. navlogd stores each one the burst
            // and stream connections wrote whole, and never more than everyone wrote (a
            // silentStream connection closed on its unread acks may leave lines unread).
            let events = { (behaviour: String) in count(behaviour, "linesSent") - 20 }
            let good = report["goodEventsSent"] as? Int ?? 0
            let lower = events("burst") + events("stream") + good
            let upper = lower + events("silentStream")
            var accepted = 0
            for _ in 0..<200 {
                accepted = try daemon.stats()["accepted"] as? Int ?? 0
                if accepted >= lower { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(accepted >= lower && accepted <= upper, "navlogd stored \(accepted) events; burst, stream and good clients wrote \(lower), with silentStream \(upper)")
            #expect(daemon.terminate() == 0, "SIGTERM stops navlogd cleanly: \(daemon.logForReport)")
        }
    }

    /// navlogd used to abort here ("Simultaneous accesses … modification requires exclusive
    /// access"): a rejection report flushed while the line framer was still running hit a
    /// closed socket, NIO drained the socket and delivered the rest of the data re-entrantly
    /// into the same framer.
    @Test("a client that sends bad lines and disconnects at once does not bring navlogd down")
    func badLinesThenDisconnect() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            for round in 0..<3 {
                for count in [10, 100, 1_000, 5_000, 20_000] {
                    let client = try SocketClient(path: daemon.socket)
                    // Past identification, so the lines are handled as they are read.
                    usleep(30_000)
                    try client.send(#"{"hello":1,"ack":"batch"}"# + "\n" + String(repeating: "x\n", count: count))
                    client.close()
                    #expect(daemon.waitForExit(timeout: 0) == nil, "navlogd exited after \(count) bad lines (round \(round)): \(daemon.logForReport)")
                }
            }
            usleep(300_000)
            let stats = try ProcessRunner.navlog(["stats", "--socket", daemon.socket, "--format", "json"])
            #expect(stats.status == 0, "navlogd no longer answers: \(stats.errorOutput)\n\(daemon.logForReport)")
            #expect(daemon.terminate() == 0, "\(daemon.logForReport)")
        }
    }
}
