import Foundation
import NavlogEvents
import NavlogTesting
import Synchronization
import Testing

@testable import NavlogStore

@Suite("The log stores and returns events")
struct EventLogTests {
    @Test("cat gives back every stored event, in order, across blocks and segments")
    func roundTripAcrossSegments() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = StoreFixture.lines(3000)
            try StoreFixture.write(lines, to: dir.path)
            #expect(try StoreFixture.segmentFiles(dir.path).count > 3)
            let (stored, damage) = try StoreFixture.catLines(dir.path)
            #expect(damage.isEmpty)
            #expect(stored.count == lines.count)
            // Each stored line is the input line plus the trusted fields at the end.
            for (index, (input, output)) in zip(lines, stored).enumerated() {
                let original = try JSONSerialization.jsonObject(with: Data(input)) as! [String: Any]
                var back = try JSONSerialization.jsonObject(with: Data(output.utf8)) as! [String: Any]
                #expect(back.removeValue(forKey: "_lsn") as? Int == index + 1)
                for key in ["_recv", "_uid", "_gid", "_pid"] { #expect(back.removeValue(forKey: key) != nil) }
                let canonical = { (value: Any) in String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self) }
                #expect(try canonical(back) == canonical(original), "line \(index + 1) differs")
            }
        }
    }

    @Test("a block read without its bodies has the same types, sessions, times and seqs (what body-less scans such as SQL counts read)")
    func blocksWithoutBodies() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(3000), to: dir.path)
            let reader = try LogReader(directory: dir.path)
            var full = DecodedBlock()
            var bare = DecodedBlock()
            var blocks = 0
            for (segment, block) in reader.blocks(matching: LogQuery()) {
                #expect(try reader.readBlock(segment: segment, block: block, into: &full))
                #expect(try reader.readBlock(segment: segment, block: block, into: &bare, locatingBodies: false))
                #expect(full.bodiesLocated && !bare.bodiesLocated)
                #expect(bare.count == full.count && bare.types == full.types && bare.timestamps == full.timestamps)
                #expect(bare.sequencesPlusOne == full.sequencesPlusOne && bare.receiveTimes == full.receiveTimes)
                for position in 0..<bare.count {
                    #expect(bare.withSession(position) { Array($0) } == full.withEvent(position) { _, session, _ in Array(session) })
                }
                blocks += 1
            }
            #expect(blocks > 3)
            // Reused for a full read, the block locates its bodies again.
            #expect(try reader.readBlock(segment: 0, block: 0, into: &bare))
            #expect(try reader.readBlock(segment: 0, block: 0, into: &full))
            #expect(bare.bodiesLocated && bare.bodyStarts == full.bodyStarts)
        }
    }

    @Test("a segment whose index cannot be written still seals, and the append that filled it does not fail (its events would be stored twice)")
    func sealWithoutIndex() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = LogOptions()
            options.maximumSegmentBytes = 8 << 10
            options.maximumEventsPerBlock = 100
            let log = try EventLog(directory: dir.path, options: options)
            // The first segment's index cannot be renamed into place: a directory has its name.
            try FileManager.default.createDirectory(atPath: dir.path + "/" + SegmentName.index(1), withIntermediateDirectories: false)
            let lines = StoreFixture.lines(2000)
            for start in stride(from: 0, to: lines.count, by: 100) {
                let stored = try log.append(StoreFixture.batch(Array(lines[start..<(start + 100)])))
                #expect(stored.count == 100)
                _ = try log.flush()
            }
            try log.close()
            let reader = try LogReader(directory: dir.path)
            #expect(reader.segments.filter(\.sealed).count >= 2, "the segment sealed and the next ones too")
            let (stored, damage) = try StoreFixture.catLines(dir.path)
            #expect(damage.isEmpty && stored.count == lines.count, "every event once")
            #expect(try LogVerifier.verify(directory: dir.path).problems.allSatisfy { "\($0)".contains(SegmentName.index(1)) })
        }
    }

    @Test("files replaced at once by two threads (a reader rebuilding a segment index as the writer seals it) never fail and leave no temporary")
    func concurrentReplace() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.path + "/" + SegmentName.index(1)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                for round in 0..<300 {
                    do { try DurableFile.replace(path, with: Array(repeating: UInt8(thread), count: 1000 + round)) } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [SegmentName.index(1)])
            // A temporary left by a writer that is gone is removed when the log is opened.
            let abandoned = dir.path + "/" + SegmentName.index(1) + ".tmp.999999999.1"
            #expect(FileManager.default.createFile(atPath: abandoned, contents: Data([1])))
            try EventLog(directory: dir.path).close()
            #expect(!FileManager.default.fileExists(atPath: abandoned))
        }
    }

    @Test("LSNs continue across restarts and are never reused")
    func lsnsContinueAcrossRestarts() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = StoreFixture.lines(500)
            var seen: [UInt64] = []
            for round in 0..<3 {
                let log = try EventLog(directory: dir.path, options: StoreFixture.smallOptions)
                let range = try log.append(StoreFixture.batch(Array(lines[(round * 100)..<(round * 100 + 100)])))
                seen.append(contentsOf: range)
                if round == 1 { try log.seal() }
                try log.close()
            }
            #expect(seen == Array(1...300))
            let report = try LogVerifier.verify(directory: dir.path)
            #expect(report.isClean, "\(report.problems)")
            #expect(report.events == 300)
        }
    }

    @Test("a second writer is refused while the first holds the directory")
    func singleWriter() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let first = try EventLog(directory: dir.path)
            #expect(throws: StoreError.self) { _ = try EventLog(directory: dir.path) }
            do {
                _ = try EventLog(directory: dir.path)
            } catch let error as StoreError {
                #expect(error.code == .locked)
                #expect(error.message.contains("Another process"))
            }
            try first.close()
        }
    }

    @Test("a scan that reads no bodies (LogQuery.readsBodies false) gives every event's LSN, type, time, seq and session as a full scan, also by session")
    func scanWithoutBodies() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(3000), to: dir.path)
            let reader = try LogReader(directory: dir.path)
            func headers(_ query: LogQuery) throws -> [String] {
                var rows: [String] = []
                try reader.scan(query) { block, index in
                    let session = block.withSession(index) { String(decoding: $0, as: UTF8.self) }
                    rows.append("\(block.lsn(index)) \(block.types[index].name) \(block.timestamps[index]) \(block.sequence(index) ?? 0) \(session)")
                    return true
                }
                return rows
            }
            var bare = LogQuery()
            bare.readsBodies = false
            let full = try headers(LogQuery())
            #expect(full.count == 3000)
            #expect(try headers(bare) == full)
            let session = String(full[1234].split(separator: " ")[4])
            bare.session = session
            let bySession = try headers(bare)
            #expect(bySession == full.filter { $0.hasSuffix(" " + session) } && bySession.count > 3)
        }
    }

    @Test("queries by session, time and type return exactly the matching events")
    func queries() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = StoreFixture.lines(4000, seed: 11)
            var options = StoreFixture.smallOptions
            options.maximumSegmentBytes = 64 << 10
            try StoreFixture.write(lines, to: dir.path, options: options, seal: true)
            let all = try StoreFixture.catLines(dir.path).lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            let session = all[1234]["session"] as! String
            let bySession = try StoreFixture.catLines(dir.path, LogQuery(session: session)).lines
            #expect(bySession.count == all.filter { $0["session"] as? String == session }.count)
            #expect(bySession.count > 3)
            let times = all.map { $0["ts"] as! Int64 }.sorted()
            let since = times[times.count / 3], until = times[2 * times.count / 3]
            let byTime = try StoreFixture.catLines(dir.path, LogQuery(since: since, until: until)).lines
            #expect(byTime.count == all.filter { ($0["ts"] as! Int64) >= since && ($0["ts"] as! Int64) <= until }.count)
            let pushes = try StoreFixture.catLines(dir.path, LogQuery(types: [.navPush, .present])).lines
            #expect(pushes.count == all.filter { ["nav.push", "present"].contains($0["type"] as! String) }.count)
            #expect(pushes.count > 0)
        }
    }

    @Test("retention deletes whole sealed segments, oldest first, by size and by age")
    func retention() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(3000), to: dir.path, seal: true)
            let before = try StoreFixture.segmentFiles(dir.path)
            var options = StoreFixture.smallOptions
            options.retentionBytes = 40 << 10
            let log = try EventLog(directory: dir.path, options: options)
            let after = try StoreFixture.segmentFiles(dir.path)
            #expect(after.count < before.count)
            #expect(Array(before.suffix(after.count)) == after, "the newest segments are kept")
            // Whatever remains still reads and verifies (a gap at the start is not damage).
            let remaining = try StoreFixture.catLines(dir.path)
            #expect(remaining.damage.isEmpty)
            #expect(remaining.lines.count > 0 && remaining.lines.count < 3000)
            try log.close()
            var aged = StoreFixture.smallOptions
            aged.retentionAge = 1_000_000
            let agedLog = try EventLog(directory: dir.path, options: aged)
            #expect(try StoreFixture.segmentFiles(dir.path).isEmpty, "every sealed segment is older than 1 s")
            #expect(agedLog.nextLSN == 3001, "LSNs are not reused after retention")
            try agedLog.close()
        }
    }

    @Test("a sealed segment is a zstd seekable file that zstd -d reads")
    func sealedSegmentIsPlainZstd() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(700), to: dir.path, options: LogOptions(), seal: true)
            let segment = dir.appendingPathComponent(try StoreFixture.segmentFiles(dir.path)[0])
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/zstd"), ["-d", "-c", segment.path])
            #expect(result.status == 0, "\(result.errorOutput)")
            // The seek table lists every block; the decompressed sizes add up to zstd's output.
            let bytes = try [UInt8](Data(contentsOf: segment))
            let table = bytes.withUnsafeBytes { raw -> SeekTable? in
                let count = SeekTable.frameCount(footer: UnsafeRawBufferPointer(rebasing: raw[(raw.count - 9)...]))!
                return SeekTable.decode(UnsafeRawBufferPointer(rebasing: raw[(raw.count - 8 - count * 8 - 9)...]), frameCount: count)
            }
            let entries = try #require(table).entries
            #expect(entries.reduce(0) { $0 + Int($1.decompressedSize) } == result.standardOutput.count)
            #expect(entries.reduce(0) { $0 + Int($1.compressedSize) } + 8 + entries.count * 8 + 9 == bytes.count)
        }
    }

    @Test("a reader refreshed while the writer goes on sees every new event, once")
    func readerRefresh() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = StoreFixture.lines(3000, seed: 61)
            let log = try EventLog(directory: dir.path, options: StoreFixture.smallOptions)
            try log.append(StoreFixture.batch(Array(lines[0..<1000])))
            try log.flush()
            let reader = try LogReader(directory: dir.path)
            #expect(reader.eventCount == 1000)
            for round in 1..<3 {
                try log.append(StoreFixture.batch(Array(lines[(round * 1000)..<(round * 1000 + 1000)])))
                try log.flush()
                try reader.refresh()
                #expect(reader.eventCount == (round + 1) * 1000)
                var seen = 0
                try reader.scan(LogQuery()) { _, _ in
                    seen += 1
                    return true
                }
                #expect(seen == (round + 1) * 1000)
            }
            #expect(reader.damage.isEmpty)
            try log.close()
        }
    }
}
