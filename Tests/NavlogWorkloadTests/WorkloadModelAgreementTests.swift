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

    @Test("after every action of 300 sessions, the focused screen and the presentation depth agree", arguments: [UInt64(5), 6])
    func agreement(seed: UInt64) throws {
        let configuration = WorkloadConfiguration(seed: seed)
        let tables = WorkloadTables(configuration)
        var parser = EventLineParser()
        var batch = EventBatch()
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        var compared = 0
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
                if compared > 0 && replayer.anomalies.count > 0 {
                    Issue.record("session \(number): the generator made a misuse: \(replayer.anomalies[0].message)")
                    break
                }
            }
        }
        #expect(compared > 10_000)
        // Every kind of action the generator takes was compared at least once.
        for action in [
            SessionSimulator.Action.push, .pop, .interactivePop, .popToRoot, .popTo, .setStack, .selectTab, .present, .presentAlert, .dismiss, .interactiveDismiss, .unwind,
            .background, .changeTraits, .showDetail, .swapChild,
        ] {
            #expect(actions[action, default: 0] > 0, "no \(action) was compared")
        }
    }
}
