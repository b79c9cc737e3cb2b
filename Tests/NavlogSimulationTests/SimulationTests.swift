import Foundation
import NavlogEvents
import NavlogReplay
import NavlogSimulation
import NavlogStore
import NavlogStoryboard
import NavlogTesting
import NavlogWorkload
import Testing

/// Simulated sessions, stored in a real log and replayed from it, are valid UIKit; deliberate
/// misuse is reported with the code intended.
@Suite("Sessions simulated from storyboards")
struct SimulationTests {
    static let demo = TestEnvironment.packageRoot.appendingPathComponent("tools/demo-storyboards/Cookbook.storyboard").path

    /// The corpus's storyboards; throws, naming the folder, when it is not there.
    static func corpusFiles() throws -> [String] {
        try TestEnvironment.sharedFiles(in: "storyboards", endingIn: ".storyboard").map(\.path)
    }

    /// Simulates, writes the events to a temporary log, replays every session from the log.
    static func simulateAndReplay(
        _ paths: [String], _ configuration: SimulationConfiguration
    ) throws -> (
        states: [String: SessionReplayer], injected: [InjectedMisuse], events: Int
    ) {
        let app = try StoryboardApp(paths.map { try Storyboard.load(path: $0) })
        var simulator = StoryboardSimulator(app: app, configuration: configuration, makeGenerator: SplitMix64.init(seed:))
        var lines: [[UInt8]] = []
        while simulator.step(into: &lines) {}
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in lines.enumerated() {
            _ = try line.withUnsafeBytes { raw in
                try parser.parse(
                    UnsafeRawBufferPointer(rebasing: raw.dropLast()), lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0),
                    into: &batch)
            }
        }
        var states: [String: SessionReplayer] = [:]
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path)
            _ = try log.append(batch)
            try log.close()
            try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                let session = block.session(index)
                var state = states[session] ?? SessionReplayer()
                block.withBody(index) { body in
                    state.apply(
                        ReplayEvent(type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body))
                }
                states[session] = state
                return true
            }
        }
        return (states, simulator.injected, lines.count)
    }

    @Test("100 sessions of every storyboard of the corpus replay from the log with no anomaly (misuse off)")
    func corpusSessionsAreValid() throws {
        let files = try Self.corpusFiles()
        #expect(files.count == 63)
        var total = 0
        for (number, path) in files.enumerated() {
            let configuration = SimulationConfiguration(
                sessions: 100, seed: UInt64(number + 1), concurrency: 8, idiom: number % 2 == 0 ? "phone" : "pad", meanActions: 8)
            let (states, _, events) = try Self.simulateAndReplay([path], configuration)
            total += events
            #expect(states.count == 100, "\(path): \(states.count) sessions in the log")
            for (session, state) in states where !state.anomalies.isEmpty {
                Issue.record("\(URL(fileURLWithPath: path).lastPathComponent) session \(session): \(state.anomalies.map { "\($0.code) \($0.message)" })")
                break
            }
            #expect(states.values.allSatisfy { $0.info.ended }, "every session ends")
        }
        print("simulated and replayed \(total) events of \(files.count) storyboards")
    }

    @Test("with misuse on, every anomaly code is injected and each injection is reported at its event with its code")
    func misuseIsReported() throws {
        var codes = Set<AnomalyCode>()
        let corpus = try Self.corpusFiles()
        try #require(
            corpus.count > 20,
            "\(MissingTestInput(path: URL(fileURLWithPath: corpus[0]).deletingLastPathComponent().path, what: "holds \(corpus.count) storyboards, not the corpus of 63"))")
        for (number, paths) in [[Self.demo], [Self.demo], [corpus[5]], [corpus[20]]].enumerated() {
            let configuration = SimulationConfiguration(
                sessions: 60, seed: UInt64(100 + number), concurrency: 8, idiom: number % 2 == 0 ? "pad" : "phone", misuseRate: 0.2, meanActions: 12)
            let (states, injected, _) = try Self.simulateAndReplay(paths, configuration)
            #expect(!injected.isEmpty)
            for misuse in injected {
                let reported = states[misuse.session]?.anomalies.contains { $0.code == misuse.code && $0.event.sequence == misuse.sequence } ?? false
                #expect(reported, "\(misuse.code) injected at \(misuse.session) seq \(misuse.sequence) was not reported")
                codes.insert(misuse.code)
            }
        }
        #expect(codes == Set(AnomalyCode.allCases), "never injected: \(Set(AnomalyCode.allCases).subtracting(codes).sorted { $0.rawValue < $1.rawValue })")
    }

    @Test("the same seed gives the same events; another seed, other events")
    func deterministic() throws {
        let app = try StoryboardApp([try Storyboard.load(path: Self.demo)])
        func run(_ seed: UInt64) -> [[UInt8]] {
            var simulator = StoryboardSimulator(
                app: app, configuration: SimulationConfiguration(sessions: 20, seed: seed, idiom: "pad", misuseRate: 0.05), makeGenerator: SplitMix64.init(seed:))
            var lines: [[UInt8]] = []
            while simulator.step(into: &lines) {}
            return lines
        }
        #expect(run(7) == run(7))
        #expect(run(7) != run(8))
    }

    @Test("the demo storyboard's sessions use tabs, the split view, the container, the popover, unwinds and cause confirmations")
    func demoExercisesEverything() throws {
        let app = try StoryboardApp([try Storyboard.load(path: Self.demo)])
        var simulator = StoryboardSimulator(
            app: app, configuration: SimulationConfiguration(sessions: 60, seed: 3, idiom: "pad"), makeGenerator: SplitMix64.init(seed:))
        var lines: [[UInt8]] = []
        while simulator.step(into: &lines) {}
        let text = lines.map { String(decoding: $0, as: UTF8.self) }
        for needle in [
            #""type":"tab.select""#, #""type":"split.set""#, #""kind":"embed""#, #""kind":"popoverPresentation""#, #""kind":"unwind""#,
            #""kind":"custom""#, #""cause":"#, #""type":"traits.change""#, #""type":"app.background""#, #""type":"nav.pop""#, #""type":"dismiss""#,
        ] {
            #expect(text.contains { $0.contains(needle) }, "no event has \(needle)")
        }
    }
}
