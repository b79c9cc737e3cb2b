import Foundation
import NavlogEvents
import NavlogTesting
import NavlogWorkload
import Testing

@testable import NavlogStore

/// docs/FORMAT.md is enough to read a log without navlog's code: `tools/format-reader.py`,
/// written from it (its code tables parsed from the document), prints the same events, field
/// for field, as `navlog cat`, over sealed segments with seek tables and the active one, with
/// bodies of every token kind.
@Suite("docs/FORMAT.md read by an independent reader")
struct FormatReaderTests {
    @Test(
        "tools/format-reader.py prints what navlog cat prints; every sealed segment's seek table matches its blocks (one-frame blocks, grouped blocks of payload version 4, and of version 3 as written before it; with relay keys, versions 5 and 6)",
        arguments: [(false, false, false), (true, false, false), (true, true, false), (false, false, true), (true, false, true)])
    func independentReaderAgrees(grouped: Bool, version3: Bool, relayed: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // Version 3 is no longer written: a log navlog wrote so, with the same options and
            // lines (Tests/Fixtures/format-v3), is read from a copy.
            let lineCount = version3 ? 2_504 : try Self.writeLog(at: dir.path, grouped: grouped, relayed: relayed)
            if version3 {
                try FileManager.default.removeItem(at: dir)
                try FileManager.default.copyItem(at: TestEnvironment.fixture("format-v3/format-reader/log"), to: dir)
            }

            let script = TestEnvironment.packageRoot.appendingPathComponent("tools/format-reader.py")
            let independent = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, dir.path, "--check-seek-tables"])
            #expect(independent.status == 0, "\(independent.errorOutput)")
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", dir.path])
            #expect(cat.status == 0)
            let theirs = independent.output.split(separator: "\n")
            let ours = cat.output.split(separator: "\n")
            #expect(theirs.count == lineCount && ours.count == lineCount, "\(theirs.count) and \(ours.count) lines for \(lineCount) events")
            #expect(ours.contains { $0.contains(#""_key":"#) } == relayed, "relay keys printed only for relayed events")
            for (a, b) in zip(theirs, ours) {
                let parsedA = try JSONSerialization.jsonObject(with: Data(a.utf8)) as! NSDictionary
                let parsedB = try JSONSerialization.jsonObject(with: Data(b.utf8)) as! NSDictionary
                if parsedA != parsedB {
                    Issue.record("differs:\n  format-reader: \(a)\n  navlog cat:    \(b)")
                    break
                }
            }
            // A read for one session (what a seek reads: of a grouped block the spine and one
            // group) gives each of its events as the independent reader does, and only its events.
            var byLSN: [Int: NSDictionary] = [:]
            for line in theirs {
                let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! NSDictionary
                byLSN[(parsed["_lsn"] as! NSNumber).intValue] = parsed
            }
            let reader = try LogReader(directory: dir.path)
            var whole = DecodedBlock(), part = DecodedBlock(), bare = DecodedBlock()
            var positions: [Int32] = [], barePositions: [Int32] = []
            var checked = 0
            for (segment, block) in reader.blocks(matching: LogQuery()) {
                #expect(try reader.readBlock(segment: segment, block: block, into: &whole))
                let sessions = Set((0..<whole.count).map { whole.session($0) }).sorted().prefix(6)
                for session in sessions {
                    #expect(try reader.readBlock(segment: segment, block: block, into: &part, session: Array(session.utf8)))
                    #expect(try reader.readBlock(segment: segment, block: block, into: &bare, session: Array(session.utf8), receiveTimesAndPeers: false))
                    let number = try #require(part.withStrings { strings in (0..<strings.count).first { String(decoding: strings[$0]!, as: UTF8.self) == session } })
                    part.positions(ofSession: number, into: &positions)
                    bare.positions(ofSession: number, into: &barePositions)
                    #expect(positions == barePositions)
                    let expected = byLSN.values.filter {
                        $0["session"] as? String == session && (whole.lsn(0)...whole.lsn(whole.count - 1)).contains(UInt64(($0["_lsn"] as! NSNumber).intValue))
                    }
                    #expect(positions.count == expected.count, "session \(session): \(positions.count) events read for it, \(expected.count) in the block")
                    for position in positions.map(Int.init) {
                        var line: [UInt8] = []
                        try part.appendJSONLine(position, to: &line)
                        let parsed = try JSONSerialization.jsonObject(with: Data(line)) as! NSDictionary
                        #expect(parsed == byLSN[Int(part.lsn(position))], "event \(part.lsn(position)) read for session \(session)")
                        #expect(bare.types[position] == part.types[position] && bare.timestamps[position] == part.timestamps[position])
                        checked += 1
                    }
                }
            }
            #expect(checked > 300)

            // Several segments, sealed ones ending with a seek table the reader checked.
            let summary = independent.errorOutput
            let sealed = Int(summary.components(separatedBy: " segment(s), ").last?.prefix { $0.isNumber } ?? "") ?? 0
            #expect(sealed >= 2, "\(summary)")
        }
    }

    /// Writes the test's log at `directory`: 2,504 events (every token kind among them) in
    /// blocks of 200, segments of 24 KiB, `grouped` in 3 session groups a block, `relayed` with
    /// runs of events under two relay keys. Returns how many events it holds.
    static func writeLog(at directory: String, grouped: Bool, relayed: Bool) throws -> Int {
        var options = LogOptions()
        options.maximumEventsPerBlock = 200
        options.maximumSegmentBytes = 24 << 10
        // Grouped: 200-event blocks in 3 session groups.
        options.eventsPerSessionGroup = grouped ? 64 : .max
        let log = try EventLog(directory: directory, options: options)
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
        // Relayed: runs of events under two keys and none (a relayed event needs a seq).
        let keys = [RelayKey.none, RelayKey("ios-prod")!, RelayKey("android.beta_2")!]
        for (number, line) in lines.enumerated() {
            let key = relayed ? keys[(number / 7) % keys.count] : .none
            let peer = PeerCredentials(uid: 7, gid: 8, pid: 9, relayKey: line.firstRange(of: Array(#""seq":"#.utf8)) == nil ? .none : key)
            _ = try line.withUnsafeBytes {
                try parser.parse($0, lineNumber: number + 1, receivedAt: 1_763_715_600_000_000 + Int64(number), peer: peer, into: &batch)
            }
            if batch.count == 150 {
                _ = try log.append(batch)
                batch.removeAll()
            }
        }
        _ = try log.append(batch)
        try log.close()
        return lines.count
    }
}
