import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// navlogd end to end: the built binaries on a temporary socket, real clients.
@Suite("navlogd end to end", .serialized)
struct DaemonEndToEndTests {
    static func workload(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: seed))
        return generator.ndjson(events: count)
    }

    static func write(_ bytes: [UInt8], to url: URL) throws -> URL {
        try Data(bytes).write(to: url)
        return url
    }

    static func storedEvents(_ data: String) throws -> [[String: Any]] {
        let cat = try ProcessRunner.navlog(["cat", "--data-dir", data])
        return try cat.output.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }

    /// Every event once, and each session's seqs in increasing LSN order.
    static func checkOrder(_ events: [[String: Any]]) {
        var last: [String: Int] = [:]
        var seen = Set<String>()
        for event in events {
            let session = event["session"] as! String
            guard let seq = event["seq"] as? Int else { continue }
            #expect(seen.insert("\(session)#\(seq)").inserted, "\(session) seq \(seq) stored twice")
            #expect(seq > last[session, default: -1], "\(session): seq \(seq) after \(last[session, default: -1])")
            last[session] = seq
        }
    }

    /// With a writer queue budget of 0 and one pending batch allowed, a connection pauses after
    /// every batch it hands over and is read again only when that batch completes; with the
    /// defaults it reads on. Either way a pause must end (a lost wake-up would hang the sends)
    /// and nothing may be lost.
    @Test("many concurrent clients: every event stored once, per-session order kept", arguments: [0, 1 << 20])
    func concurrentClients(writerQueueBytes: Int) async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let settings =
                writerQueueBytes == 0
                ? #"{"writerQueueBytes": 0, "maximumPendingBatchesPerConnection": 1}"# : #"{"writerQueueBytes": \#(writerQueueBytes)}"#
            let config = try Self.write(Array(settings.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let files = try (0..<12).map { try Self.write(Self.workload(800, seed: UInt64(1000 + $0)), to: dir.appendingPathComponent("c\($0).jsonl")) }
            let results = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
                for (index, file) in files.enumerated() {
                    group.addTask {
                        try ProcessRunner.navlog(["send", "--socket", daemon.socket, "--ack", ["durable", "batch"][index % 2], file.path])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results { #expect(result.status == 0, "\(result.errorOutput)") }
            let counters = try daemon.stats()
            if writerQueueBytes == 0 {
                #expect(counters["readPausesWriterBehind"] as? Int ?? 0 > 0, "each connection paused behind its batch, and it was counted")
            }
            #expect(daemon.terminate() == 0, "SIGTERM stops navlogd cleanly: \(daemon.log)")
            let events = try Self.storedEvents(daemon.dataDirectory)
            #expect(events.count == 12 * 800)
            Self.checkOrder(events)
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)
        }
    }

    @Test("bad, oversize and partial lines are rejected one by one and the connection stays usable")
    func badLinesKeepTheConnection() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(
                directory: dir, arguments: ["--config", try Self.write(Array(#"{"maximumLineBytes": 4096}"#.utf8), to: dir.appendingPathComponent("c.json")).path])
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"client":"test","ack":"batch"}"# + "\n")
            try client.send(#"{"type":"app.foreground","session":"s","seq":1}"# + "\n")
            try client.send(#"{"type":"nav.push","session":"s","seq":2,"nav":"n"}"# + "\n")
            try client.send("{not json\n")
            try client.send(#"{"type":"mark","session":"s","name":""# + String(repeating: "x", count: 5000) + "\"}\n")
            try client.send(#"{"type":"app.background","session":"s","seq":3}"# + "\n")
            let replies = client.readUntil { ($0["ack"] as? Int ?? 0) >= 6 }
            let rejections = replies.filter { $0["error"] as? String == "rejected" }
            #expect(rejections.map { $0["line"] as? Int } == [3, 4, 5])
            #expect(rejections.map { $0["code"] as? String } == ["missing", "json", "too-long"])
            #expect(rejections.first?["field"] as? String == "vc")
            let acks = replies.filter { $0["ack"] != nil }
            #expect(acks.reduce(0) { $0 + ($1["stored"] as? Int ?? 0) } == 2)
            #expect(acks.last?["ack"] as? Int == 6)
            client.close()
            #expect(daemon.terminate() == 0)
            #expect(try Self.storedEvents(daemon.dataDirectory).map { $0["seq"] as? Int } == [1, 3])
        }
    }

    @Test("a client that never reads its replies does not stall the daemon or other clients")
    func neverReadingClient() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let flooder = try SocketClient(path: daemon.socket)
            try flooder.send(#"{"hello":1,"ack":"batch"}"# + "\n")
            // Bad lines make the daemon reply to each; this client never reads a byte.
            let flood = Array(String(repeating: "{bad json line to provoke a reply}\n", count: 20_000).utf8)
            let sender = Thread { try? flooder.send(flood) }
            sender.start()
            let file = try Self.write(Self.workload(2000, seed: 77), to: dir.appendingPathComponent("w.jsonl"))
            let started = Date()
            let send = try ProcessRunner.navlog(["send", "--socket", daemon.socket, file.path], timeout: 60)
            #expect(send.status == 0, "\(send.errorOutput)")
            #expect(send.output.contains("2000 events stored"))
            #expect(Date().timeIntervalSince(started) < 30)
            let counters = try daemon.stats()
            #expect(counters["accepted"] as? Int == 2000)
            #expect(counters["segments"] as? Int == 1)
            #expect((counters["bytesOnDisk"] as? Int ?? 0) > 1000)
            #expect(counters["lagEvents"] as? Int == 0, "durable sends leave nothing unwritten")
            #expect((counters["rejected"] as? [String: Int])?["json"] ?? 0 > 0)
            flooder.close()
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("a disconnect in the middle of a line stores the complete lines only")
    func disconnectMidLine() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"type":"app.foreground","session":"s","seq":1}"# + "\n" + #"{"type":"app.background","session":"s","se"#)
            usleep(200_000)
            client.close()
            usleep(200_000)
            #expect(daemon.terminate() == 0)
            #expect(try Self.storedEvents(daemon.dataDirectory).map { $0["type"] as? String } == ["app.foreground"])
        }
    }

    @Test("a client that shuts down its sending side still gets the ack of everything it sent, then navlogd closes")
    func halfClose() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let client = try SocketClient(path: daemon.socket)
            let events = (1...2000).map { #"{"type":"mark","session":"h","seq":\#($0),"name":"n"}"# }
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + events.joined(separator: "\n") + "\n" + "{not json\n" + #"{"type":"mark","session":"h""#)
            client.shutdownSending()
            var replies: [String] = []
            while let line = client.readLine(timeout: 20) { replies.append(line) }
            #expect(replies.contains { $0.contains(#""ack":2002"#) }, "every line up to the last complete one is acknowledged: \(replies.suffix(3))")
            #expect(replies.contains { $0.contains(#""error":"rejected","line":2002"#) })
            #expect(client.readLine(timeout: 1) == nil, "then navlogd closes the connection")
            client.close()
            #expect(daemon.terminate() == 0)
            #expect(try Self.storedEvents(daemon.dataDirectory).count == 2000, "the unterminated last line is not an event")
        }
    }

    @Test("a peer whose uid and gid are not allowed gets one clear error line and is closed")
    func refusedPeer() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.write(Array(#"{"allowedUIDs": [4242424], "allowedGIDs": [4242424], "socketMode": "0620"}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            // The socket file gets the configured mode.
            let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socket)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o620)
            let client = try SocketClient(path: daemon.socket)
            let reply = try #require(client.readLine())
            #expect(reply.contains(#""error":"refused""#))
            #expect(reply.contains("uid \(getuid())"))
            #expect(client.readLine(timeout: 5) == nil, "the connection is closed after the refusal")
            client.close()
            #expect(daemon.terminate() == 0)
            #expect(daemon.log.contains("Refused a connection from uid \(getuid())"))
        }
    }

    @Test(
        "allowedGIDs admits a peer in the group as a supplementary group only, and refuses it without the group",
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func supplementaryGroup() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // The peer runs as nobody (uid and primary gid 65534) so only the supplementary group can admit it.
            _ = chmod(dir.path, 0o755)
            let config = try Self.write(Array(#"{"allowedGIDs": [4242], "socketMode": "0666"}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let events = try Self.write(Array(#"{"type":"app.foreground","session":"g","seq":1}"#.utf8 + [0x0A]), to: dir.appendingPathComponent("e.jsonl"))
            _ = chmod(events.path, 0o644)
            let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
            func send(_ groups: [String]) throws -> ProcessResult {
                try ProcessRunner.run(
                    URL(fileURLWithPath: "/usr/bin/setpriv"),
                    ["--reuid=65534", "--regid=65534"] + groups + [navlog, "send", "--socket", daemon.socket, "--timeout", "10", events.path])
            }
            let member = try send(["--groups=4242"])
            #expect(member.status == 0, "\(member.errorOutput)")
            let outsider = try send(["--clear-groups"])
            #expect(outsider.status != 0)
            #expect(outsider.errorOutput.contains("may not write to this navlogd"), "the refusal's reason reaches the user: \(outsider.errorOutput)")
            #expect(daemon.terminate() == 0)
            let stored = try Self.storedEvents(daemon.dataDirectory)
            #expect(stored.count == 1)
            #expect(stored.first?["_uid"] as? Int == 65534)
        }
    }

    @Test("one session's events over four connections at once, shuffled and partly resent: each stored once; missing, then lost at session.end")
    func reorderedDelivery() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            // Seq 1…4000 of session r, except 1000 and 1001 (never sent); every line sent once
            // by one of four clients in a random order, and a fifth of them a second time by another.
            var lines: [(Int, String)] = []
            var random = SystemRandomNumberGenerator()
            for sequence in 1...4000 where sequence != 1000 && sequence != 1001 {
                let line = #"{"type":"mark","session":"r","seq":\#(sequence),"ts":\#(1_763_715_600_000_000 + Int64(sequence) * 1000),"name":"n"}"#
                lines.append((Int.random(in: 0..<4, using: &random), line))
                if Int.random(in: 0..<5, using: &random) == 0 { lines.append((Int.random(in: 0..<4, using: &random), line)) }
            }
            lines.shuffle(using: &random)
            let clients = try (0..<4).map { _ in try SocketClient(path: daemon.socket) }
            for (number, client) in clients.enumerated() {
                let mine = lines.filter { $0.0 == number }.map(\.1)
                try client.send(#"{"hello":1,"ack":"batch"}"# + "\n" + mine.joined(separator: "\n") + "\n")
            }
            for (number, client) in clients.enumerated() {
                let count = lines.filter { $0.0 == number }.count
                _ = client.readUntil(timeout: 30) { ($0["ack"] as? Int ?? 0) >= count + 1 }
                client.close()
            }
            let during = try daemon.stats()
            #expect(during["missing"] as? Int == 2, "1000 and 1001 are missing now: \(during)")
            #expect(during["lost"] as? Int == 0, "nothing is given up while the session may still send them")
            // The session ends: what it misses is given up as lost.
            let last = try SocketClient(path: daemon.socket)
            try last.send(#"{"hello":1,"ack":"batch"}"# + "\n" + #"{"type":"session.end","session":"r","seq":4001}"# + "\n")
            _ = last.readUntil { $0["ack"] != nil }
            last.close()
            let after = try daemon.stats()
            #expect(after["missing"] as? Int == 0 && after["lost"] as? Int == 2, "\(after)")
            #expect(daemon.terminate() == 0)
            let stored = try Self.storedEvents(daemon.dataDirectory).compactMap { $0["seq"] as? Int }
            #expect(stored.count == 3999, "each event stored exactly once")
            #expect(Set(stored).count == stored.count)
            #expect(Set(stored) == Set((1...4001).filter { $0 != 1000 && $0 != 1001 }))
        }
    }

    @Test("holes of a session that sends nothing more are given up as lost after lossGraceSeconds, with no other traffic")
    func lossGraceWhileIdle() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = dir.appendingPathComponent("navlogd.json")
            try #"{"lossGraceSeconds": 1}"#.write(to: config, atomically: true, encoding: .utf8)
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let client = try SocketClient(path: daemon.socket)
            // seq 1, 2 and 5: 3 and 4 are missing.
            let lines = [1, 2, 5].map { #"{"type":"mark","session":"g","seq":\#($0),"name":"n"}"# }
            try client.send(#"{"hello":1,"ack":"batch"}"# + "\n" + lines.joined(separator: "\n") + "\n")
            _ = client.readUntil { ($0["ack"] as? Int ?? 0) >= 4 }
            client.close()
            #expect(try daemon.stats()["missing"] as? Int == 2)
            // Nothing else is sent; the writer sweeps on its own.
            var stats: [String: Any] = [:]
            for _ in 0..<40 {
                usleep(100_000)
                stats = try daemon.stats()
                if stats["lost"] as? Int == 2 { break }
            }
            #expect(stats["lost"] as? Int == 2 && stats["missing"] as? Int == 0, "given up while idle: \(stats)")
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("trusted fields come from the kernel, not from the client")
    func trustedFields() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + #"{"type":"app.foreground","session":"s","seq":1,"_uid":0,"_pid":1,"_lsn":99}"# + "\n")
            _ = client.readUntil { $0["ack"] != nil }
            client.close()
            #expect(daemon.terminate() == 0)
            let event = try #require(try Self.storedEvents(daemon.dataDirectory).first)
            #expect(event["_uid"] as? Int == Int(getuid()))
            #expect(event["_pid"] as? Int == Int(getpid()), "the sending process is this test")
            #expect(event["_lsn"] as? Int == 1)
        }
    }

    @Test("the socket file is created with mode 0660 by default")
    func defaultSocketMode() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socket)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o660)
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("a resend after reconnecting, even to a restarted daemon, is dropped as duplicates")
    func duplicateResend() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let file = try Self.write(Self.workload(1500, seed: 5), to: dir.appendingPathComponent("w.jsonl"))
            var daemon = try DaemonProcess(directory: dir)
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, file.path]).output.contains("1500 events stored, 0 duplicates"))
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, file.path]).output.contains("0 events stored, 1500 duplicates"))
            #expect(daemon.terminate() == 0)
            daemon = try DaemonProcess(directory: dir)
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, file.path]).output.contains("0 events stored, 1500 duplicates"))
            #expect(daemon.terminate() == 0)
            #expect(try Self.storedEvents(daemon.dataDirectory).count == 1500)
        }
    }

    @Test("SIGTERM after acknowledged events: exit 0 and nothing lost")
    func sigtermDrains() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let file = try Self.write(Self.workload(5000, seed: 9), to: dir.appendingPathComponent("w.jsonl"))
            #expect(try ProcessRunner.navlog(["send", "--ack", "batch", "--socket", daemon.socket, file.path]).status == 0)
            let started = Date()
            #expect(daemon.terminate() == 0)
            #expect(Date().timeIntervalSince(started) < 10, "the stop is bounded")
            #expect(daemon.log.contains("Stopped cleanly"))
            #expect(try Self.storedEvents(daemon.dataDirectory).count == 5000)
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)
        }
    }

    /// Bounces of the crash test: 3 in CI, more from `tools/chaos` (NAVLOG_CHAOS_BOUNCES).
    static let bounces = Int(ProcessInfo.processInfo.environment["NAVLOG_CHAOS_BOUNCES"] ?? "") ?? 3

    @Test("kill -9 during durable ingest: after a restart every acknowledged event is there exactly once", arguments: 0..<bounces)
    func crashDuringDurableIngest(bounce: Int) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = String(decoding: Self.workload(6000, seed: UInt64(300 + bounce)), as: UTF8.self).split(separator: "\n").map(String.init)
            var daemon = try DaemonProcess(directory: dir)
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n")
            var acked = 1
            var sent = 1
            // Kill at a different point every bounce (a pseudo-random line, reproducible).
            var random = SplitMix64(seed: UInt64(bounce) &+ 99)
            let killAfter = 200 + Int(random.next() % 5500)
            while sent - 1 < lines.count {
                let chunk = lines[(sent - 1)..<min(sent - 1 + 100, lines.count)]
                do { try client.send(chunk.joined(separator: "\n") + "\n") } catch { break }
                sent += chunk.count
                for reply in client.readUntil(timeout: 10, { ($0["ack"] as? Int ?? 0) >= sent }) {
                    if let line = reply["ack"] as? Int { acked = max(acked, line) }
                }
                if sent - 1 >= killAfter { daemon.crash(); break }
            }
            client.close()
            #expect(acked > 1, "some events were acknowledged before the crash")
            // Every other bounce, a torn write as well: the tail of the active segment gets the
            // start of a block that never finished (a real block header's bytes, then garbage).
            if bounce % 2 == 1 {
                let segments = try FileManager.default.contentsOfDirectory(atPath: daemon.dataDirectory).filter { $0.hasSuffix(".zst") }.sorted()
                let active = try #require(segments.last)
                let handle = try FileHandle(forUpdating: URL(fileURLWithPath: daemon.dataDirectory + "/" + active))
                let existing = try handle.readToEnd() ?? Data()
                let torn = existing.prefix(Int(random.next() % 64)) + Data((0..<Int(random.next() % 4_096)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
                try handle.seekToEnd()
                try handle.write(contentsOf: torn)
                try handle.close()
            }
            daemon = try DaemonProcess(directory: dir)
            // Durability: every event acknowledged as durable before the crash is there, before any resend.
            let recovered = try Self.storedEvents(daemon.dataDirectory)
            let stored = Set(recovered.map { "\($0["session"]!)#\($0["seq"]!)" })
            let acknowledged = lines.prefix(max(0, acked - 1)).compactMap { line -> String? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return "\(object["session"]!)#\(object["seq"]!)"
            }
            let missing = acknowledged.filter { !stored.contains($0) }
            #expect(missing.isEmpty, "\(missing.count) of \(acknowledged.count) durably acknowledged events are missing after the crash\(bounce % 2 == 1 ? " and torn write" : "")")
            // The client resends everything it sent; duplicates are dropped.
            let all = try Self.write(Array(lines.joined(separator: "\n").utf8) + [0x0A], to: dir.appendingPathComponent("all.jsonl"))
            let resend = try ProcessRunner.navlog(["send", "--socket", daemon.socket, all.path])
            #expect(resend.status == 0, "\(resend.errorOutput)")
            #expect(daemon.terminate() == 0)
            let events = try Self.storedEvents(daemon.dataDirectory)
            #expect(events.count == lines.count, "every event exactly once after the resend")
            Self.checkOrder(events)
            // LSNs strictly increase.
            let lsns = events.map { $0["_lsn"] as! Int }
            #expect(zip(lsns, lsns.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test("a failed fsync fails the durable acks waiting for it and stops navlogd (75); after a restart, resends are stored exactly once")
    func fsyncFailure() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let events = (1...20).map { #"{"type":"mark","session":"f","seq":\#($0),"name":"n"}"# }
            // The first data fsync succeeds, every later one fails with EIO.
            let daemon = try DaemonProcess(directory: dir, environment: ["NAVLOG_FAILPOINT_FSYNC_AFTER": "1"])
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + events[0..<10].joined(separator: "\n") + "\n")
            let first = client.readUntil { $0["ack"] != nil }.last
            #expect(first?["stored"] as? Int == 10 && first?["durable"] as? Bool == true, "\(String(describing: first))")
            try client.send(events[10..<20].joined(separator: "\n") + "\n")
            let failed = client.readUntil { $0["error"] != nil || $0["ack"] != nil }.last
            #expect(failed?["error"] as? String == "store", "no durable ack for data whose fsync failed: \(String(describing: failed))")
            #expect((failed?["reason"] as? String)?.contains("fsync") == true)
            #expect(daemon.waitForExit(timeout: 20) == 75, "navlogd stops: \(daemon.log)")
            #expect(daemon.log.contains("may not be on disk"))
            client.close()
            // Restarted, it recovers from the disk; the client resends everything not acknowledged as durable (here: all).
            let restarted = try DaemonProcess(directory: dir)
            let again = try SocketClient(path: restarted.socket)
            try again.send(#"{"hello":1,"ack":"durable"}"# + "\n" + events.joined(separator: "\n") + "\n")
            let ack = again.readUntil { $0["ack"] != nil }.last
            #expect((ack?["stored"] as? Int ?? 0) + (ack?["duplicates"] as? Int ?? 0) == 20, "\(String(describing: ack))")
            again.close()
            #expect(restarted.terminate() == 0)
            let stored = try Self.storedEvents(restarted.dataDirectory).filter { $0["session"] as? String == "f" }.map { $0["seq"] as! Int }
            #expect(stored == Array(1...20), "each event exactly once, in order")
        }
    }

    @Test("navlog tail prints the newest events and -f follows new ones as navlogd stores them")
    func tailFollows() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let file = try Self.write(Self.workload(300, seed: 31), to: dir.appendingPathComponent("w.jsonl"))
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, file.path]).status == 0)
            let last = try ProcessRunner.navlog(["tail", "-n", "3", "--data-dir", daemon.dataDirectory])
            #expect(last.output.split(separator: "\n").map { $0.contains("\"_lsn\":298") || $0.contains("\"_lsn\":299") || $0.contains("\"_lsn\":300") } == [true, true, true])
            // `-n 1` prints the newest stored match first: once it is out, tail is following.
            let follower = try RunningProcess(
                TestEnvironment.binaries.appendingPathComponent("navlog"),
                ["tail", "-f", "-n", "1", "--type", "mark,vc.appear", "--data-dir", daemon.dataDirectory]
            )
            #expect(follower.waitForOutput(containing: "\"type\":\"vc.appear\"", timeout: 30), "tail printed the newest stored match")
            let live = try Self.write(Array(#"{"type":"mark","session":"live","seq":1,"name":"followed"}"#.utf8) + [0x0A], to: dir.appendingPathComponent("live.jsonl"))
            #expect(try ProcessRunner.navlog(["send", "--socket", daemon.socket, live.path]).status == 0)
            #expect(follower.waitForOutput(containing: "followed", timeout: 30))
            let followed = follower.stop()
            #expect(followed.output.contains("\"name\":\"followed\""), "tail -f printed: \(followed.output) status \(followed.status) stderr: \(followed.errorOutput)")
            #expect(followed.output.split(separator: "\n").count == 2, "the newest stored match, then only the new event")
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("the per-connection rate limit suppresses beyond the burst and says how many it dropped")
    func rateLimit() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.write(Array(#"{"rateLimitIntervalSeconds": 60, "rateLimitBurst": 100}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"batch"}"# + "\n")
            try client.send((1...250).map { #"{"type":"mark","session":"r","seq":\#($0),"name":"n"}"# + "\n" }.joined())
            let replies = client.readUntil { ($0["ack"] as? Int ?? 0) >= 251 }
            let suppressed = replies.compactMap { $0["warning"] as? String == "rate-limited" ? $0["suppressed"] as? Int : nil }.reduce(0, +)
            #expect(suppressed == 150, "the client is told how many events were suppressed: \(replies)")
            #expect(replies.filter { $0["ack"] != nil }.reduce(0) { $0 + ($1["stored"] as? Int ?? 0) } == 100)
            let stats = try daemon.stats()
            #expect(stats["rateLimited"] as? Int == 150, "and the daemon counts them")
            client.close()
            #expect(daemon.terminate() == 0)
            #expect(try Self.storedEvents(daemon.dataDirectory).count == 100)
        }
    }

    /// Every thread's voluntary context switches: a thread that wakes on a timer counts up
    /// even when it finds nothing to do.
    static func wakeUps(of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return total + (line.flatMap { Int($0.split(separator: "\t").last!.trimmingCharacters(in: .whitespaces)) } ?? 0)
        }
    }

    @Test("an idle navlogd sleeps: after its last flush no thread wakes up on its own")
    func idleDaemonSleeps() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.write(Array(#"{"flushIntervalSeconds": 0.2}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"type":"mark","session":"idle","seq":1,"name":"n"}"# + "\n")
            client.close()
            usleep(1_000_000)  // several flush intervals: the event is flushed, nothing is left to do
            let before = Self.wakeUps(of: daemon.pid)
            usleep(2_000_000)
            let woken = Self.wakeUps(of: daemon.pid) - before
            // A writer that polls once the interval has passed wakes about 2,000 times here.
            #expect(woken < 100, "navlogd's threads woke \(woken) times in 2 s while idle")
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("connections over the limit get an error line and are closed; the others keep working")
    func connectionLimit() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.write(Array(#"{"maximumConnections": 3}"#.utf8), to: dir.appendingPathComponent("c.json"))
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
            // navlogd counts a connection until it has seen it close, so wait for each count to
            // settle (the start-up probe's included) before opening the next: otherwise one of
            // the three could be the one refused.
            func waitForConnections(_ wanted: Int, asking client: SocketClient) throws -> Int {
                var open = 0
                for _ in 0..<200 where open != wanted {
                    try client.send(#"{"control":"stats"}"# + "\n")
                    open = client.readUntil { $0["connections"] != nil }.last?["connections"] as? Int ?? 0
                    if open != wanted { usleep(20_000) }
                }
                return open
            }
            let first = try SocketClient(path: daemon.socket)
            #expect(try waitForConnections(1, asking: first) == 1)
            let held = [first, try SocketClient(path: daemon.socket), try SocketClient(path: daemon.socket)]
            #expect(try waitForConnections(3, asking: first) == 3)
            let extra = try SocketClient(path: daemon.socket)
            let reply = try #require(extra.readLine())
            #expect(reply.contains(#""error":"refused""#) && reply.contains("maximumConnections"))
            #expect(extra.readLine(timeout: 5) == nil, "closed after the error")
            extra.close()
            // held[0] has sent a control line; a hello must come first, so use another.
            try held[1].send(#"{"hello":1,"ack":"durable"}"# + "\n" + #"{"type":"mark","session":"k","seq":1,"name":"n"}"# + "\n")
            #expect(held[1].readUntil { $0["ack"] != nil }.last?["stored"] as? Int == 1)
            for client in held { client.close() }
            #expect(daemon.terminate() == 0)
        }
    }
}
