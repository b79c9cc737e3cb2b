import Foundation
import NavlogReplay
import NavlogWorkload
import Testing

/// Properties that hold for every session: checked after every event of thousands of
/// generated UIKit-like sessions.
@Suite("Replay properties over generated sessions")
struct ReplayPropertyTests {
    /// H3: every controller is in at most one place, and its node says which.
    static func placementViolations(_ replayer: SessionReplayer) -> [String] {
        let hierarchy = replayer.hierarchy
        var places: [Int32: [String]] = [:]
        func note(_ handle: Int32, _ place: String) { places[handle, default: []].append(place) }
        for (index, window) in hierarchy.windows.enumerated() where window.root >= 0 { note(window.root, "root of window \(index)") }
        for (index, node) in hierarchy.nodes.enumerated() {
            for item in node.items { note(item, "item of \(index)") }
            for column in [node.primary, node.secondary, node.supplementary] where column >= 0 { note(column, "column of \(index)") }
            for child in node.children { note(child, "child of \(index)") }
            if node.presented >= 0 { note(node.presented, "presented by \(index)") }
        }
        var problems: [String] = []
        for (handle, list) in places where list.count > 1 {
            problems.append("\(replayer.id(of: ControllerHandle(index: handle))) is in \(list.count) places: \(list)")
        }
        for (index, node) in hierarchy.nodes.enumerated() {
            let listed = places[Int32(index)] ?? []
            if (node.placement == .none) != listed.isEmpty {
                problems.append("\(replayer.id(of: ControllerHandle(index: Int32(index)))) has placement \(node.placement) but is listed in \(listed)")
            }
        }
        return problems
    }

    @Test("no internal error; H3 holds; the focus is attached; the visible set contains the focus path; checkpoints resume exactly", arguments: [UInt64(11), 12, 13])
    func properties(seed: UInt64) throws {
        var configuration = WorkloadConfiguration(seed: seed)
        configuration.concurrentSessions = 8
        configuration.meanEventsPerSession = 400
        var generator = WorkloadGenerator(configuration)
        let lines = generator.lines(6_000).map { String(decoding: $0, as: UTF8.self) }
        var shadows: [String: SessionReplayer] = [:]
        var failures = 0
        var checkpoints = 0
        var anomalies: [String: Int] = [:]
        try ReplayTestSupport.replay(lines) { session, line, replayer, _, applySame in
            guard failures < 5 else { return }
            var original: [UInt8] = []
            replayer.appendJSON(session: session, to: &original)
            // Every 5th event of a session, the shadow restarts from a checkpoint of the real
            // state; in between it replays the same events. Their outputs must never differ.
            if var shadow = shadows[session] {
                applySame(&shadow)
                shadows[session] = shadow
                var resumed: [UInt8] = []
                shadow.appendJSON(session: session, to: &resumed)
                if original != resumed {
                    failures += 1
                    Issue.record(
                        "seed \(seed) line \(line + 1): replay resumed from a checkpoint differs:\n\(String(decoding: original, as: UTF8.self))\n\(String(decoding: resumed, as: UTF8.self))"
                    )
                }
            }
            let problems = Self.placementViolations(replayer)
            if !problems.isEmpty {
                failures += 1
                Issue.record("seed \(seed) line \(line + 1): \(problems)")
            }
            let path = replayer.focusPath
            if let focus = path.last, !replayer.hierarchy.isAttached(focus.index) {
                failures += 1
                Issue.record("seed \(seed) line \(line + 1): the focus \(replayer.id(of: focus)) is not attached")
            }
            let visible = Set(replayer.visible)
            if !path.allSatisfy(visible.contains) {
                failures += 1
                Issue.record(
                    "seed \(seed) line \(line + 1): focus path \(path.map { replayer.id(of: $0) }) not all visible: \(visible.map { replayer.id(of: $0) })")
            }
            // F4: the screens' dwell never adds up to more than the session has lasted.
            let lasted = (replayer.info.lastTimestamp ?? 0) - (replayer.info.firstTimestamp ?? 0)
            if replayer.dwell.reduce(0, +) > lasted || replayer.dwell.contains(where: { $0 < 0 }) {
                failures += 1
                Issue.record("seed \(seed) line \(line + 1): dwell \(replayer.dwell) exceeds the \(lasted) µs the session lasted")
            }
            if replayer.eventCount % 5 == 1 {
                var encoded: [UInt8] = []
                replayer.encodeCheckpoint(into: &encoded)
                guard let restored = encoded.withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) else {
                    failures += 1
                    Issue.record("seed \(seed) line \(line + 1): a checkpoint of \(encoded.count) bytes does not decode")
                    return
                }
                var again: [UInt8] = []
                restored.encodeCheckpoint(into: &again)
                #expect(again == encoded, "seed \(seed) line \(line + 1): a restored checkpoint encodes differently")
                shadows[session] = restored
                checkpoints += 1
            }
            if let anomaly = replayer.anomalies.last, anomaly.event.index == replayer.eventCount - 1 {
                anomalies[anomaly.code.code, default: 0] += 1
            }
        }
        #expect(checkpoints > 500)
        print("seed \(seed): anomalies by code in generated sessions: \(anomalies.sorted { $0.key < $1.key })")
    }
}
