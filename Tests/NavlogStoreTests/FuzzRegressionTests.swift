import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the fuzz targets (`tools/fuzz`, `Sources/NavlogFuzz*`) found in the event codec and the
/// store, each input kept in `Tests/Fixtures/fuzz-regressions` and fed to the same API; and a
/// small in-process fuzz of both for CI. Inputs that crash run in a child process (an exit
/// test), so a crash fails its test, not the whole run, and its message shows.
///
/// Each regression failed until its bug was fixed; the tests keep it fixed.
@Suite("Fuzz regressions and mini fuzz: event lines and segments")
struct FuzzRegressionTests {
    // MARK: - Regressions

    @Test("eventline-rfc3339-before-epoch: an RFC 3339 ts before 1970 is rejected, like the same time as an integer")
    func rfc3339BeforeEpoch() throws {
        let line = try Self.fixture("eventline-rfc3339-before-epoch")
        var parser = EventLineParser()
        var batch = EventBatch()
        let outcome: Result<EventLineParser.Line, EventRejection> = line.withUnsafeBytes { raw in
            do throws(EventRejection) {
                return .success(try parser.parse(raw, lineNumber: 1, receivedAt: 1_763_712_000_000_000, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .failure(let rejection):
            #expect(rejection.path == "ts", "\(rejection)")
            #expect([.range, .timestamp].contains(rejection.code), "\(rejection)")
        case .success(let line):
            Issue.record(
                """
                accepted as \(line) with ts \(batch.headers.first.map { String($0.timestamp) } ?? "-") µs; navlog cat then prints that \
                integer ts, which ingest rejects as outside 0…253402300799999999 (cat's output must ingest again)
                """)
        }
    }

    @Test("segment-lsn-overflow: a block whose LSNs pass 2^64 − 1 is reported as damage, not a trap (LogReader.lsnRange)")
    func segmentLSNOverflow() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try FuzzRegressionTests.readDirectory(holding: "segment-lsn-overflow.zst", as: "00000000000000000001.zst") }
        }
        Self.explain(result, "reading segment-lsn-overflow.zst")
    }

    @Test("segment-lsn-backwards: a segment whose last block has lower LSNs than its first is read without a trap (LogReader.lsnRange)")
    func segmentLSNBackwards() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try FuzzRegressionTests.readDirectory(holding: "segment-lsn-backwards.zst", as: "00000000000000000001.zst") }
        }
        Self.explain(result, "reading segment-lsn-backwards.zst")
    }

    @Test("segment-verify-lsns-backwards: verify reports a block whose LSNs lie below an earlier block's instead of trapping (LogVerifier)")
    func verifyLSNsBackwards() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try FuzzRegressionTests.readDirectory(holding: "segment-verify-lsns-backwards.zst", as: "00000000000000000001.zst") }
        }
        Self.explain(result, "reading and verifying segment-verify-lsns-backwards.zst")
    }

    @Test("segment-recovery-lsn-overflow: recovery of a damaged segment named for LSN 2^64 − 1 fails with an error, not a trap")
    func recoveryLSNOverflow() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try FuzzRegressionTests.recoverDirectory() }
        }
        Self.explain(result, "opening a log over segment-recovery-lsn-overflow.zst")
    }

    // MARK: - Mini fuzz

    @Test("mini fuzz: 2,000 mutated event lines are accepted or rejected with a place, and what is accepted prints and parses again")
    func miniFuzzEventLines() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try MiniFuzz.eventLines() }
        }
        Self.explain(result, "the event-line mini fuzz")
    }

    @Test("mini fuzz: 2,000 mutated segments (half with their checksums recomputed) are read, scanned and verified without a crash")
    func miniFuzzSegments() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try MiniFuzz.segments() }
        }
        Self.explain(result, "the segment mini fuzz")
    }

    // MARK: - Support

    typealias RegressionFailure = ExitTestChild.Failure

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestEnvironment.fixture("fuzz-regressions/" + name)))
    }

    /// Everything a reader does with a data directory holding the fixture `name` as segment
    /// `segment`: catalogue, event count, LSN range, a full scan, and verification, which must
    /// find the damage.
    static func readDirectory(holding name: String, as segment: String) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            try Data(try fixture(name)).write(to: dir.appendingPathComponent(segment))
            let reader = try LogReader(directory: dir.path)
            _ = reader.eventCount
            _ = reader.lsnRange
            var line: [UInt8] = []
            try reader.scan(LogQuery()) { block, index in
                line.removeAll(keepingCapacity: true)
                try? block.appendJSONLine(index, to: &line)
                return true
            }
            let report = try LogVerifier.verify(directory: dir.path)
            guard !report.isClean else { throw RegressionFailure("verify finds nothing wrong with \(name)") }
        }
    }

    /// Opens a log over a directory holding the fixture as a segment named for LSN 2^64 − 1:
    /// recovery sets it aside and must then either open (the next LSN cannot follow it) or
    /// fail with a StoreError.
    static func recoverDirectory() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let bytes = try FuzzRegressionTests.fixture("segment-recovery-lsn-overflow.zst")
            try Data(bytes).write(to: dir.appendingPathComponent("18446744073709551615.zst"))
            do {
                let log = try EventLog(directory: dir.path)
                // Opened: the damaged segment was set aside, and the next LSN cannot follow it.
                guard !log.recovery.setAside.isEmpty else { throw RegressionFailure("recovery did not set the damaged segment aside: \(log.recovery)") }
                try log.close()
            } catch let error as StoreError {
                guard !error.message.isEmpty else { throw RegressionFailure("a StoreError without a message") }
            }
        }
    }

    /// Records a failure, with the end of the child's standard error (a trap's message, the
    /// last input a mini fuzz tried), unless the child finished its work.
    static func explain(_ result: ExitTest.Result?, _ what: String) {
        guard let result, result.exitStatus != .exitCode(ExitTestChild.finished) else { return }
        let end = ExitTestChild.readableEnd(of: result.standardErrorContent)
        Issue.record("\(what) ended with \(result.exitStatus); its standard error ends:\n\(end.joined(separator: "\n"))")
    }
}

/// A small, deterministic, in-process fuzzer for CI: mutations of seed inputs, each checked
/// against a time budget, the whole run against an alarm (a hang ends the child process).
private enum MiniFuzz {
    static let rounds = 2_000
    /// The most one input may take (a debug build on a 2-core machine takes well under 10 ms).
    static let budget = Duration.seconds(2)

    static func eventLines() throws {
        alarm(120)
        let seeds = TestEnvironment.lines(of: try Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl")))
            .filter { $0.count < 4096 && $0.first == UInt8(ascii: "{") }
        var mutator = ByteMutator(seed: 0x6576_656E_746C_696E)
        var parser = EventLineParser()
        for round in 0..<rounds {
            let seed = seeds[mutator.index(seeds.count)]
            let (line, how) = mutator.mutate(seed)
            guard selected(round) else { continue }
            note(round, how, line.count)
            if let dump = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_DUMP"] {
                try Data(line).write(to: URL(fileURLWithPath: dump).appendingPathComponent("eventline-\(round)"))
            }
            try timed(round) {
                var batch = EventBatch()
                let outcome: Result<EventLineParser.Line, EventRejection> = line.withUnsafeBytes { raw in
                    do throws(EventRejection) {
                        return .success(
                            try parser.parse(raw, lineNumber: round + 1, receivedAt: 1_763_712_000_000_000, peer: PeerCredentials(uid: 1, gid: 1, pid: 1), into: &batch))
                    } catch {
                        return .failure(error)
                    }
                }
                switch outcome {
                case .failure(let rejection):
                    guard rejection.line == round + 1, !rejection.reason.isEmpty else {
                        throw FuzzRegressionTests.RegressionFailure("a rejection without a place or reason: \(rejection)")
                    }
                case .success(.event):
                    let printed = try printed(batch)
                    var again = EventBatch()
                    var wide = EventLineParser(maximumLineLength: 1 << 22)
                    let reparsed = printed.withUnsafeBytes { raw in
                        try? wide.parse(raw, lineNumber: 1, receivedAt: 1_763_712_000_000_000, peer: PeerCredentials(uid: 1, gid: 1, pid: 1), into: &again)
                    }
                    guard reparsed == .event, try Self.printed(again) == printed else {
                        throw FuzzRegressionTests.RegressionFailure("cat's line does not ingest to the same event: \(String(decoding: printed, as: UTF8.self))")
                    }
                case .success:
                    break
                }
            }
        }
    }

    static func printed(_ batch: EventBatch) throws -> [UInt8] {
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        try codec.roundTrip(batch, into: &block)
        var output: [UInt8] = []
        try block.appendJSONLine(0, to: &output)
        return Array(output.dropLast())
    }

    static func segments() throws {
        alarm(120)
        try TestEnvironment.withTemporaryDirectory { dir in
            // Seeds: a sealed segment (with its index) and an active one, small blocks.
            var options = LogOptions()
            options.maximumEventsPerBlock = 4
            var generator = WorkloadGenerator(WorkloadConfiguration(seed: 11))
            var seeds: [(segment: [UInt8], index: [UInt8]?)] = []
            for (number, seal) in [(1, true), (2, false)] {
                let seedDir = dir.appendingPathComponent("seed-\(number)")
                let log = try EventLog(directory: seedDir.path, options: options)
                var parser = EventLineParser()
                var batch = EventBatch()
                for (index, line) in generator.lines(16).enumerated() {
                    _ = try line.withUnsafeBytes { raw in
                        try parser.parse(raw, lineNumber: index + 1, receivedAt: 1_763_712_000_000_000 + Int64(index), peer: PeerCredentials(uid: 1, gid: 1, pid: 1), into: &batch)
                    }
                }
                try log.append(batch)
                if seal { try log.seal() }
                try log.close()
                _ = try LogReader(directory: seedDir.path).eventCount  // writes the index of a sealed segment
                let segment = Array(try Data(contentsOf: seedDir.appendingPathComponent("00000000000000000001.zst")))
                let index = try? Data(contentsOf: seedDir.appendingPathComponent("00000000000000000001.idx"))
                seeds.append((segment, index.map { Array($0) }))
            }
            // In memory when possible: a reader that rebuilds an index fsyncs it.
            let data =
                access("/dev/shm", W_OK) == 0
                ? URL(fileURLWithPath: "/dev/shm/navlog-mini-fuzz-\(getpid())") : dir.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: data) }
            var mutator = ByteMutator(seed: 0x7365_676D_656E_7473)
            for round in 0..<rounds {
                let seed = seeds[round % seeds.count]
                let mutated = mutator.mutate(seed.segment)
                var segment = mutated.bytes
                let how = mutated.how
                var index = seed.index
                if round % 2 == 1 { fixChecksums(&segment) }
                if round % 7 == 3, let original = index {
                    var mutated = mutator.mutate(original).bytes
                    fixIndexChecksum(&mutated)
                    index = mutated
                }
                if tooSlowInDebug(segment) || !selected(round) { continue }
                note(round, how + (round % 2 == 1 ? ", checksums recomputed" : ""), segment.count)
                if let dump = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_DUMP"] {
                    // As NavlogFuzzSegment reads it: mode 1 (checksums recomputed), or 3 with the index.
                    var input: [UInt8] = index == nil ? [0x01] : [0x03] + withUnsafeBytes(of: UInt32(segment.count).littleEndian, Array.init)
                    input += segment + (index ?? [])
                    try Data(input).write(to: URL(fileURLWithPath: dump).appendingPathComponent("segment-\(round)"))
                }
                try timed(round) {
                    for name in try FileManager.default.contentsOfDirectory(atPath: data.path) {
                        try FileManager.default.removeItem(at: data.appendingPathComponent(name))
                    }
                    try Data(segment).write(to: data.appendingPathComponent("00000000000000000001.zst"))
                    if let index { try Data(index).write(to: data.appendingPathComponent("00000000000000000001.idx")) }
                    let reader = try LogReader(directory: data.path)
                    _ = reader.eventCount
                    _ = reader.lsnRange
                    // Every event decoded (the verifier prints each as JSON too).
                    try reader.scan(LogQuery()) { block, event in
                        _ = block.session(event)
                        return true
                    }
                    _ = try LogVerifier.verify(directory: data.path).problems.map(\.description)
                }
            }
        }
    }

    /// Whether a header claims a payload over 1 MiB: the reader zero-fills that much (up to
    /// 256 MiB) before zstd finds the frame smaller, which takes seconds in a debug build
    /// (`ZstdDecompressor.decompress` appends `repeatElement(0, count:)`).
    static func tooSlowInDebug(_ segment: [UInt8]) -> Bool {
        var offset = 0
        while offset + 36 <= segment.count {
            if load32(segment, offset) == 0x184D_2A5B && load32(segment, offset + 32) > 1 << 20 { return true }
            offset += 1
        }
        return false
    }

    /// Recomputes every block header's checksum and its data frame's (so mutations get past them).
    static func fixChecksums(_ bytes: inout [UInt8]) {
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = offset + 8 <= bytes.count ? Int(load32(bytes, offset + 4)) : 0
            guard load32(bytes, offset) == 0x184D_2A5B, size >= 72, size <= bytes.count - offset - 8 else {
                offset += 1
                continue
            }
            let body = offset + 8
            let frame = body + size
            let frameSize = Int(load32(bytes, body + 20))
            let fits = frameSize <= bytes.count - frame
            if fits { store32(&bytes, body + 28, CRC32C.checksum(Array(bytes[frame..<(frame + frameSize)]))) }
            store32(&bytes, frame - 4, CRC32C.checksum(Array(bytes[body..<(frame - 4)])))
            offset = fits ? frame + frameSize : frame
        }
    }

    static func fixIndexChecksum(_ bytes: inout [UInt8]) {
        guard bytes.count >= 28 else { return }
        store32(&bytes, bytes.count - 4, CRC32C.checksum(Array(bytes.dropLast(4))))
    }

    static func load32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    static func store32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for shift in 0..<4 { bytes[offset + shift] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(shift))) }
    }

    /// NAVLOG_MINI_FUZZ_ONLY=N runs input N alone (the mutations are the same).
    static func selected(_ round: Int) -> Bool {
        guard let only = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_ONLY"].flatMap({ Int($0) }) else { return true }
        return round == only
    }

    /// Names the input on standard error before it runs: the last one named is the one that crashed.
    static func note(_ round: Int, _ how: String, _ size: Int) { ExitTestChild.note(input: round, "\(how), \(size) bytes") }

    static func timed(_ round: Int, _ body: () throws -> Void) throws {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let elapsed = clock.now - start
        guard elapsed < budget else { throw FuzzRegressionTests.RegressionFailure("input \(round) took \(elapsed), over the budget of \(budget)") }
    }
}
