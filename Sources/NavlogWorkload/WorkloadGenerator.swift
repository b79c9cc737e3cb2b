/// A deterministic source of realistic UIKit navigation traffic, as JSON Lines bytes.
///
/// The generator keeps ``WorkloadConfiguration/concurrentSessions`` sessions live at once and
/// interleaves their events in global device-time order. Each session is one app launch:
/// `session.start` (app, version, build, os, device, idiom, traits), a `window.root` and the
/// container setup of its shape (a `UITabBarController` of `UINavigationController`s with
/// `tab.set` and `nav.set`; on iPads often a `UISplitViewController` with `split.set`; or a plain
/// navigation controller), then a random walk of user actions: pushes (often after a storyboard
/// `segue` with phases `should`/`prepare`/`perform`, or a `show` intent), back-button and
/// interactive edge-swipe pops (some cancelled), `popTo`/`popToRoot`/`nav.set`, tab switches,
/// modal presentations of every common style (popovers with anchors, alerts and action sheets)
/// and their dismissals (some by an interactive swipe, some by an `unwind`), `showDetail` in split
/// views, size-class changes that collapse and expand them, embedded children added by embed
/// segues and swapped by segmented controls, `vc.appear`/`vc.disappear` with `will` then `did`
/// around every change, background periods and analytics `mark`s. Every session's `seq` counts
/// 1, 2, 3…, its integer `ts` never goes back, and an ended session is replaced by a new one a
/// few seconds later, so the stream never ends.
///
/// Every line is valid per `schemas/README.md`. Every event type the schema lists is generated.
/// What is deliberately *not* generated:
/// - RFC 3339 string timestamps (`ts` is always an integer), trusted `_…` fields, and the
///   protocol `v` except on `session.start`;
/// - transport hello lines (they are not events);
/// - segue kinds `relationship` and `custom` (and the `relationship` field): containers are built
///   with `tab.set`/`split.set`/`nav.set` instead, and a custom segue that leaves its destination
///   outside the hierarchy is an anomaly (R18), not realistic traffic;
/// - the `custom` presentation style, `child.willMove` with a non-nil parent (UIKit's
///   `addChild` sends it implicitly) and `child.didMove` to nil (sent by `removeFromParent`);
/// - anomalies in general: the walk stays consistent with UIKit, so replaying it raises none.
///
/// The same configuration always produces the same bytes (the generator has its own xoshiro256**
/// generator and never reads the clock or the system's random source).
///
/// The generator's model of UIKit (`SessionSimulator`) is a second one, deliberately independent
/// of the replayer's (NavlogReplay): written from the rules on its own, it is the oracle the
/// replayer is checked against (WorkloadModelAgreementTests compare, after every action, the
/// screens it says are shown with the ones the replayer derives from its events). So this module
/// depends on no navlog module but NavlogJSON and must never import NavlogReplay; Package.swift's
/// header declares it, and tools/package-graph.py --check holds the targets to that.
///
/// ```swift
/// var generator = WorkloadGenerator(WorkloadConfiguration(seed: 42))
/// let bytes = generator.ndjson(events: 10_000)   // 10,000 lines, each ending in "\n"
/// ```
public struct WorkloadGenerator: Sendable {
    private let tables: WorkloadTables
    private let seed: UInt64
    private var sessions: [SessionSimulator]
    private var heap: [Int]
    private var spacing: Xoshiro256StarStar

    /// How many lines the generator has produced.
    public private(set) var eventsGenerated = 0

    /// How many sessions have been started so far (live ones included).
    public private(set) var sessionsStarted = 0

    /// A generator for `configuration`.
    /// - Parameter configuration: what to generate; its seed decides every byte.
    public init(_ configuration: WorkloadConfiguration) {
        let tables = WorkloadTables(configuration)
        self.tables = tables
        seed = configuration.seed
        spacing = Xoshiro256StarStar(seed: SplitMix64.mix(configuration.seed, 0x5EED_5E55_1015))
        sessions = []
        sessions.reserveCapacity(configuration.concurrentSessions)
        heap = []
        heap.reserveCapacity(configuration.concurrentSessions)
        for slot in 0..<configuration.concurrentSessions {
            var session = SessionSimulator(tables: tables)
            // The first sessions start within the first 20 seconds.
            let start = configuration.startTime + Int64(spacing.below(20_000_000))
            session.reset(seed: SplitMix64.mix(seed, UInt64(sessionsStarted)), start: start)
            sessionsStarted += 1
            session.step()
            sessions.append(session)
            heap.append(slot)
            siftUp(heap.count - 1)
        }
    }

    /// Replaces `line` with the next event line: one JSON object, without a trailing newline.
    ///
    /// The stream never ends: ended sessions are replaced by new ones.
    /// - Parameter line: the buffer to fill; it is cleared first and its capacity reused.
    public mutating func nextLine(into line: inout [UInt8]) {
        line.removeAll(keepingCapacity: true)
        let slot = heap[0]
        sessions[slot].take(into: &line)
        while sessions[slot].isDrained {
            if sessions[slot].phase == .ended {
                let start = sessions[slot].clock + Int64(spacing.between(300_000, 25_000_000))
                sessions[slot].reset(seed: SplitMix64.mix(seed, UInt64(sessionsStarted)), start: start)
                sessionsStarted += 1
            }
            sessions[slot].step()
        }
        siftDown(0)
        eventsGenerated += 1
    }

    /// The next `count` event lines, each without a trailing newline.
    /// - Parameter count: how many lines (0 or more).
    /// - Returns: the lines, in stream order.
    public mutating func lines(_ count: Int) -> [[UInt8]] {
        var result: [[UInt8]] = []
        result.reserveCapacity(max(0, count))
        var line: [UInt8] = []
        for _ in 0..<max(0, count) {
            nextLine(into: &line)
            result.append(line)
        }
        return result
    }

    /// The next `count` event lines as one JSON Lines buffer: each line followed by `\n`.
    /// - Parameter count: how many lines (0 or more).
    /// - Returns: the bytes, ready to write to a file or a socket.
    public mutating func ndjson(events count: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(max(0, count) * 200)
        var line: [UInt8] = []
        line.reserveCapacity(1_024)
        for _ in 0..<max(0, count) {
            nextLine(into: &line)
            result.append(contentsOf: line)
            result.append(UInt8(ascii: "\n"))
        }
        return result
    }

    /// The device time of the next line, µs since the epoch.
    public var nextTimestamp: Int64 { sessions[heap[0]].nextTimestamp }

    // MARK: - The heap of sessions, keyed by (next timestamp, slot)

    @inline(__always)
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let ta = sessions[a].nextTimestamp
        let tb = sessions[b].nextTimestamp
        return ta < tb || (ta == tb && a < b)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        let count = heap.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var best = left
            let right = left + 1
            if right < count && precedes(heap[right], heap[left]) { best = right }
            guard precedes(heap[best], heap[parent]) else { return }
            heap.swapAt(best, parent)
            parent = best
        }
    }
}
