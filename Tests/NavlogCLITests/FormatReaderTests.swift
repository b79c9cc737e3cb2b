import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// docs/FORMAT.md is enough to read a log without navlog's code: `tools/format-reader.py`,
/// written from it (its code tables parsed from the document), prints the same events, field
/// for field, as `navlog cat`, over sealed segments with seek tables and the active one, with
/// bodies of every token kind.
@Suite("docs/FORMAT.md read by an independent reader")
struct FormatReaderTests {
    @Test(
        "tools/format-reader.py prints what navlog cat prints; every sealed segment's seek table matches its blocks (one-frame and grouped blocks)",
        arguments: [false, true])
    func independentReaderAgrees(grouped: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = LogOptions()
            options.maximumEventsPerBlock = 200
            options.maximumSegmentBytes = 24 << 10
            // Grouped: 200-event blocks in 3 session groups.
            options.eventsPerSessionGroup = grouped ? 64 : .max
            let log = try EventLog(directory: dir.path, options: options)
            var generator = WorkloadGenerator(WorkloadConfiguration(seed: 31))
            // Every token kind, unknown keys, escapes, Unicode, no seq, no ts.
            let edge = [
                #"{"type":"mark","session":"edge","seq":1,"ts":1763715600000000,"name":"a\"b\\c\n\u00e9✓","props":{"n":-12,"f":1.5e3,"t":true,"u":false,"customKey":"v/w"}}"#,
                #"{"type":"nav.set","session":"edge","seq":2,"ts":1763715600000001,"nav":"n","vcs":[{"id":"0x6000aa","class":"Ünïcode<script>","unwindActions":["a","b"]},"0x6000ab"]}"#,
                #"{"type":"child.willMove","session":"edge","vc":"0x6000ab","parent":null}"#,
                #"{"type":"app.background","session":"edge","seq":7}"#,
            ]
            let lines = generator.lines(2_500) + edge.map { Array($0.utf8) }
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in lines.enumerated() {
                _ = try line.withUnsafeBytes {
                    try parser.parse($0, lineNumber: number + 1, receivedAt: 1_763_715_600_000_000 + Int64(number), peer: PeerCredentials(uid: 7, gid: 8, pid: 9), into: &batch)
                }
                if batch.count == 150 {
                    _ = try log.append(batch)
                    batch.removeAll()
                }
            }
            _ = try log.append(batch)
            try log.close()

            let script = TestEnvironment.packageRoot.appendingPathComponent("tools/format-reader.py")
            let independent = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, dir.path, "--check-seek-tables"])
            #expect(independent.status == 0, "\(independent.errorOutput)")
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", dir.path])
            #expect(cat.status == 0)
            let theirs = independent.output.split(separator: "\n")
            let ours = cat.output.split(separator: "\n")
            #expect(theirs.count == lines.count && ours.count == lines.count, "\(theirs.count) and \(ours.count) lines for \(lines.count) events")
            for (a, b) in zip(theirs, ours) {
                let parsedA = try JSONSerialization.jsonObject(with: Data(a.utf8)) as! NSDictionary
                let parsedB = try JSONSerialization.jsonObject(with: Data(b.utf8)) as! NSDictionary
                if parsedA != parsedB {
                    Issue.record("differs:\n  format-reader: \(a)\n  navlog cat:    \(b)")
                    break
                }
            }
            // Several segments, sealed ones ending with a seek table the reader checked.
            let summary = independent.errorOutput
            let sealed = Int(summary.components(separatedBy: " segment(s), ").last?.prefix { $0.isNumber } ?? "") ?? 0
            #expect(sealed >= 2, "\(summary)")
        }
    }
}
