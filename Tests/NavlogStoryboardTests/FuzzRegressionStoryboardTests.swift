import Foundation
import NavlogStoryboard
import NavlogTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the fuzz target NavlogFuzzStoryboard (`tools/fuzz`) found in the storyboard parser,
/// each input kept in `Tests/Fixtures/fuzz-regressions` and fed to the same API; and a small
/// in-process fuzz of two corpus storyboards for CI. Everything that may crash runs in a child
/// process (an exit test), so a crash fails its test, not the whole run.
///
/// The crashes were in libxml2 and FoundationXML (Foundation's XMLParser on Linux), reached
/// through `StoryboardParser.parse(data:path:)`, which now refuses such bytes before them; the
/// tests keep it so.
@Suite("Fuzz regressions and mini fuzz: storyboards")
struct FuzzRegressionStoryboardTests {
    @Test(
        "a file whose bytes do not fit its declared encoding, that starts with NUL bytes, or that has an empty processing instruction fails with a StoryboardError, not a crash",
        arguments: [
            "storyboard-encoding-shift-jis", "storyboard-encoding-utf7", "storyboard-ucs4-prefix", "storyboard-empty-processing-instruction",
            "storyboard-encoding-unterminated-declaration",
        ])
    func encodingCrash(fixture: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [fixture] in
            ExitTestChild.run {
                let data = try Data(contentsOf: TestEnvironment.fixture("fuzz-regressions/" + fixture))
                do throws(StoryboardError) {
                    _ = try StoryboardParser.parse(data: data, path: "/virtual/\(fixture).storyboard")
                } catch {
                    // The clear error: the file, and what is wrong.
                    guard error.path == "/virtual/\(fixture).storyboard", !error.reason.isEmpty else {
                        throw StoryboardFuzz.Failure("an error without a path or a reason: \(error)")
                    }
                }
            }
        }
        StoryboardFuzz.explain(result, "parsing \(fixture)")
    }

    @Test("mini fuzz: 2,000 mutations of two small corpus storyboards parse or fail with a StoryboardError, each within its time budget")
    func miniFuzz() async throws {
        // Its input first, here: a missing corpus fails the test naming the file, before the child.
        _ = try StoryboardFuzz.seedFiles()
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ExitTestChild.run { try StoryboardFuzz.run() }
        }
        StoryboardFuzz.explain(result, "the storyboard mini fuzz")
    }
}

enum StoryboardFuzz {
    static let rounds = 2_000
    /// The most one input may take (a debug build parses these files in a few milliseconds).
    static let budget = Duration.seconds(2)
    /// Two small storyboards of the corpus (`../shared/storyboards`).
    static let seeds = [
        "Swinject__SwinjectStoryboard__Tests__iOS-tvOS__Storyboards__iOS__Storyboard1.storyboard",
        "keepassium__KeePassium__KeePassium__Base.lproj__Main.storyboard",
    ]

    /// The seeds' paths; throws ``MissingTestInput`` naming the first one missing.
    static func seedFiles() throws -> [URL] {
        try seeds.map { try TestEnvironment.sharedFile("storyboards/\($0)") }
    }

    static func run() throws {
        alarm(120)
        let files = try seedFiles().map { Array(try Data(contentsOf: $0)) }
        var mutator = ByteMutator(seed: 0x7374_6F72_7962_6F61, interesting: Array("<>\"'=&/ segue scene".utf8), truncationKeepsHalf: true, maximumCopy: 256)
        var parsed = 0
        for round in 0..<rounds {
            let seed = files[mutator.index(files.count)]
            let (input, how) = mutator.mutate(seed)
            guard selected(round) else { continue }
            ExitTestChild.note(input: round, "\(how), \(input.count) bytes")
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let storyboard = try StoryboardParser.parse(data: Data(input), path: "/virtual/Base.lproj/Main.storyboard")
                parsed += 1
                _ = StoryboardStatistics(storyboard)
                let set = StoryboardSet([storyboard])
                _ = set.resolvedReferences()
                _ = StoryboardDOTWriter.render(set)
            } catch {
                guard !error.reason.isEmpty else { throw Failure("input \(round): an error without a reason: \(error)") }
            }
            let elapsed = clock.now - start
            guard elapsed < budget else { throw Failure("input \(round) took \(elapsed), over the budget of \(budget)") }
        }
        guard parsed > 100 else { throw Failure("only \(parsed) of \(rounds) mutated storyboards parsed: the mutations are too rough to test anything") }
    }

    // MARK: - Running in a child process

    typealias Failure = ExitTestChild.Failure

    /// Records a failure with the end of the child's standard error, unless the child finished its work.
    static func explain(_ result: ExitTest.Result?, _ what: String) {
        guard let result, result.exitStatus != .exitCode(ExitTestChild.finished) else { return }
        let end = ExitTestChild.readableEnd(of: result.standardErrorContent)
        Issue.record("\(what) ended with \(result.exitStatus); its standard error ends:\n\(end.joined(separator: "\n"))")
    }

    /// NAVLOG_MINI_FUZZ_ONLY=N runs input N alone (the mutations are the same).
    static func selected(_ round: Int) -> Bool {
        guard let only = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_ONLY"].flatMap({ Int($0) }) else { return true }
        return round == only
    }
}
