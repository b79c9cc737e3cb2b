import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// The trusted `_key`: which key a relay (`navlog intake`) says sent each event, accepted from
/// the peers in relayUIDs/relayGIDs only, stored in the block's peer table, printed by
/// `navlog cat`. The tests run as root (uid 0): relayUIDs [0] trusts them, [12345] does not.
@Suite("relay keys end to end", .serialized)
struct RelayKeyEndToEndTests {
    static func config(_ json: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent("navlogd-\(UUID().uuidString).json")
        try json.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static func cat(_ data: String) throws -> [String] {
        let result = try ProcessRunner.navlog(["cat", "--data-dir", data])
        #expect(result.status == 0, "\(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }

    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    static func workloadLines(_ count: Int, seed: UInt64) -> [String] {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: seed))
        return generator.lines(count).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `tools/format-reader.py` (docs/FORMAT.md alone) prints what `navlog cat` prints.
    static func expectFormatReaderAgrees(_ data: String, _ cat: [String]) throws {
        let script = TestEnvironment.packageRoot.appendingPathComponent("tools/format-reader.py")
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, data])
        #expect(result.status == 0, "format-reader.py: \(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines == cat, "format-reader.py and navlog cat differ")
    }

    @Test(
        "a trusted relay's key is stored with each event: switched mid-connection, cleared by null, never taken from a device's _key, kept across a crash and after navlog compact"
    )
    func trustedRelay() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // Small segments, so that sealed ones exist for navlog compact; no compaction by navlogd.
            let config = try Self.config(#"{"relayUIDs": [0], "segmentBytes": 16384, "compactionIntervalSeconds": 0}"#, in: dir)
            var daemon = try DaemonProcess(directory: dir, arguments: ["--config", config])
            var client = try SocketClient(path: daemon.socket)
            let workload = Self.workloadLines(1500, seed: 41)
            var lines = [
                #"{"hello":1,"client":"relay-test","ack":"durable"}"#,  // 1
                #"{"relay":"ios-prod"}"#,  // 2
                #"{"type":"app.foreground","session":"s1","seq":1,"_key":"forged"}"#,  // 3: _key is ignored
                #"{"type":"app.background","session":"s1","seq":2}"#,  // 4
                #"{"type":"app.foreground","session":"s1"}"#,  // 5: rejected, no seq
                #"{"relay":"android.beta"}"#,  // 6
                #"{"type":"app.foreground","session":"s2","seq":1}"#,  // 7
                #"{"relay":null}"#,  // 8
                #"{"type":"app.foreground","session":"s3"}"#,  // 9: no key, no seq needed
                #"{"relay":"ios-prod"}"#,  // 10
                #"{"relay":"bad key"}"#,  // 11: rejected (pattern), clears the key
                #"{"type":"app.foreground","session":"s4","seq":1,"_key":"forged"}"#,  // 12: no key
                #"{"relay":""}"#,  // 13: empty
                #"{"relay":5}"#,  // 14: type
                #"{"relay":"\#(String(repeating: "k", count: 65))"}"#,  // 15: range
                #"{"relay":"ios-prod"}"#,  // 16
            ]
            let firstWorkloadLine = lines.count + 1
            lines += workload
            // A few lines at a time, each group acknowledged: many blocks, several segments.
            var sent = 0
            var replies: [[String: Any]] = []
            var next = 0
            while next < lines.count {
                let end = min(lines.count, next + (next < firstWorkloadLine ? 1 : 40))
                try client.send(lines[next..<end].joined(separator: "\n") + "\n")
                sent = end
                replies += client.readUntil { ($0["ack"] as? Int ?? 0) >= sent }
                try #require((replies.last?["ack"] as? Int ?? 0) >= sent, "no ack of line \(sent): \(daemon.log)")
                next = end
            }
            let rejections = replies.filter { $0["error"] as? String == "rejected" }
            #expect(rejections.map { $0["line"] as? Int } == [5, 11, 13, 14, 15])
            #expect(rejections.map { $0["code"] as? String } == ["missing", "pattern", "empty", "type", "range"])
            #expect(rejections.map { $0["field"] as? String } == ["seq", "relay", "relay", "relay", "relay"])
            #expect((rejections.first?["reason"] as? String ?? "").contains("stored once"))
            client.close()

            // Killed: the next start recovers the log from what is on disk (everything acknowledged).
            daemon.crash()
            daemon = try DaemonProcess(directory: dir, arguments: ["--config", config])
            client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + #"{"relay":"ios-prod"}"# + "\n" + #"{"type":"app.foreground","session":"s5","seq":1}"# + "\n")
            let after = client.readUntil { ($0["ack"] as? Int ?? 0) >= 3 }
            #expect(after.last?["stored"] as? Int == 1, "\(after)")
            client.close()
            #expect(daemon.terminate() == 0, "\(daemon.log)")

            let before = try Self.cat(daemon.dataDirectory)
            var keys: [String: Set<String>] = [:]
            for line in before {
                let event = Self.object(line)
                let key = event["_key"] as? String ?? "-"
                keys[event["session"] as? String ?? "", default: []].insert(key)
                // The key comes right after _pid, and only when there is one.
                if key != "-" {
                    #expect(line.hasSuffix(#","_key":"\#(key)"}"#) && line.contains(#""_pid":"#), "\(line)")
                } else {
                    #expect(!line.contains("_key"), "\(line)")
                }
            }
            #expect(keys["s1"] == ["ios-prod"])
            #expect(keys["s2"] == ["android.beta"])
            #expect(keys["s3"] == ["-"])
            #expect(keys["s4"] == ["-"])
            #expect(keys["s5"] == ["ios-prod"])
            let workloadSessions = Set(workload.compactMap { Self.object($0)["session"] as? String })
            for session in workloadSessions { #expect(keys[session] == ["ios-prod"], "session \(session): \(keys[session] ?? [])") }
            #expect(before.count == 5 + workload.count + 1)
            try Self.expectFormatReaderAgrees(daemon.dataDirectory, before)

            // The key as a column: navlog sessions --keys, the SQL events table, the export's events.
            let sessions = try ProcessRunner.navlog(["sessions", "--data-dir", daemon.dataDirectory, "--keys", "--format", "csv"])
            #expect(sessions.status == 0, "\(sessions.errorOutput)")
            let sessionRows = sessions.output.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
            #expect(sessionRows.first?.last == "key")
            let sessionKeys = Dictionary(sessionRows.dropFirst().map { (String($0[0]), String($0.last!)) }, uniquingKeysWith: { a, _ in a })
            for session in workloadSessions { #expect(sessionKeys[session] == "ios-prod", "\(session): \(sessionKeys[session] ?? "absent")") }
            let plainSessions = try ProcessRunner.navlog(["sessions", "--data-dir", daemon.dataDirectory, "--format", "csv"])
            #expect(!plainSessions.output.contains("key"), "no key column without --keys")
            let sql = try ProcessRunner.navlog([
                "query", "sql", "--data-dir", daemon.dataDirectory, "--format", "csv", "SELECT coalesce(key, '-'), count(*) FROM events GROUP BY 1 ORDER BY 1",
            ])
            #expect(sql.status == 0, "\(sql.errorOutput)")
            #expect(sql.output.split(separator: "\n").dropFirst() == ["-,2", "android.beta,1", "ios-prod,\(2 + workload.count + 1)"], "\(sql.output)")
            let export = dir.appendingPathComponent("export")
            let exported = try ProcessRunner.navlog([
                "export", "--data-dir", daemon.dataDirectory, "--to", export.path, "--table", "events", "--partition", "none", "--compress", "none",
            ])
            #expect(exported.status == 0, "\(exported.errorOutput)")
            let rows = try String(contentsOf: export.appendingPathComponent("events/part-00000.jsonl"), encoding: .utf8).split(separator: "\n").map { Self.object(String($0)) }
            #expect(rows.count == before.count)
            #expect(rows.filter { $0["key"] as? String == "ios-prod" }.count == 2 + workload.count + 1)
            #expect(rows.filter { $0["key"] is NSNull }.count == 2)

            // Compaction writes the sealed segments again: the same events, peers and keys.
            let reader = try LogReader(directory: daemon.dataDirectory)
            try #require(reader.segments.count > 1, "no sealed segment to compact")
            let compact = try ProcessRunner.navlog(["compact", "--data-dir", daemon.dataDirectory])
            #expect(compact.status == 0, "\(compact.errorOutput)")
            #expect(try Self.cat(daemon.dataDirectory) == before)
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)
        }
    }

    @Test("a relay line from a peer not in relayUIDs/relayGIDs is rejected, the connection stays usable and its events carry no key")
    func untrustedRelay() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.config(#"{"relayUIDs": [12345], "relayGIDs": [12345]}"#, in: dir)
            // navlogd --print-config shows the settings.
            let printed = try ProcessRunner.navlog(["--config", config, "--print-config"], executable: "navlogd")
            let settings = Self.object(printed.output)
            #expect(settings["relayUIDs"] as? [Int] == [12345] && settings["relayGIDs"] as? [Int] == [12345], "\(printed.output)")
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config])
            let client = try SocketClient(path: daemon.socket)
            try client.send(
                [
                    #"{"hello":1,"ack":"batch"}"#,
                    #"{"relay":"ios-prod"}"#,
                    #"{"type":"app.foreground","session":"u1"}"#,
                    #"{"type":"app.background","session":"u1","seq":2,"_key":"ios-prod"}"#,
                    #"{"relay":null}"#,
                ].joined(separator: "\n") + "\n")
            let replies = client.readUntil { ($0["ack"] as? Int ?? 0) >= 5 }
            let rejections = replies.filter { $0["error"] as? String == "rejected" }
            #expect(rejections.map { $0["line"] as? Int } == [2, 5])
            #expect(rejections.map { $0["code"] as? String } == ["forbidden", "forbidden"])
            #expect(rejections.first?["field"] as? String == "relay")
            let reason = rejections.first?["reason"] as? String ?? ""
            #expect(reason.contains("uid 0") && reason.contains("may not relay") && reason.contains("relayUIDs") && reason.contains("relayGIDs"), "\(reason)")
            #expect(replies.filter { $0["ack"] != nil }.reduce(0) { $0 + ($1["stored"] as? Int ?? 0) } == 2)
            client.close()
            #expect(daemon.terminate() == 0, "\(daemon.log)")
            let events = try Self.cat(daemon.dataDirectory)
            #expect(events.count == 2)
            #expect(events.allSatisfy { !$0.contains("_key") }, "\(events)")
        }
    }

    @Test("a grouped block (16,384 events or more) keeps each relayed event's key, read by navlog cat and the format reader")
    func groupedBlock() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // No acks and a long flush interval: the 20,000 events are written as one block at stop.
            let config = try Self.config(#"{"relayUIDs": [0], "flushIntervalSeconds": 600}"#, in: dir)
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config])
            let client = try SocketClient(path: daemon.socket)
            let workload = Self.workloadLines(20_000, seed: 42)
            let text =
                [#"{"hello":1,"ack":"none"}"#, #"{"relay":"ios-prod"}"#] + workload[..<10_000] + [#"{"relay":"android.beta"}"#] + workload[10_000..<15_000]
                + [#"{"relay":null}"#] + workload[15_000...]
            try client.send(text.joined(separator: "\n") + "\n")
            client.shutdownSending()
            // navlogd closes the connection once it has handled everything.
            while client.readLine(timeout: 30) != nil {}
            client.close()
            #expect(daemon.terminate() == 0, "\(daemon.log)")

            let reader = try LogReader(directory: daemon.dataDirectory)
            var grouped = 0
            var keys: [String] = []
            try reader.scan(LogQuery()) { block, index in
                if index == 0 && block.groupCount > 0 { grouped += 1 }
                keys.append(block.peers[Int(block.peerIndexes[index])].relayKey.name ?? "-")
                return true
            }
            #expect(grouped >= 1, "no grouped block was written")
            #expect(keys.count == 20_000)
            #expect(keys[..<10_000].allSatisfy { $0 == "ios-prod" })
            #expect(keys[10_000..<15_000].allSatisfy { $0 == "android.beta" })
            #expect(keys[15_000...].allSatisfy { $0 == "-" })
            let cat = try Self.cat(daemon.dataDirectory)
            #expect(cat.count == 20_000)
            #expect(cat.filter { $0.hasSuffix(#""_key":"ios-prod"}"#) }.count == 10_000)
            try Self.expectFormatReaderAgrees(daemon.dataDirectory, cat)
        }
    }

    @Test("a trusted relay's keyed events are exempt from the per-connection rate limit; its unkeyed ones are not")
    func rateLimitExemption() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let config = try Self.config(#"{"relayUIDs": [0], "rateLimitIntervalSeconds": 600, "rateLimitBurst": 10}"#, in: dir)
            let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config])
            let client = try SocketClient(path: daemon.socket)
            let keyed = (1...100).map { #"{"type":"app.foreground","session":"k","seq":\#($0)}"# }
            let unkeyed = (1...100).map { #"{"type":"app.foreground","session":"n","seq":\#($0)}"# }
            try client.send(
                ([#"{"hello":1,"ack":"batch"}"#, #"{"relay":"ios-prod"}"#] + keyed + [#"{"relay":null}"#] + unkeyed).joined(separator: "\n") + "\n")
            let replies = client.readUntil { ($0["ack"] as? Int ?? 0) >= 203 }
            #expect(replies.filter { $0["ack"] != nil }.reduce(0) { $0 + ($1["stored"] as? Int ?? 0) } == 110)
            client.close()
            #expect(daemon.terminate() == 0, "\(daemon.log)")
            let events = try Self.cat(daemon.dataDirectory)
            #expect(events.filter { $0.contains(#""session":"k""#) && $0.hasSuffix(#""_key":"ios-prod"}"#) }.count == 100)
            #expect(events.filter { $0.contains(#""session":"n""#) }.count == 10)
        }
    }
}
