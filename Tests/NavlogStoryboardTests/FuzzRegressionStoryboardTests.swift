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
            StoryboardFuzz.child {
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
    func miniFuzz() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            StoryboardFuzz.child { try StoryboardFuzz.run() }
        }
        StoryboardFuzz.explain(result, "the storyboard mini fuzz")
    }
}

enum StoryboardFuzz {
    static let rounds = 2_000
    /// The most one input may take (a debug build parses these files in a few milliseconds).
    static let budget = Duration.seconds(2)
    /// The exit status of a child that finished its work (the tests expect `.failure`, so
    /// they always get its standard error back to show a trap's message).
    static let finished: CInt = 42
    /// Two small storyboards of the corpus (`../shared/storyboards`).
    static let seeds = [
        "Swinject__SwinjectStoryboard__Tests__iOS-tvOS__Storyboards__iOS__Storyboard1.storyboard",
        "keepassium__KeePassium__KeePassium__Base.lproj__Main.storyboard",
    ]

    static func run() throws {
        alarm(120)
        let directory = TestEnvironment.shared.appendingPathComponent("storyboards")
        let files = try seeds.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
        var mutator = ByteMutator(seed: 0x7374_6F72_7962_6F61, interesting: Array("<>\"'=&/ segue scene".utf8), truncationKeepsHalf: true, maximumCopy: 256)
        var parsed = 0
        for round in 0..<rounds {
            let seed = files[mutator.index(files.count)]
            let (input, how) = mutator.mutate(seed)
            guard selected(round) else { continue }
            say("input \(round): \(how), \(input.count) bytes")
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

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs an exit test's body: an error is written to standard error and ends the process
    /// with status 3 (a crash ends it with a signal); finishing ends it with ``finished``.
    static func child(_ body: () throws -> Void) -> Never {
        do {
            try body()
        } catch {
            say("\(error)")
            exit(3)
        }
        exit(finished)
    }

    /// Records a failure with the end of the child's standard error (stack frames left out),
    /// unless the child finished its work.
    static func explain(_ result: ExitTest.Result?, _ what: String) {
        guard let result, result.exitStatus != .exitCode(finished) else { return }
        // Readable lines only: no stack frames (they have no symbols here), nothing binary.
        let lines = String(decoding: result.standardErrorContent, as: UTF8.self).split(separator: "\n").filter { line in
            let words = line.split(separator: " ")
            return !(words.count > 2 && words[0].allSatisfy(\.isNumber) && words[2].hasPrefix("0x"))
                && line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0 != "\u{FFFD}" || $0 == "\t" }
        }
        let end = lines.isEmpty ? ["(nothing readable: a trap or crash without a message; the fuzz target shows the stack)"] : lines.suffix(6)
        Issue.record("\(what) ended with \(result.exitStatus); its standard error ends:\n\(end.joined(separator: "\n"))")
    }

    static func say(_ text: String) {
        let line = text + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    /// NAVLOG_MINI_FUZZ_ONLY=N runs input N alone (the mutations are the same).
    static func selected(_ round: Int) -> Bool {
        guard let only = ProcessInfo.processInfo.environment["NAVLOG_MINI_FUZZ_ONLY"].flatMap({ Int($0) }) else { return true }
        return round == only
    }
}
