import Foundation
import NavlogEvents
import NavlogTesting
import NavlogWorkload
import Testing

@testable import NavlogStore

/// Grouped blocks (block format 2, payload version 4, and 3 as written before it): a block's sessions split into groups,
/// each compressed on its own, so that a reader of one session decompresses one group.
@Suite("Grouped blocks")
struct GroupedBlockTests {
    /// Production's shape (560 sessions live, mixed recording styles), so that every group holds
    /// many sessions.
    static func lines(_ count: Int) -> [[UInt8]] {
        var generator = WorkloadGenerator(.production(seed: 31))
        return generator.lines(count)
    }

    /// Blocks of 2,048 events in 8 groups of 256, or (`grouped` false) in one frame.
    static func options(grouped: Bool) -> LogOptions {
        var options = LogOptions()
        options.maximumEventsPerBlock = 2048
        options.eventsPerSessionGroup = grouped ? 256 : .max
        return options
    }

    /// Copies the log `Tests/Fixtures/format-v3/<name>` (grouped payloads as navlog wrote them
    /// before version 4: a session number per event in the spine; it no longer writes them) to
    /// `directory`, and returns the lines it was written from, when the fixture has them.
    static func copyVersion3Log(_ name: String, to directory: String) throws -> [[UInt8]] {
        let fixture = TestEnvironment.fixture("format-v3/" + name)
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent("log").path, toPath: directory)
        let lines = fixture.appendingPathComponent("lines.jsonl.zst").path
        guard FileManager.default.fileExists(atPath: lines) else { return [] }
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/zstd"), ["-d", "-c", lines])
        #expect(result.status == 0, "\(result.errorOutput)")
        return result.standardOutput.split(separator: UInt8(ascii: "\n")).map(Array.init)
    }

    /// The grouped log of `count` lines of ``lines(_:)``, written at `directory` (payload
    /// version 4), or the version-3 fixture of 4,996 of them copied there.
    static func groupedLog(_ count: Int, version3: Bool, at directory: String) throws -> [[UInt8]] {
        if version3 {
            let lines = try copyVersion3Log("grouped-4996", to: directory)
            #expect(lines.count == 4_996)
            return lines
        }
        let lines = Self.lines(count)
        try StoreFixture.write(lines, to: directory, options: Self.options(grouped: true), seal: true)
        return lines
    }

    /// The block headers of every segment of the log in `directory`.
    static func headers(_ directory: String) throws -> [BlockHeader] {
        let reader = try LogReader(directory: directory)
        var headers: [BlockHeader] = []
        for segment in reader.segments.indices {
            for block in reader.segments[segment].blocks.indices {
                let path = directory + "/" + reader.segments[segment].name
                let file = try StoreFile(path: path, writable: false)
                headers.append(try #require(try reader.verifiedLocation(file, reader.catalogs[segment], block)).header)
            }
        }
        return headers
    }

    @Test("a spine level of its own changes the spine frames only: the group frames are the same bytes and every event reads the same")
    func spineLevel() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = Self.lines(8_500)
            let same = dir.appendingPathComponent("same").path, own = dir.appendingPathComponent("own").path
            var options = Self.options(grouped: true)
            options.compressionLevel = 19
            try StoreFixture.write(lines, to: same, options: options, seal: true)
            options.spineCompressionLevel = 1
            try StoreFixture.write(lines, to: own, options: options, seal: true)
            let sameHeaders = try Self.headers(same).filter { $0.groupCount > 0 }, ownHeaders = try Self.headers(own).filter { $0.groupCount > 0 }
            #expect(sameHeaders.count == 4 && ownHeaders.count == 4)
            for (a, b) in zip(sameHeaders, ownHeaders) {
                #expect(a.frames.dropFirst() == b.frames.dropFirst(), "group frames at level 19 in both")
                #expect(a.frames[0].payloadSize == b.frames[0].payloadSize && a.frames[0].size < b.frames[0].size, "the spine at level 1 is larger")
                #expect(b.compressionLevel == 19, "the header records the groups' level")
            }
            #expect(try StoreFixture.catLines(own).lines == (try StoreFixture.catLines(same).lines))
        }
    }

    @Test(
        "a grouped log gives back every event exactly as a log of one-frame blocks does (payload version 4, and 3 as written before it)",
        arguments: [false, true])
    func sameEventsAsOneFrame(version3: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let grouped = dir.appendingPathComponent("grouped").path, single = dir.appendingPathComponent("single").path
            let lines = try Self.groupedLog(8_500, version3: version3, at: grouped)
            try StoreFixture.write(lines, to: single, options: Self.options(grouped: false), seal: true)
            let groupedHeaders = try Self.headers(grouped)
            #expect(groupedHeaders.filter { $0.eventCount == 2048 }.allSatisfy { $0.groupCount == 8 })
            if version3 {
                #expect(groupedHeaders.map(\.groupCount) == [8, 8, 2])
            } else {
                #expect(groupedHeaders.last!.groupCount == 0, "the last block (\(groupedHeaders.last!.eventCount) events, under two groups) keeps one frame")
            }
            #expect(try Self.headers(single).allSatisfy { $0.frames.isEmpty })
            let (fromGrouped, groupedDamage) = try StoreFixture.catLines(grouped)
            let (fromSingle, singleDamage) = try StoreFixture.catLines(single)
            #expect(groupedDamage.isEmpty && singleDamage.isEmpty)
            #expect(fromGrouped.count == lines.count)
            #expect(fromGrouped == fromSingle)
            // zstd -d still reads the file: a grouped block's frames are ordinary frames.
            let segment = grouped + "/" + (try StoreFixture.segmentFiles(grouped)[0])
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/zstd"), ["-d", "-c", segment])
            #expect(result.status == 0, "\(result.errorOutput)")
            // The spine says which version it is (its first byte).
            #expect(result.standardOutput.first == (version3 ? 3 : 4))
        }
    }

    @Test(
        "a block read for one of 2 or 4 index workers has the events of the sessions whose id hash is its residue exactly as a whole read, and no other (payload version 4, and 3)",
        arguments: [false, true])
    func readForOneWorker(version3: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // Two blocks of 2,048 events (8 groups) and one of 900 (3 groups' worth, written as 2:
            // a group count is even, so that two workers read whole groups; four read it whole).
            let log = dir.appendingPathComponent("log").path
            _ = try Self.groupedLog(4_996, version3: version3, at: log)
            let reader = try LogReader(directory: log)
            #expect(try Self.headers(log).map(\.groupCount) == [8, 8, 2])
            let located = try #require(try reader.locateBlocks(segment: 0, 0..<reader.segments[0].blocks.count))
            #expect(located.numbers == [0, 1, 2])
            var blockReader = try LocatedBlockReader()
            var whole = DecodedBlock(), part = DecodedBlock()
            var wholeLine: [UInt8] = [], partLine: [UInt8] = []
            for modulus in [2, 4] {
                for position in located.numbers.indices {
                    #expect(try reader.readBlock(segment: 0, block: located.numbers[position], into: &whole))
                    let residues = whole.withStrings { strings in (0..<strings.count).map { Int(StringHash.hash(strings[$0]!) % UInt64(modulus)) } }
                    var decodedEvents = 0
                    for residue in 0..<modulus {
                        #expect(try blockReader.read(located, at: position, into: &part, residue: residue, modulus: modulus) == nil)
                        #expect(part.count == whole.count)
                        let readWhole = whole.groupCount % modulus != 0
                        for event in 0..<whole.count {
                            let mine = residues[Int(whole.sessions[event])] == residue
                            #expect(part.isDecoded(event) == (mine || readWhole), "event \(event) of block \(position), worker \(residue) of \(modulus)")
                            guard mine else { continue }
                            #expect(part.sessions[event] == whole.sessions[event])
                            wholeLine.removeAll()
                            partLine.removeAll()
                            try whole.appendJSONLine(event, to: &wholeLine)
                            try part.appendJSONLine(event, to: &partLine)
                            #expect(partLine == wholeLine, "event \(whole.lsn(event))")
                            decodedEvents += 1
                        }
                    }
                    // The workers together have every event once.
                    #expect(decodedEvents == whole.count)
                }
            }
        }
    }

    @Test(
        "a block read for one session has that session's events exactly as a whole read, and no other session's (payload version 4, and 3)",
        arguments: [false, true])
    func readForOneSession(version3: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = dir.appendingPathComponent("log").path
            _ = try Self.groupedLog(4_996, version3: version3, at: log)
            let reader = try LogReader(directory: log)
            var whole = DecodedBlock(), part = DecodedBlock(), bare = DecodedBlock()
            var positions: [Int32] = []
            var wholeLine: [UInt8] = [], partLine: [UInt8] = []
            var sessionsChecked = 0
            for (segment, block) in reader.blocks(matching: LogQuery()) {
                #expect(try reader.readBlock(segment: segment, block: block, into: &whole))
                #expect(whole.groupCount == (whole.count == 2048 ? 8 : 2))
                let sessions = whole.withStrings { strings in (0..<strings.count).map { Array(strings[$0]!) } }
                for (number, session) in sessions.enumerated() {
                    #expect(try reader.readBlock(segment: segment, block: block, into: &part, session: session), "\(reader.damage.last.map { "\($0)" } ?? "")")
                    #expect(part.count == whole.count && part.receiveTimes == whole.receiveTimes)
                    // Every event's session (version 3); version 4 has those of the session's
                    // group only, the others unknown.
                    let group = whole.group(ofSession: number)
                    for position in 0..<whole.count {
                        let sameGroup = whole.group(ofSession: Int(whole.sessions[position])) == group
                        #expect(part.sessions[position] == (sameGroup || version3 ? whole.sessions[position] : DecodedBlock.undecodedSession))
                    }
                    for position in 0..<whole.count {
                        // Its own events only (not even the rest of its group's).
                        let own = Int(whole.sessions[position]) == number
                        #expect(part.isDecoded(position) == own)
                        guard own else { continue }
                        wholeLine.removeAll()
                        partLine.removeAll()
                        try whole.appendJSONLine(position, to: &wholeLine)
                        try part.appendJSONLine(position, to: &partLine)
                        #expect(partLine == wholeLine, "event \(whole.lsn(position))")
                        #expect(part.flags[position] == whole.flags[position])
                    }
                    // As a replay reads it: no receive times or peers, the same events.
                    #expect(try reader.readBlock(segment: segment, block: block, into: &bare, session: session, receiveTimesAndPeers: false))
                    #expect(!bare.receiveTimesAndPeersDecoded && bare.receiveTimes.isEmpty && bare.sessionReadFor == number)
                    let own = (0..<whole.count).filter { Int(whole.sessions[$0]) == number }
                    bare.positions(ofSession: number, into: &positions)
                    #expect(positions.map(Int.init) == own, "the session's positions, in log order")
                    for position in own {
                        #expect(bare.types[position] == whole.types[position] && bare.timestamps[position] == whole.timestamps[position])
                        #expect(bare.sequence(position) == whole.sequence(position) && bare.flags[position] == whole.flags[position])
                        let sameBody = bare.withEvent(position) { _, _, bareBody in whole.withEvent(position) { _, _, body in bareBody.elementsEqual(body) } }
                        #expect(sameBody, "event \(whole.lsn(position))")
                    }
                    sessionsChecked += 1
                }
                // A session the block does not hold (a Bloom filter's false positive) decodes none.
                #expect(try reader.readBlock(segment: segment, block: block, into: &part, session: Array("no-such-session".utf8)))
                #expect((0..<part.count).allSatisfy { !part.isDecoded($0) })
            }
            #expect(sessionsChecked > 300)
        }
    }

    @Test(
        "a grouped block some of whose groups hold no session reads whole, and for each session, as a one-frame block does (payload version 4, and 3)",
        arguments: [false, true])
    func emptyGroups(version3: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            // The events of the six longest sessions, in blocks of 512 events in 16 groups: most
            // groups are empty (no frame).
            func session(_ line: [UInt8]) -> String {
                ((try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any])?["session"] as? String ?? ""
            }
            let grouped = dir.appendingPathComponent("grouped").path, single = dir.appendingPathComponent("single").path
            let lines: [[UInt8]]
            if version3 {
                lines = try Self.copyVersion3Log("empty-groups", to: grouped)
            } else {
                let all = Self.lines(40_000)
                let sessionOf = all.map(session)
                let longest = Dictionary(sessionOf.map { ($0, 1) }, uniquingKeysWith: +).sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(6).map(\.key)
                lines = zip(all, sessionOf).filter { longest.contains($0.1) }.map(\.0)
                var options = Self.options(grouped: true)
                options.maximumEventsPerBlock = 512
                options.eventsPerSessionGroup = 32
                try StoreFixture.write(lines, to: grouped, options: options, seal: true)
            }
            let kept = Array(Set(lines.map(session)))
            #expect(lines.count > 1_024 && kept.count == 6)
            try StoreFixture.write(lines, to: single, options: Self.options(grouped: false), seal: true)
            let headers = try Self.headers(grouped).filter { $0.groupCount > 0 }
            #expect(!headers.isEmpty && headers.allSatisfy { header in header.frames.dropFirst().contains { $0.size == 0 } }, "empty groups")
            let (fromGrouped, damage) = try StoreFixture.catLines(grouped)
            #expect(damage.isEmpty, "\(damage)")
            #expect(fromGrouped == (try StoreFixture.catLines(single)).lines)
            let reader = try LogReader(directory: grouped)
            var whole = DecodedBlock(), part = DecodedBlock()
            var positions: [Int32] = []
            for (segment, block) in reader.blocks(matching: LogQuery()) {
                #expect(try reader.readBlock(segment: segment, block: block, into: &whole))
                for session in kept {
                    let number = whole.withStrings { strings in (0..<strings.count).first { strings[$0].map { Array($0) } == Array(session.utf8) } }
                    guard let number else { continue }
                    #expect(try reader.readBlock(segment: segment, block: block, into: &part, session: Array(session.utf8), receiveTimesAndPeers: false))
                    part.positions(ofSession: number, into: &positions)
                    #expect(positions.map(Int.init) == (0..<whole.count).filter { Int(whole.sessions[$0]) == number })
                    for position in positions.map(Int.init) {
                        #expect(part.types[position] == whole.types[position] && part.timestamps[position] == whole.timestamps[position])
                    }
                }
            }
        }
    }

    @Test("damage in one group's frame is reported where it is; the other groups' sessions still read")
    func damagedGroupFrame() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(Self.lines(2_048), to: dir.path, options: Self.options(grouped: true), seal: true)
            let header = try #require(try Self.headers(dir.path).first)
            #expect(header.groupCount == 8)
            // Flip a byte in the middle of group 3's frame.
            let path = dir.path + "/" + (try StoreFixture.segmentFiles(dir.path)[0])
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let damaged = header.encodedSize + header.offset(ofFrame: 4) + header.frames[4].size / 2
            bytes[damaged] ^= 0x40
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let reader = try LogReader(directory: dir.path)
            var block = DecodedBlock()
            #expect(try !reader.readBlock(segment: 0, block: 0, into: &block))
            #expect(reader.damage.last?.reason.contains("fails its checksum") == true)
            // The sessions, from the spine of an intact read of the session table.
            #expect(try reader.readBlock(segment: 0, block: 0, into: &block, session: Array("no-such-session".utf8)))
            let sessions = block.withStrings { strings in (0..<strings.count).map { Array(strings[$0]!) } }
            let groups = sessions.indices.map { block.group(ofSession: $0) }
            var intact = 0
            for (number, session) in sessions.enumerated() {
                let inDamagedGroup = groups[number] == 3
                let damageBefore = reader.damage.count
                #expect(try reader.readBlock(segment: 0, block: 0, into: &block, session: session) == !inDamagedGroup)
                if inDamagedGroup {
                    #expect(reader.damage.count == damageBefore + 1)
                    #expect(reader.damage.last?.reason.contains("the frame of session group 3") == true, "\(reader.damage.last?.reason ?? "")")
                } else {
                    intact += 1
                }
            }
            #expect(intact > 0 && intact < sessions.count)

            // Read ahead on another thread: the same outcome, the damage recorded the same way.
            let prefetcher = try BlockPrefetcher()
            var ahead = DecodedBlock(), direct = DecodedBlock()
            for (number, session) in sessions.enumerated() {
                let damageBefore = reader.damage.count
                #expect(try reader.startReadingAhead(segment: 0, block: 0, session: session, receiveTimesAndPeers: false, with: prefetcher))
                let read = try reader.finishReadingAhead(prefetcher, into: &ahead)
                #expect(read == (groups[number] != 3))
                if read {
                    #expect(try reader.readBlock(segment: 0, block: 0, into: &direct, session: session, receiveTimesAndPeers: false))
                    #expect(ahead.sessionReadFor == number && ahead.count == direct.count && ahead.sessions == direct.sessions)
                } else {
                    #expect(reader.damage.count == damageBefore + 1)
                    #expect(reader.damage.last?.reason.contains("the frame of session group 3") == true)
                }
            }
        }
    }

    @Test("a frame-table checksum that disagrees with its frame is damage that a whole read and navlog verify report")
    func wrongFrameChecksum() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(Self.lines(2_048), to: dir.path, options: Self.options(grouped: true), seal: true)
            let header = try #require(try Self.headers(dir.path).first)
            let path = dir.path + "/" + (try StoreFixture.segmentFiles(dir.path)[0])
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            // Group 2's checksum in the frame table, then the header's own checksum made right
            // again: only the frame table is wrong.
            let entry = 8 + BlockHeader.fixedSize + header.sessionFilter.count + 12 * 3 + 8
            bytes[entry] ^= 0x01
            let headerEnd = header.encodedSize - 4
            let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[8..<headerEnd])) }
            for shift in 0..<4 { bytes[headerEnd + shift] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(shift))) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let reader = try LogReader(directory: dir.path)
            var block = DecodedBlock()
            #expect(try !reader.readBlock(segment: 0, block: 0, into: &block))
            #expect(reader.damage.last?.reason.contains("the frame of session group 2") == true, "\(reader.damage.last?.reason ?? "")")
            let report = try LogVerifier.verify(directory: dir.path)
            #expect(report.problems.contains { $0.reason.contains("session group 2") }, "\(report.problems)")
        }
    }

    @Test("damaged grouped payloads (past every checksum) are decoding errors or decode, and never crash a reader of the block or of one session")
    func damagedPayloads() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(Self.lines(2_048), to: dir.path, options: Self.options(grouped: true), seal: true)
            let header = try #require(try Self.headers(dir.path).first)
            let reader = try LogReader(directory: dir.path)
            var whole = DecodedBlock()
            #expect(try reader.readBlock(segment: 0, block: 0, into: &whole))
            let payload = whole.payload
            #expect(payload.count == header.payloadSize)
            var random = SplitMix64(seed: 77)
            var decoded = DecodedBlock()
            var line: [UInt8] = []
            var failures = 0, successes = 0
            for round in 0..<300 {
                var damaged = payload
                // Most rounds damage the spine or a group's columns, where a byte means most.
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let at = Int(random.next() % UInt64(round % 2 == 0 ? min(damaged.count, 4_096) : damaged.count))
                    damaged[at] = UInt8(truncatingIfNeeded: random.next())
                }
                do throws(DecodedBlock.DecodingError) {
                    try decoded.decode(payload: damaged, header: header)
                    successes += 1
                    for index in 0..<decoded.count {
                        line.removeAll(keepingCapacity: true)
                        try? decoded.appendJSONLine(index, to: &line)
                    }
                } catch {
                    failures += 1
                    #expect(error.reason.contains("malformed") || error.reason.contains("frame table"), "\(error.reason)")
                }
                // A reader of one session: the spine and one group's part, with any session number.
                let group = Int(random.next() % 8)
                let spineSize = header.frames[0].payloadSize
                let partStart = spineSize + header.frames[1..<(1 + group)].reduce(0) { $0 + $1.payloadSize }
                let part = Array(damaged[0..<spineSize]) + Array(damaged[partStart..<(partStart + header.frames[1 + group].payloadSize)])
                do {
                    try decoded.decode(payload: part, header: header, session: (number: Int(random.next() % 64), group: group))
                    for index in 0..<decoded.count where decoded.isDecoded(index) {
                        line.removeAll(keepingCapacity: true)
                        try? decoded.appendJSONLine(index, to: &line)
                    }
                } catch {
                    failures += 1
                }
                // One of 2 or 4 index workers: the spine and the parts of its groups.
                let modulus = round % 3 == 0 ? 4 : 2, residue = Int(random.next() % UInt64(modulus))
                var groupsPart = Array(damaged[0..<spineSize])
                var start = spineSize
                for group in 0..<8 {
                    let size = header.frames[1 + group].payloadSize
                    if group % modulus == residue { groupsPart += damaged[start..<(start + size)] }
                    start += size
                }
                do {
                    try decoded.decode(payload: groupsPart, header: header, groupResidue: residue, modulus: modulus)
                    for index in 0..<decoded.count where decoded.isDecoded(index) {
                        line.removeAll(keepingCapacity: true)
                        try? decoded.appendJSONLine(index, to: &line)
                    }
                } catch {
                    failures += 1
                }
            }
            // Both outcomes happen: the test reaches past the first check.
            #expect(failures > 30 && successes > 30, "\(failures) failures, \(successes) successes")
        }
    }

    @Test("a header whose frame table does not add up to its data is refused")
    func inconsistentFrameTable() {
        var header = BlockHeader(
            firstLSN: 1, eventCount: 10, frameSize: 300, payloadSize: 900, frameChecksum: 0, minTimestamp: 0, maxTimestamp: 0, minReceived: 0,
            maxReceived: 0, sessionFilter: [UInt8](repeating: 0, count: 8),
            frames: [.init(size: 100, payloadSize: 300, checksum: 0), .init(size: 200, payloadSize: 600, checksum: 0)])
        func decoded(_ header: BlockHeader) -> Result<BlockHeader, BlockHeader.DecodingFailure> {
            var bytes: [UInt8] = []
            header.encode(into: &bytes)
            return bytes.withUnsafeBytes { BlockHeader.decode($0) }
        }
        #expect((try? decoded(header).get()) == header)
        header.frames[1].size = 150
        #expect(throws: BlockHeader.DecodingFailure.self) { try decoded(header).get() }
        header.frames[1] = .init(size: 0, payloadSize: 600, checksum: 0)
        header.frameSize = 100
        #expect(throws: BlockHeader.DecodingFailure.self) { try decoded(header).get() }
        header.frames = [.init(size: 300, payloadSize: 900, checksum: 0)]
        header.frameSize = 300
        #expect(throws: BlockHeader.DecodingFailure.self, "one frame is not a grouped block") { try decoded(header).get() }
    }

    @Test("a spine's group column: byte counts and the positions of one byte, word at a time, as a byte-by-byte count finds them")
    func groupColumnScans() {
        // Seeded, so that a failure repeats.
        var generator = SplitMix64(seed: 17)
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099] {
            for values in [1, 2, 16, 64, 256] {
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: Int.random(in: 0..<values, using: &generator)) }
                bytes.withUnsafeBytes { raw in
                    var counts = [Int](repeating: 0, count: 256)
                    counts.withUnsafeMutableBufferPointer { DecodedBlock.countBytes(raw, into: $0) }
                    var expected = [Int](repeating: 0, count: 256)
                    for byte in bytes { expected[Int(byte)] += 1 }
                    #expect(counts == expected, "counts of \(length) bytes below \(values)")
                    // The bytes next to a match (0x7F, 0x80, 0xFF) must not be taken for it.
                    for value: UInt8 in [0, 1, 0x7F, 0x80, 0xFF, UInt8(truncatingIfNeeded: values - 1)] {
                        var found: [Int] = []
                        DecodedBlock.forEachPosition(of: value, in: raw) { found.append($0) }
                        #expect(found == bytes.indices.filter { bytes[$0] == value }, "positions of \(value) in \(length) bytes below \(values)")
                    }
                }
            }
        }
    }
}
