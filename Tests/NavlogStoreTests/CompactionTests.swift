import Foundation
import NavlogEvents
import NavlogTesting
import Testing

@testable import NavlogStore

/// Log compaction (issue 14): sealed segments written a block per fsync (durable mode) are
/// written again with full blocks, with every event as it was, and a crash at any step leaves
/// a log holding every event once.
@Suite("Compaction of sealed segments with small blocks")
struct CompactionTests {
    /// A log the way durable clients leave it: a flush (a block) every few events, segments of
    /// 64 KiB sealed as they fill.
    static func durableLog(_ directory: String, events: Int = 6000) throws -> [String] {
        var options = LogOptions()
        options.maximumSegmentBytes = 64 << 10
        let log = try EventLog(directory: directory, options: options)
        let lines = StoreFixture.lines(events, seed: 21)
        var start = 0
        var step = 1
        while start < lines.count {
            let end = min(lines.count, start + step)
            _ = try log.append(StoreFixture.batch(Array(lines[start..<end]), receivedAt: 1_763_720_000_000_000 + Int64(start) * 1000))
            _ = try log.flush()
            start = end
            step = step % 7 + 1
        }
        try log.close()
        return try StoreFixture.catLines(directory).lines
    }

    /// The bytes of every segment file of the log.
    static func segmentBytes(_ path: String) throws -> Int {
        try StoreFixture.segmentFiles(path).reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: path + "/" + $1)[.size] as! Int) }
    }

    static var compactionOptions: LogOptions {
        var options = LogOptions()
        options.maximumSegmentBytes = 64 << 10
        return options
    }

    @Test("every sealed segment with small blocks is written again with full blocks: the same events, fewer bytes, a clean verify")
    func compactsWithEveryEventIntact() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.path
            let before = try Self.durableLog(path)
            let bytesBefore = try Self.segmentBytes(path)
            let reader = try LogReader(directory: path)
            let candidates = SegmentCompaction.candidates(reader, options: Self.compactionOptions)
            let sealed = reader.segments.filter(\.sealed).count
            #expect(sealed >= 3)
            #expect(candidates.count == sealed, "every sealed segment has blocks of ~4 events")
            let log = try EventLog(directory: path, options: Self.compactionOptions)
            for name in candidates {
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: Self.compactionOptions))
                #expect(copy.compactedBlocks == 1 && copy.originalBlocks > 100, "\(copy)")
                #expect(copy.compactedBytes * 2 < copy.originalBytes, "\(copy)")
                #expect(try log.install(copy))
            }
            try log.close()
            let after = try StoreFixture.catLines(path)
            #expect(after.damage.isEmpty)
            #expect(after.lines == before, "every event, LSN, receive time and peer as it was")
            let bytesAfter = try Self.segmentBytes(path)
            #expect(bytesAfter * 2 < bytesBefore, "\(bytesBefore) → \(bytesAfter) bytes")
            #expect(SegmentCompaction.candidates(try LogReader(directory: path), options: Self.compactionOptions).isEmpty, "nothing left to compact")
            let report = try LogVerifier.verify(directory: path)
            #expect(report.isClean, "\(report)")
            #expect(!FileManager.default.fileExists(atPath: path + "/compaction"), "no working files left")
        }
    }

    @Test("a sealed segment written below the sealed level is written again at it: the same events and blocks, fewer bytes, the level recorded in headers and index")
    func recompressesBelowTheSealedLevel() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.path
            // Full blocks (500 events each) at level 3: only the level makes them candidates.
            var writer = LogOptions()
            writer.maximumSegmentBytes = 64 << 10
            writer.maximumEventsPerBlock = 500
            writer.compressionLevel = 3
            let log = try EventLog(directory: path, options: writer)
            let lines = StoreFixture.lines(20000, seed: 5)
            for start in stride(from: 0, to: lines.count, by: 500) {
                _ = try log.append(StoreFixture.batch(Array(lines[start..<(start + 500)]), receivedAt: 1_763_720_000_000_000 + Int64(start) * 997))
                _ = try log.flush()
            }
            try log.close()
            let before = try StoreFixture.catLines(path).lines
            let reader = try LogReader(directory: path)
            let sealed = reader.segments.filter(\.sealed)
            #expect(sealed.count >= 2)
            #expect(sealed.allSatisfy { $0.compressionLevel == 3 }, "\(sealed.map(\.compressionLevel))")
            var keepLevel = writer
            keepLevel.sealedCompressionLevel = nil
            #expect(SegmentCompaction.candidates(reader, options: keepLevel).isEmpty, "full blocks: nothing to compact without a sealed level")
            var options = writer
            options.sealedCompressionLevel = 19
            let candidates = SegmentCompaction.candidates(reader, options: options)
            #expect(candidates == sealed.map(\.name))
            let compactor = try EventLog(directory: path, options: options)
            for name in candidates {
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: options))
                #expect(copy.compactedBlocks == copy.originalBlocks, "blocks were full: \(copy)")
                #expect(copy.compactedBytes < copy.originalBytes, "\(copy)")
                #expect(try compactor.install(copy))
            }
            try compactor.close()
            #expect(try StoreFixture.catLines(path).lines == before, "every event, LSN, receive time and peer as it was")
            let after = try LogReader(directory: path)
            #expect(after.segments.filter(\.sealed).allSatisfy { $0.compressionLevel == 19 }, "from the installed indexes")
            #expect(SegmentCompaction.candidates(after, options: options).isEmpty, "written once, not again")
            // An index rebuilt from the segment (lost, or from an older navlog) finds the level in
            // the block headers.
            let first = try #require(SegmentName.baseLSN(ofSegment: candidates[0]))
            try FileManager.default.removeItem(atPath: path + "/" + SegmentName.index(first))
            let rebuilt = try LogReader(directory: path)
            #expect(rebuilt.segments.first { $0.name == candidates[0] }?.compressionLevel == 19)
            #expect(try LogVerifier.verify(directory: path).isClean)
            // An index whose level disagrees with its blocks' (its checksum intact) is reported:
            // compaction would go by it.
            let indexPath = path + "/" + SegmentName.index(first)
            var index = try #require(SegmentIndex.decode(Array(try Data(contentsOf: URL(fileURLWithPath: indexPath)))))
            index.compressionLevel = 3
            try Data(index.encode()).write(to: URL(fileURLWithPath: indexPath))
            let report = try LogVerifier.verify(directory: path)
            #expect(report.problems.count == 1)
            #expect(report.problems.first?.reason.contains("compressed at zstd level 3 where the lowest of their headers says 19") == true, "\(report.problems)")
        }
    }

    @Test("a crash at any step of a compaction leaves every event exactly once")
    func crashAtEveryStep() throws {
        // The steps: the copy being written (a partial copy in compaction/), the copy written and
        // fsynced but not installed, the segment renamed but not its index.
        for step in 0..<3 {
            try TestEnvironment.withTemporaryDirectory { dir in
                let path = dir.path
                let before = try Self.durableLog(path, events: 3000)
                let reader = try LogReader(directory: path)
                let name = try #require(SegmentCompaction.candidates(reader, options: Self.compactionOptions).first)
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: Self.compactionOptions))
                let work = path + "/compaction/" + name
                switch step {
                case 0:
                    // Half a copy: cut the copied segment in the middle of a block.
                    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: work + "/" + name))
                    try file.truncate(atOffset: UInt64(copy.compactedBytes / 2))
                    try file.close()
                case 1:
                    break
                default:
                    // The copy renamed over the segment; the crash came before its index moved.
                    #expect(rename(work + "/" + name, path + "/" + name) == 0)
                }
                // The next writer (navlogd restarting) recovers.
                let log = try EventLog(directory: path, options: Self.compactionOptions)
                try log.close()
                #expect(!FileManager.default.fileExists(atPath: path + "/compaction"), "step \(step): unfinished copies removed")
                let after = try StoreFixture.catLines(path)
                #expect(after.damage.isEmpty, "step \(step): \(after.damage)")
                #expect(after.lines == before, "step \(step): every event once")
                #expect(try LogVerifier.verify(directory: path).isClean, "step \(step)")
            }
        }
    }

    @Test("a reader that catalogued a segment before it was compacted reads on from the file it catalogued; one holding no file says so instead of reporting damage")
    func readerOfTheOldFile() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.path
            let before = try Self.durableLog(path, events: 3000)
            let early = try LogReader(directory: path)
            let unheld = try LogReader(directory: path, maximumHeldSegments: 0)
            let name = try #require(SegmentCompaction.candidates(early, options: Self.compactionOptions).first)
            let number = try #require(early.segments.firstIndex { $0.name == name })
            let oldBlocks = early.segments[number].blocks.count
            #expect(oldBlocks > 2)
            // The writer is open first (opening one removes unfinished copies), as in navlogd.
            let log = try EventLog(directory: path, options: Self.compactionOptions)
            let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: early, options: Self.compactionOptions))
            #expect(try log.install(copy))
            try log.close()
            var decoded = DecodedBlock()
            // The reader holding the file it catalogued reads every block of it, old layout and all.
            for block in 0..<oldBlocks { #expect(try early.readBlock(segment: number, block: block, into: &decoded)) }
            var stored: [String] = []
            try early.scan(LogQuery()) { block, position in
                var line: [UInt8] = []
                try block.appendJSONLine(position, to: &line)
                stored.append(String(decoding: line.dropLast(), as: UTF8.self))
                return true
            }
            #expect(stored == before)
            #expect(early.damage.isEmpty)
            // One that holds no file finds another file at the path and says so.
            do {
                _ = try unheld.readBlock(segment: number, block: 1, into: &decoded)
                Issue.record("reading a block of a segment written again did not fail")
            } catch let error as StoreError {
                #expect(error.code == .changed && error.message.contains("run the command again"), "\(error.message)")
            }
            #expect(unheld.damage.isEmpty, "no damage reported for a compacted segment")
            for reader in [early, unheld] {
                try reader.refresh()
                #expect(reader.segments[number].blocks.count == 1)
            }
            #expect(try StoreFixture.catLines(path).lines == before)
        }
    }

    @Test("a copy whose segment changed or went meanwhile is not installed")
    func staleCopyIsDropped() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.path
            _ = try Self.durableLog(path, events: 3000)
            let reader = try LogReader(directory: path)
            let name = try #require(SegmentCompaction.candidates(reader, options: Self.compactionOptions).first)
            let log = try EventLog(directory: path, options: Self.compactionOptions)
            let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: Self.compactionOptions))
            // Retention deleted the segment while it was copied.
            try FileManager.default.removeItem(atPath: path + "/" + name)
            #expect(try !log.install(copy))
            #expect(!FileManager.default.fileExists(atPath: path + "/compaction"), "the copy is dropped")
            try log.close()
            #expect(!FileManager.default.fileExists(atPath: path + "/" + name), "the deleted segment does not come back")
        }
    }
}
