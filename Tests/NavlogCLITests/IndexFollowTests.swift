import Foundation
import NavlogTesting
import Testing

/// `navlog index --follow` (issue 14, no cold start): beside a running navlogd it indexes what
/// is stored within its interval, so the first query after ingest finds the index up to date;
/// it stops on SIGTERM with status 0.
@Suite("navlog index --follow")
struct IndexFollowTests {
    @Test("events stored while it runs are indexed within a few intervals; a one-shot index then has nothing to do; SIGTERM stops it")
    func followsNavlogd() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let daemon = try DaemonProcess(directory: dir)
            let follower = try RunningProcess(
                TestEnvironment.binaries.appendingPathComponent("navlog"), ["index", "--follow", "--interval", "0.2", "--data-dir", daemon.dataDirectory])
            #expect(follower.waitForErrorOutput(timeout: 10) { $0.contains("following") })
            for round in 0..<3 {
                let client = try SocketClient(path: daemon.socket)
                let lines = (1...200).map { seq in
                    #"{"type":"mark","session":"follow-\#(round)","seq":\#(seq),"ts":\#(1_763_715_600_000_000 + seq * 1_000),"name":"n"}"#
                }
                try client.send(#"{"hello":1,"ack":"batch"}"# + "\n" + lines.joined(separator: "\n") + "\n")
                _ = client.readUntil(timeout: 30) { ($0["ack"] as? Int ?? 0) >= 201 }
                client.close()
                // Each round's events are indexed by the follower, not by the query below.
                let indexed = follower.waitForErrorOutput(timeout: 15) { text in
                    text.components(separatedBy: "indexed ").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }.reduce(0, +) >= 200 * (round + 1)
                }
                #expect(indexed, "the follower indexed round \(round): \(follower.errorOutput)")
                let oneShot = try ProcessRunner.navlog(["index", "--data-dir", daemon.dataDirectory])
                #expect(oneShot.output.contains("0 file(s) written, 0 events replayed"), "already up to date: \(oneShot.output)")
            }
            let sessions = try ProcessRunner.navlog(["sessions", "--format", "json", "--data-dir", daemon.dataDirectory])
            #expect(sessions.output.split(separator: "\n").count == 3)
            let stopped = follower.stop()
            #expect(stopped.status == 0, "stops on SIGTERM with status 0: \(stopped.errorOutput)")
            #expect(stopped.errorOutput.contains("stopped."))
            #expect(daemon.terminate() == 0)
        }
    }

    @Test("--interval out of range is refused with a sentence saying the range")
    func badInterval() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let result = try ProcessRunner.navlog(["index", "--follow", "--interval", "0", "--data-dir", dir.path])
            #expect(result.status != 0)
            #expect(result.errorOutput.contains("--interval must be between 0 and 3600 seconds"))
        }
    }
}
