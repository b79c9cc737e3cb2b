import Foundation
import NavlogEvents
import NavlogTesting
import NavlogWorkload
import Testing

@testable import NavlogStore

@Suite("The log survives damage")
struct RecoveryTests {
    /// Block boundaries of a segment (end offsets), from a scan.
    static func blockEnds(_ path: String) throws -> [(end: Int, lastLSN: UInt64)] {
        let file = try StoreFile(path: path, writable: false)
        return try BlockScanner.scan(file, verifyFrames: true).blocks.map { ($0.end, $0.header.lastLSN) }
    }

    @Test("garbage written over the tail: exactly the valid prefix survives and LSNs continue", arguments: 0..<10)
    func garbageTail(trial: Int) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = StoreFixture.smallOptions
            options.maximumSegmentBytes = 1 << 30
            let lines = StoreFixture.lines(1200, seed: UInt64(100 + trial))
            try StoreFixture.write(lines, to: dir.path, options: options)
            let name = try StoreFixture.segmentFiles(dir.path)[0]
            let path = dir.appendingPathComponent(name).path
            let ends = try Self.blockEnds(path)
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            var random = SplitMix64(seed: UInt64(trial))
            let cut = Int.random(in: 0..<bytes.count, using: &random)
            for index in cut..<bytes.count { bytes[index] = UInt8.random(in: 0...255, using: &random) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let survivors = Int(ends.last(where: { $0.end <= cut })?.lastLSN ?? 0)

            let log = try EventLog(directory: dir.path, options: options)
            #expect(log.recovery.truncatedBytes == bytes.count - (ends.last(where: { $0.end <= cut })?.end ?? 0) || survivors == 0)
            #expect(log.nextLSN == UInt64(survivors) + 1)
            let (stored, damage) = try StoreFixture.catLines(dir.path)
            #expect(damage.isEmpty)
            #expect(stored.count == survivors)
            let expected = try StoreFixture.catLinesOfFreshLog(lines: Array(lines.prefix(survivors)), options: options)
            #expect(stored == expected, "the surviving events are exactly the first \(survivors)")
            // The log keeps working: new events follow with the next LSNs.
            let range = try log.append(StoreFixture.batch(Array(lines.prefix(10))))
            #expect(range == UInt64(survivors + 1)..<UInt64(survivors + 11))
            try log.close()
            #expect(try LogVerifier.verify(directory: dir.path).isClean)
        }
    }

    @Test("single bit flips across a sealed segment are reported or harmless, never a crash or hang", .timeLimit(.minutes(5)))
    func bitFlipSweep() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = StoreFixture.smallOptions
            options.maximumSegmentBytes = 1 << 30
            try StoreFixture.write(StoreFixture.lines(600, seed: 3), to: dir.path, options: options, seal: true)
            let name = try StoreFixture.segmentFiles(dir.path)[0]
            let url = dir.appendingPathComponent(name)
            let original = try [UInt8](Data(contentsOf: url))
            let reference = try StoreFixture.catLines(dir.path).lines
            let flips = 512
            var reported = 0, intact = 0
            for flip in 0..<flips {
                let bit = (flip * 7919 + 13) % (original.count * 8)
                var damaged = original
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                try Data(damaged).write(to: url)
                let report = try LogVerifier.verify(directory: dir.path)
                let (lines, damage) = try StoreFixture.catLines(dir.path)
                if !report.isClean {
                    reported += 1
                    // What cat still returns is a subsequence of the original events, in order...
                    var position = reference.startIndex
                    let inOrder = lines.allSatisfy { line in
                        guard let found = reference[position...].firstIndex(of: line) else { return false }
                        position = found + 1
                        return true
                    }
                    #expect(inOrder, "bit \(bit): cat returned an event that was not stored, or out of order")
                    // ...and anything it leaves out, it says it left out.
                    #expect(lines == reference || !damage.isEmpty, "bit \(bit): cat lost events without reporting damage")
                } else {
                    intact += 1
                    #expect(lines == reference, "bit \(bit): verify says clean, so the data must read back intact")
                }
            }
            #expect(reported > flips / 2, "flips in checksummed bytes are reported (\(reported) of \(flips); \(intact) harmless)")
            try Data(original).write(to: url)
        }
    }

    @Test("a deleted or garbled index is rebuilt and cat output is identical")
    func indexRebuild() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(3000, seed: 5), to: dir.path, seal: true)
            let reference = try StoreFixture.catLines(dir.path).lines
            let session = try JSONSerialization.jsonObject(with: Data(reference[2000].utf8)) as! [String: Any]
            let sessionReference = try StoreFixture.catLines(dir.path, LogQuery(session: session["session"] as? String)).lines
            let indexes = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".idx") }.sorted()
            #expect(indexes.count > 3)
            let garbles: [(String, ([UInt8]) -> [UInt8])] = [
                ("deleted", { _ in [] }),
                ("truncated", { Array($0.prefix($0.count / 2)) }),
                (
                    "bit flipped",
                    {
                        var b = $0; b[b.count / 2] ^= 0x10; return b
                    }
                ),
                ("zeroed", { [UInt8](repeating: 0, count: $0.count) }),
                ("another segment's", { _ in [] }),
            ]
            for (how, garble) in garbles {
                let contents = try indexes.map { try Data(contentsOf: dir.appendingPathComponent($0)) }
                for (position, index) in indexes.enumerated() {
                    let url = dir.appendingPathComponent(index)
                    if how == "deleted" {
                        try FileManager.default.removeItem(at: url)
                    } else if how == "another segment's" {
                        // A well-formed index with a valid checksum, but for a different segment.
                        try contents[(position + 1) % indexes.count].write(to: url)
                    } else {
                        try Data(garble([UInt8](contents[position]))).write(to: url)
                    }
                }
                if how != "deleted" {
                    #expect(!(try LogVerifier.verify(directory: dir.path).isClean), "verify reports the \(how) indexes")
                }
                #expect(try StoreFixture.catLines(dir.path).lines == reference, "index \(how)")
                #expect(try StoreFixture.catLines(dir.path, LogQuery(session: session["session"] as? String)).lines == sessionReference, "session seek with index \(how)")
                #expect(try LogVerifier.verify(directory: dir.path).isClean, "the rebuilt indexes (\(how)) agree with their segments")
            }
        }
    }

    @Test("damage in the middle of the active segment sets it aside instead of cutting valid blocks")
    func middleDamageSetsAside() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = StoreFixture.smallOptions
            options.maximumSegmentBytes = 1 << 30
            try StoreFixture.write(StoreFixture.lines(640), to: dir.path, options: options)
            let name = try StoreFixture.segmentFiles(dir.path)[0]
            let url = dir.appendingPathComponent(name)
            let ends = try Self.blockEnds(url.path)
            var bytes = try [UInt8](Data(contentsOf: url))
            bytes[ends[2].end + 200] ^= 0xFF  // inside block 4's data, blocks 5... stay valid
            try Data(bytes).write(to: url)
            let log = try EventLog(directory: dir.path, options: options)
            #expect(log.recovery.setAside == [name])
            #expect(log.nextLSN == 641, "LSNs of the set-aside segment are not reused")
            try log.append(StoreFixture.batch(StoreFixture.lines(5)))
            try log.close()
            #expect(FileManager.default.fileExists(atPath: url.path + ".damaged"))
            let report = try LogVerifier.verify(directory: dir.path)
            #expect(!report.isClean, "verify keeps pointing at the set-aside segment")
            #expect(report.problems.contains { $0.path.hasSuffix(".damaged") })
        }
    }
}

extension StoreFixture {
    /// What cat prints for `lines` written to a fresh log (receive times and LSNs line up).
    static func catLinesOfFreshLog(lines: [[UInt8]], options: LogOptions) throws -> [String] {
        try TestEnvironment.withTemporaryDirectory { dir in
            try write(lines, to: dir.path, options: options)
            return try catLines(dir.path).lines
        }
    }
}
