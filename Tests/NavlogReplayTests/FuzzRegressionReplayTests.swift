import Foundation
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the fuzz targets (`tools/fuzz`: NavlogFuzzCheckpoint, NavlogFuzzSegment) found in the
/// replayer, each input kept in `Tests/Fixtures/fuzz-regressions` and fed to the same API; and
/// a small in-process fuzz of checkpoints for CI. Everything that may crash or hang runs in a
/// child process (an exit test) under an alarm, so it fails its test, not the whole run.
///
/// Each regression failed until its bug was fixed; the tests keep it fixed.
@Suite("Fuzz regressions and mini fuzz: replay checkpoints")
struct FuzzRegressionReplayTests {
    @Test("checkpoint-inconsistent-hierarchy: a checkpoint whose links disagree is rejected, or the events after it replay without a hang")
    func inconsistentHierarchy() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run(alarm: 10) {
                let input = try ReplayFuzz.fixture("checkpoint-inconsistent-hierarchy")
                let length = Int(input[0]) | Int(input[1]) << 8
                let checkpoint = Array(input[2..<(2 + length)])
                // Rejecting it (nil) is the clear error; accepting it must leave a state the engine can use.
                guard var state = checkpoint.withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) else { return }
                ReplayFuzz.apply(ReplayFuzz.batch(Array(input[(2 + length)...])), to: &state)
                _ = state.focusPath
            }
        }
        ReplayFuzz.explain(result, "decoding checkpoint-inconsistent-hierarchy and applying its 12 events")
    }

    @Test("segment-replay-dwell-overflow: events read from a damaged segment with far-apart times replay without a trap (dwell time)")
    func dwellOverflow() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run(alarm: 10) {
                try TestEnvironment.withTemporaryDirectory { dir in
                    try Data(try ReplayFuzz.fixture("segment-replay-dwell-overflow.zst")).write(to: dir.appendingPathComponent("00000000000000000001.zst"))
                    var replayers: [String: SessionReplayer] = [:]
                    // What navlog replay does with every event the reader returns.
                    try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                        let session = block.session(index)
                        var replayer = replayers[session] ?? SessionReplayer()
                        _ = block.withBody(index) { body in
                            replayer.apply(
                                ReplayEvent(
                                    type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body))
                        }
                        replayers[session] = replayer
                        return true
                    }
                }
            }
        }
        ReplayFuzz.explain(result, "replaying the events of segment-replay-dwell-overflow.zst")
    }

    @Test("mini fuzz: 2,000 mutated checkpoints decode or are rejected; what decodes encodes again the same and takes events")
    func miniFuzzCheckpoints() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The alarm is set again for each input (below): under a loaded CI machine the whole
            // run may take minutes, but no single input may hang.
            ExitTestChild.run(alarm: 60) { try ReplayFuzz.checkpoints() }
        }
        ReplayFuzz.explain(result, "the checkpoint mini fuzz")
    }
}

/// The checkpoint mini fuzz and what the tests above share.
enum ReplayFuzz {
    static let rounds = 2_000
    /// The most one input may take (a debug build takes a few milliseconds).
    static let budget = Duration.seconds(2)

    static func checkpoints() throws {
        // Seeds: states after events of a few rule fixtures.
        var seeds: [[UInt8]] = []
        for file in ["R1-show", "R3-present", "R13-tabs", "R14-split", "R17-unwind", "R19-interactive-transition"] {
            let lines = TestEnvironment.lines(of: try Data(contentsOf: TestEnvironment.fixture("replay/\(file).jsonl"))).filter { $0.first == UInt8(ascii: "{") }
            var replayer = SessionReplayer()
            for (number, line) in lines.enumerated() {
                apply(batch(line), to: &replayer)
                if number % 9 == 8 {
                    var bytes: [UInt8] = []
                    replayer.encodeCheckpoint(into: &bytes)
                    seeds.append(bytes)
                }
            }
        }
        let events = batch(
            Array(
                """
                {"type":"nav.pop","session":"s","nav":"nav","animated":true,"seq":900,"ts":9000000}
                {"type":"split.expand","session":"s","split":"split","seq":901,"ts":9000100}
                {"type":"split.collapse","session":"s","split":"split","seq":902,"ts":9000200}
                {"type":"dismiss","session":"s","vc":"m","seq":903,"ts":9000300}
                {"type":"tab.select","session":"s","tab":"tab","index":1,"seq":904,"ts":9000400}
                {"type":"show","session":"s","from":"a","vc":{"id":"fz","class":"FVC"},"seq":905,"ts":9000500}
                {"type":"transition.end","session":"s","id":"t1","interactive":true,"completed":false,"seq":906,"ts":9000600}
                {"type":"app.background","session":"s","seq":907,"ts":9000700}
                """.utf8))
        var block = DecodedBlock()
        var codec = InMemoryBlockCodec()
        try codec.roundTrip(events, into: &block)
        var mutator = ByteMutator(seed: 0x6368_6563_6B70_7473, interesting: [0x00, 0x01, 0x7F, 0x80, 0xFF])
        var decoded = 0
        for round in 0..<rounds {
            let seed = seeds[mutator.index(seeds.count)]
            let (input, how) = mutator.mutate(seed)
            guard selected(round) else { continue }
            note(round, how, input.count)
            alarm(60)
            let clock = ContinuousClock()
            let start = clock.now
            if let state = input.withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) {
                decoded += 1
                var encoded: [UInt8] = []
                state.encodeCheckpoint(into: &encoded)
                guard let again = encoded.withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) else {
                    throw Failure("input \(round): a decoded checkpoint, encoded again, does not decode")
                }
                var reencoded: [UInt8] = []
                again.encodeCheckpoint(into: &reencoded)
                guard reencoded == encoded else { throw Failure("input \(round): a checkpoint encoded, decoded and encoded again changed") }
                var json: [UInt8] = []
                state.appendJSON(session: "s", to: &json)
                _ = state.tree(session: "s")
                // checkpoint-inconsistent-hierarchy: the engine's walks rely on the links agreeing.
                guard HierarchyOracle.isConsistent(state.hierarchy) else { throw Failure("input \(round): a checkpoint whose hierarchy links disagree decoded") }
                var replayer = state
                for index in 0..<block.count { apply(block, index, to: &replayer) }
                replayer.appendJSON(session: "s", to: &json)
            }
            let elapsed = clock.now - start
            guard elapsed < budget else { throw Failure("input \(round) took \(elapsed), over the budget of \(budget)") }
        }
        guard decoded > 50 || ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_ONLY"] != nil else {
            throw Failure("only \(decoded) of \(rounds) mutated checkpoints decoded: the mutations are too rough to test anything")
        }
    }

    // MARK: - Events

    static func batch(_ text: [UInt8]) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in text.split(separator: 0x0A).enumerated() {
            _ = Array(line).withUnsafeBytes { raw in
                try? parser.parse(raw, lineNumber: number + 1, receivedAt: 1_763_712_000_000_000, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
            }
        }
        return batch
    }

    static func apply(_ batch: EventBatch, to replayer: inout SessionReplayer) {
        guard !batch.isEmpty else { return }
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        try? codec.roundTrip(batch, into: &block)
        for index in 0..<block.count { apply(block, index, to: &replayer) }
    }

    static func apply(_ block: DecodedBlock, _ index: Int, to replayer: inout SessionReplayer) {
        _ = block.withBody(index) { body in
            replayer.apply(ReplayEvent(type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body))
        }
    }

    // MARK: - Running in a child process

    typealias Failure = ExitTestChild.Failure

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestEnvironment.fixture("fuzz-regressions/" + name)))
    }

    /// Records a failure with the end of the child's standard error, unless the child finished its work.
    static func explain(_ result: ExitTest.Result?, _ what: String) {
        guard let result, result.exitStatus != .exitCode(ExitTestChild.finished) else { return }
        let reason = result.exitStatus == .signal(SIGALRM) ? " (the alarm: it hung)" : ""
        let end = ExitTestChild.readableEnd(of: result.standardErrorContent)
        Issue.record("\(what) ended with \(result.exitStatus)\(reason); its standard error ends:\n\(end.joined(separator: "\n"))")
    }

    /// Names the input on standard error before it runs: the last one named is the one that crashed.
    static func note(_ round: Int, _ how: String, _ size: Int) { ExitTestChild.note(input: round, "\(how), \(size) bytes") }

    /// NAVLOG_MINI_FUZZ_ONLY=N runs input N alone (the mutations are the same).
    static func selected(_ round: Int) -> Bool {
        guard let only = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_ONLY"].flatMap({ Int($0) }) else { return true }
        return round == only
    }
}
