import Foundation
import NavlogTesting
import Testing

/// A full disk, simulated with a file size limit on navlogd (writes beyond it fail with EFBIG,
/// which navlogd treats like ENOSPC): it refuses new events with a clear error, loses nothing
/// it stored, and takes events again by itself once it can write.
@Suite("navlogd with a full disk", .serialized)
struct DiskFullTests {
    /// Polls `navlog stats` until `condition` holds for its JSON.
    static func waitForStats(_ daemon: DaemonProcess, timeout: Double = 60, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: Any] = [:]
        while Date() < deadline {
            if let object = try? daemon.stats() {
                last = object
                if condition(object) { return object }
            }
            usleep(100_000)
        }
        throw TestFailure("navlogd's counters never reached the expected state; last: \(last)\n\(daemon.log)")
    }

    @Test("disk full: new events are refused with a clear error, nothing stored is lost, and sending resumes by itself when space returns")
    func refusesThenRecovers() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            // About 30,000 stored events fit; the sender has 80,000.
            try daemon.setFileSizeLimit(300_000)
            let file = try DaemonEndToEndTests.write(DaemonEndToEndTests.workload(80_000, seed: 77), to: dir.appendingPathComponent("events.jsonl"))
            let sender = try RunningProcess(
                TestEnvironment.binaries.appendingPathComponent("navlog"), ["send", "--socket", daemon.socket, "--ack", "durable", "--timeout", "150", file.path])

            let during = try Self.waitForStats(daemon) { $0["storeError"] != nil }
            #expect((during["storeError"] as? String)?.contains("File too large") == true, "\(during)")
            #expect((during["storeErrorSince"] as? String)?.hasSuffix("Z") == true, "since when, in UTC: \(during)")
            // A new client is told why, and the connection is closed so that it resends in order.
            let client = try SocketClient(path: daemon.socket)
            try client.send(#"{"hello":1,"ack":"durable"}"# + "\n" + #"{"type":"mark","session":"late","seq":1,"name":"n"}"# + "\n")
            let refusal = client.readUntil { $0["error"] != nil || $0["ack"] != nil }.last
            #expect(refusal?["error"] as? String == "store", "\(String(describing: refusal))")
            #expect(refusal?["stored"] as? Int == 0)
            let reason = refusal?["reason"] as? String ?? ""
            #expect(reason.contains("cannot write its log") && reason.contains("Free disk space"), "\(reason)")
            #expect(client.readLine(timeout: 10) == nil, "navlogd closes the connection after a batch it could not store")
            client.close()
            let table = try ProcessRunner.navlog(["stats", "--socket", daemon.socket]).output
            #expect(table.contains("storeError"), "navlog stats shows the outage: \(table)")
            #expect(daemon.log.contains("refuses new events until it can"), "\(daemon.log)")
            // What is on disk meanwhile is a sound log.
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)

            try daemon.setFileSizeLimit(nil)
            let sent = sender.finish(timeout: 150)
            #expect(sent.status == 0, "navlog send finishes once navlogd can write: \(sent.errorOutput)")
            let after = try Self.waitForStats(daemon) { $0["storeError"] == nil && $0["storeErrorSince"] == nil }
            #expect((after["storeRefusedEvents"] as? Int ?? 0) > 0, "\(after)")
            #expect(after["lost"] as? Int == 0, "refused events are not counted as lost: \(after)")
            #expect(daemon.log.contains("can write its log again"), "\(daemon.log)")
            #expect(daemon.terminate() == 0, "\(daemon.log)")

            let events = try DaemonEndToEndTests.storedEvents(daemon.dataDirectory)
            #expect(events.count == 80_000, "every event exactly once")
            DaemonEndToEndTests.checkOrder(events)
            #expect(try ProcessRunner.navlog(["verify", "--data-dir", daemon.dataDirectory]).status == 0)
        }
    }

    @Test("stopped while the disk is still full: navlogd exits non-zero and says how many events it could not write; a restart keeps everything stored")
    func stopWhileFull() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            try daemon.setFileSizeLimit(200_000)
            let file = try DaemonEndToEndTests.write(DaemonEndToEndTests.workload(40_000, seed: 78), to: dir.appendingPathComponent("events.jsonl"))
            let first = try ProcessRunner.navlog(["send", "--socket", daemon.socket, "--ack", "durable", "--timeout", "3", file.path])
            #expect(first.status != 0, "not everything can be acknowledged while the disk is full")
            #expect(first.errorOutput.contains("cannot write its log"), "\(first.errorOutput)")
            let status = daemon.terminate()
            #expect(status != 0, "events were lost in memory: the exit status says so")
            #expect(daemon.log.contains("could not be written before it stopped"), "\(daemon.log)")

            let restarted = try DaemonProcess(directory: dir)
            let second = try ProcessRunner.navlog(["send", "--socket", restarted.socket, "--ack", "durable", file.path])
            #expect(second.status == 0, "\(second.errorOutput)")
            #expect(restarted.terminate() == 0)
            let events = try DaemonEndToEndTests.storedEvents(restarted.dataDirectory)
            #expect(events.count == 40_000)
            DaemonEndToEndTests.checkOrder(events)
        }
    }

    @Test("readers on a full disk: navlog query answers by replaying the log when the replay index cannot be written, with the same rows")
    func queryWithoutRoomForTheIndex() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let file = try DaemonEndToEndTests.write(DaemonEndToEndTests.workload(5_000, seed: 79), to: dir.appendingPathComponent("events.jsonl"))
            let data = dir.appendingPathComponent("data").path
            #expect(try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path]).status == 0)
            // No file may grow beyond 1000 bytes: neither the index in the data directory nor its fallback in the cache.
            let environment = ["HOME": dir.path, "XDG_CACHE_HOME": dir.appendingPathComponent("cache").path, "PATH": "/usr/bin:/bin"]
            // Standard output goes through a pipe: the limit is for files, and the answer is not one.
            let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
            let full = try ProcessRunner.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "prlimit --fsize=1000: '\(navlog)' query screens --data-dir '\(data)' --format csv | cat"],
                environment: environment)
            #expect(full.status == 0, "\(full.errorOutput)")
            #expect(full.errorOutput.contains("Answering by replaying the log instead"), "\(full.errorOutput)")
            let normal = try ProcessRunner.run(
                TestEnvironment.binaries.appendingPathComponent("navlog"), ["query", "screens", "--data-dir", data, "--format", "csv"], environment: environment)
            #expect(normal.status == 0, "\(normal.errorOutput)")
            #expect(!normal.output.isEmpty && full.output == normal.output, "the same rows with and without the index")
        }
    }
}
