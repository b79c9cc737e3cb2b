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

    /// A log of 640 events in one unsealed segment (small blocks), its reference output, its
    /// segment's path and block ends; `damage` changes the segment's bytes; then the log is
    /// opened again (recovery), 5 events appended, and closed.
    static func damageAndRestart(
        _ damage: (inout [UInt8], [(end: Int, lastLSN: UInt64)]) -> Void
    ) throws -> (reference: [String], after: (lines: [String], damage: [SegmentDamage]), recovery: RecoveryReport, directory: [String], verify: [String]) {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = StoreFixture.smallOptions
            options.maximumSegmentBytes = 1 << 30
            try StoreFixture.write(StoreFixture.lines(640), to: dir.path, options: options)
            let reference = try StoreFixture.catLines(dir.path).lines
            let name = try StoreFixture.segmentFiles(dir.path)[0]
            let url = dir.appendingPathComponent(name)
            var bytes = try [UInt8](Data(contentsOf: url))
            damage(&bytes, try Self.blockEnds(url.path))
            try Data(bytes).write(to: url)
            let log = try EventLog(directory: dir.path, options: options)
            let recovery = log.recovery
            try log.append(StoreFixture.batch(StoreFixture.lines(5, seed: 99)))
            try log.close()
            let after = try StoreFixture.catLines(dir.path)
            let verify = try LogVerifier.verify(directory: dir.path).problems.map(\.description)
            return (reference, after, recovery, try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), verify)
        }
    }

    @Test("a flipped bit in the last block's data is corrected at restart: every event kept, verify clean")
    func bitFlipInLastBlockData() throws {
        for position in [40, 700, 1500] {
            let result = try Self.damageAndRestart { bytes, ends in
                let start = ends[ends.count - 2].end
                bytes[min(start + position, ends.last!.end - 5)] ^= 0x10
            }
            #expect(result.recovery.repaired.count == 1, "\(result.recovery)")
            #expect(Array(result.after.lines.prefix(640)) == result.reference, "no acknowledged event is cut")
            #expect(result.after.lines.count == 645 && result.after.damage.isEmpty)
            #expect(result.verify.isEmpty, "\(result.verify)")
        }
    }

    @Test("a flipped bit in the last block's header is corrected at restart")
    func bitFlipInLastBlockHeader() throws {
        for position in [12, 30, 60] {
            let result = try Self.damageAndRestart { bytes, ends in bytes[ends[ends.count - 2].end + position] ^= 0x04 }
            #expect(result.recovery.repaired.count == 1, "byte \(position): \(result.recovery)")
            #expect(Array(result.after.lines.prefix(640)) == result.reference)
            #expect(result.verify.isEmpty, "\(result.verify)")
        }
    }

    @Test("damage in a middle block that cannot be corrected costs that block only: quarantined, every other block kept")
    func middleDamageCostsOnlyTheBlock() throws {
        let result = try Self.damageAndRestart { bytes, ends in bytes[ends[2].end + 200] ^= 0xFF }  // 8 bits in block 4's data
        #expect(result.recovery.rewritten.count == 1)
        #expect(result.directory.contains { $0.contains(".quarantine-") }, "the damaged block's bytes are kept: \(result.directory)")
        let lost = result.reference.count - (result.after.lines.count - 5)
        #expect(lost > 0 && lost < 100, "only the damaged block's events are missing (\(lost))")
        #expect(Set(result.after.lines.prefix(result.reference.count - lost)).isSubset(of: Set(result.reference)))
        #expect(!result.verify.isEmpty, "verify keeps saying events are missing: \(result.verify)")
    }

    @Test("a copy of the last block appended after a clean stop is recognised: nothing read twice")
    func copiedLastBlock() throws {
        let result = try Self.damageAndRestart { bytes, ends in
            let last = ends[ends.count - 2].end..<ends.last!.end
            bytes.append(contentsOf: bytes[last])
        }
        #expect(Array(result.after.lines.prefix(640)) == result.reference)
        #expect(result.after.lines.count == 645, "each event once")
        #expect(result.directory.contains { $0.contains(".quarantine-") }, "the copy is quarantined, not deleted")
        #expect(result.verify.isEmpty, "\(result.verify)")
    }

    @Test("100 random bytes before a valid block cost only those bytes")
    func garbageBeforeValidBlock() throws {
        let result = try Self.damageAndRestart { bytes, ends in
            var random = SystemRandomNumberGenerator()
            let garbage = (0..<100).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes.insert(contentsOf: garbage, at: ends[3].end)
        }
        #expect(Array(result.after.lines.prefix(640)) == result.reference, "every event survives")
        #expect(result.after.lines.count == 645)
        #expect(result.recovery.rewritten.count == 1)
        #expect(result.directory.contains { $0.contains(".quarantine-") })
        #expect(result.verify.isEmpty, "\(result.verify)")
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
