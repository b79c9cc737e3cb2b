import Foundation
import NavlogTesting
import Testing

/// Rule E4 for `navlog replay` and `timeline`: a session whose events were stored out of `seq`
/// order (over two connections, a late resend) is replayed in `seq` order; a late event is no
/// duplicate (issue: "seq 4 stored after seq 5 … does not apply it: the final hierarchy misses
/// a screen").
@Suite("Replay in seq order (E4)")
struct SequenceOrderReplayTests {
    static func line(_ seq: Int, _ type: String, _ fields: String) -> String {
        #"{"type":"\#(type)","session":"late","seq":\#(seq),"ts":\#(1_763_715_600_000_000 + seq * 1_000_000),\#(fields)}"#
    }

    @Test("seq 4 stored after seq 5: the replayed stack is the one in seq order, with no A17 or A18")
    func lateEvent() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let start = Self.line(1, "session.start", #""app":"T","idiom":"phone","traits":{"h":"compact","v":"regular"}"#)
            let lines = [
                start,
                Self.line(2, "nav.set", #""nav":{"id":"nav","class":"UINavigationController"},"vcs":[{"id":"a","class":"AVC"}]"#),
                Self.line(3, "window.root", #""vc":"nav""#),
                Self.line(5, "nav.push", #""nav":"nav","vc":{"id":"c","class":"CVC"}"#),
                // Stored after seq 5 (it came over another connection, late).
                Self.line(4, "nav.push", #""nav":"nav","vc":{"id":"b","class":"BVC"}"#),
            ]
            let file = dir.appendingPathComponent("late.jsonl")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let data = dir.appendingPathComponent("data").path
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", data, file.path]).status == 0)
            let replay = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "late", "--end", "--format", "json"])
            #expect(replay.status == 0, "\(replay.errorOutput)")
            let state = try JSONSerialization.jsonObject(with: Data(replay.output.utf8)) as! [String: Any]
            #expect(state["focus"] as? String == "c")
            #expect((state["anomalies"] as? [Any])?.isEmpty == true, "no A17/A18 for a late event: \(state["anomalies"] ?? [])")
            let root = (((state["windows"] as? [[String: Any]])?.first)?["root"] as? [String: Any])
            let stack = (root?["stack"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(stack == ["a", "b", "c"], "the stack in seq order: \(stack ?? [])")
            // The timeline lists the events in seq order too.
            let timeline = try ProcessRunner.navlog(["timeline", "--data-dir", data, "--session", "late", "--format", "json"])
            let sequences = timeline.output.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
            }
            #expect(sequences == [1, 2, 3, 4, 5])
            // Replaying to seq 4 stops after b's push.
            let atFour = try ProcessRunner.navlog(["replay", "--data-dir", data, "--session", "late", "--seq", "4", "--format", "json"])
            #expect((try JSONSerialization.jsonObject(with: Data(atFour.output.utf8)) as? [String: Any])?["focus"] as? String == "b")
            #expect(state["lateEvents"] as? Int == 1)

            // Analytics, sessions and anomalies agree with the same events stored in seq order.
            let sortedFile = dir.appendingPathComponent("sorted.jsonl")
            let sortedLines = lines.sorted { $0.seqNumber < $1.seqNumber }
            try (sortedLines.joined(separator: "\n") + "\n").write(to: sortedFile, atomically: true, encoding: .utf8)
            let sortedData = dir.appendingPathComponent("sorted").path
            #expect(try ProcessRunner.navlog(["ingest", "--quiet", "--data-dir", sortedData, sortedFile.path]).status == 0)
            for command in [
                ["query", "screens", "--format", "json"], ["query", "transitions", "--format", "json"], ["sessions", "--format", "json"],
                ["anomalies", "--format", "json"],
            ] {
                let late = try ProcessRunner.navlog(command + ["--data-dir", data])
                let inOrder = try ProcessRunner.navlog(command + ["--data-dir", sortedData])
                #expect(late.status == 0 && inOrder.status == 0, "\(command): \(late.errorOutput) \(inOrder.errorOutput)")
                #expect(late.output == inOrder.output, "\(command.joined(separator: " ")): late log \(late.output) vs in order \(inOrder.output)")
            }
            let screens = try ProcessRunner.navlog(["query", "screens", "--format", "json", "--data-dir", data])
            #expect(screens.output.contains("BVC"), "b's view is counted: \(screens.output)")
        }
    }
}

extension String {
    /// The `seq` of an event line (test lines put it right after the session).
    fileprivate var seqNumber: Int {
        Int(self.split(separator: "\"seq\":")[1].prefix { $0.isNumber })!
    }
}
