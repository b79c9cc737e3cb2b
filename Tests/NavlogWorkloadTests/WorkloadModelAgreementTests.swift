import NavlogEvents
import NavlogReplay
import NavlogStore
import Testing

@testable import NavlogWorkload

/// The workload generator keeps its own model of the hierarchy (navigation stacks, tabs, the
/// split view, the presentation chain), written from the rules separately from the replay
/// engine. Two independent models must agree on what the user sees after every action; either
/// one being wrong shows here, which replaying the generator's output alone would not.
@Suite("The workload generator's own model agrees with the replayer")
struct WorkloadModelAgreementTests {
    /// The generator's `0x…` id of controller `handle`, as it writes it.
    static func id(_ simulator: SessionSimulator, _ handle: Int32) -> String {
        "0x" + String(simulator.ctlAddress[Int(handle)], radix: 16)
    }

    @Test(
        "after every action of 300 sessions, the focused screen and the presentation depth agree",
        arguments: [(UInt64(5), false), (6, false), (7, true)])
    func agreement(seed: UInt64, recordingMix: Bool) throws {
        var configuration = WorkloadConfiguration(seed: seed)
        // Seed 7: recorded in production's mix of styles (did-only, will and did, navigation only).
        if recordingMix { configuration.recordingMix = WorkloadConfiguration.productionRecordingMix }
        let tables = WorkloadTables(configuration)
        var parser = EventLineParser()
        var batch = EventBatch()
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        var compared = 0
        var uncomparable = 0
        var actions = [SessionSimulator.Action: Int]()
        for number in 0..<300 {
            var simulator = SessionSimulator(tables: tables)
            simulator.reset(seed: SplitMix64.mix(seed, UInt64(number)), start: 1_763_700_000_000_000)
            var replayer = SessionReplayer()
            var line: [UInt8] = []
            while simulator.phase != .ended {
                simulator.step()
                batch.removeAll()
                var lineNumber = 0
                while !simulator.isDrained {
                    line.removeAll(keepingCapacity: true)
                    simulator.take(into: &line)
                    lineNumber += 1
                    _ = try line.withUnsafeBytes { raw in
                        try parser.parse(raw, lineNumber: lineNumber, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
                    }
                }
                try codec.roundTrip(batch, into: &block)
                for index in 0..<block.count {
                    block.withBody(index) { body in
                        replayer.apply(
                            ReplayEvent(type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: nil, body: body))
                    }
                }
                guard simulator.phase == .running || simulator.phase == .background, simulator.rootController >= 0 else { continue }
                if replayer.anomalies.count > 0 {
                    Issue.record("session \(number): the generator made a misuse: \(replayer.anomalies[0].message)")
                    break
                }
                // A navigation-only session after a cancelled gesture: its events cannot say where
                // the user is (E7), so the models are not compared; its anomalies still are.
                if simulator.style == .navigationOnly && simulator.cancelledGestures > 0 {
                    uncomparable += 1
                    continue
                }
                if let action = simulator.lastAction { actions[action, default: 0] += 1 }
                let expected = Self.id(simulator, simulator.focusedScreen)
                let actual = replayer.focus.map { replayer.id(of: $0) }
                #expect(
                    actual == expected,
                    "session \(number) after \(String(describing: simulator.lastAction)) (seq \(simulator.seq)): the generator shows \(expected), the replayer \(actual ?? "nothing")"
                )
                let presentations = replayer.focusPath.filter { replayer.hierarchy[$0.index].placement == .presented }.count
                #expect(
                    presentations == simulator.contexts.count,
                    "session \(number) after \(String(describing: simulator.lastAction)): \(simulator.contexts.count) presentations in the generator's model, \(presentations) on the replayer's focus path"
                )
                compared += 1
            }
        }
        #expect(compared > 10_000)
        // Navigation-only sessions with a cancelled gesture were played (and showed no anomaly).
        if recordingMix { #expect(uncomparable > 100) }
        // Every kind of action the generator takes was compared at least once.
        for action in [
            SessionSimulator.Action.push, .pop, .interactivePop, .popToRoot, .popTo, .setStack, .selectTab, .present, .presentAlert, .dismiss, .interactiveDismiss, .unwind,
            .background, .changeTraits, .showDetail, .swapChild,
        ] {
            #expect(actions[action, default: 0] > 0, "no \(action) was compared")
        }
    }
}
