public import NavlogJSON
import NavlogReplay

/// The reports of `navlog query`, each a sink over the derived rows of one scan.

/// The value at quantile `q` (0…1) of `values`, nearest rank; 0 for none.
public func percentile(_ values: [Int64], _ q: Double) -> Int64 {
    percentile(sorted: values.sorted(), q)
}

/// The value at quantile `q` of values already sorted.
public func percentile(sorted: [Int64], _ q: Double) -> Int64 {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// The values at quantiles `low` ≤ `high` of `values`, nearest rank as ``percentile(_:_:)``,
/// found by selection rather than a sort (a screen of a large log has millions of views).
public func percentiles(_ values: [Int64], _ low: Double, _ high: Double) -> (Int64, Int64) {
    guard !values.isEmpty else { return (0, 0) }
    func rank(_ q: Double) -> Int { min(max(Int((q * Double(values.count)).rounded(.up)) - 1, 0), values.count - 1) }
    var values = values
    let (lowRank, highRank) = (rank(low), rank(high))
    return values.withUnsafeMutableBufferPointer { buffer in
        let highValue = select(highRank, in: buffer, 0..<buffer.count)
        // Everything below the high rank is now at most its value: the low one is among them.
        let lowValue = lowRank == highRank ? highValue : select(lowRank, in: buffer, 0..<highRank)
        return (lowValue, highValue)
    }
}

/// Moves the `k`-th smallest of `buffer[range]` to `buffer[k]`, the smaller ones before it and
/// the larger after (quickselect, the pivot a median of three), and returns it.
private func select(_ k: Int, in buffer: UnsafeMutableBufferPointer<Int64>, _ range: Range<Int>) -> Int64 {
    var (low, high) = (range.lowerBound, range.upperBound - 1)
    while low < high {
        let middle = low + (high - low) / 2
        // Median of three to `middle`, so sorted or constant runs do not go quadratic.
        if buffer[middle] < buffer[low] { buffer.swapAt(middle, low) }
        if buffer[high] < buffer[low] { buffer.swapAt(high, low) }
        if buffer[high] < buffer[middle] { buffer.swapAt(high, middle) }
        let pivot = buffer[middle]
        var (i, j) = (low, high)
        while i <= j {
            while buffer[i] < pivot { i += 1 }
            while buffer[j] > pivot { j -= 1 }
            if i <= j {
                buffer.swapAt(i, j)
                i += 1
                j -= 1
            }
        }
        if k <= j {
            high = j
        } else if k >= i {
            low = i
        } else {
            break
        }
    }
    return buffer[k]
}

/// `screens`: per screen, views, unique sessions, and foreground dwell total / p50 / p90 (F4).
public struct ScreensReport: MergeableTableSink {
    /// One screen's figures.
    public struct Row: Sendable, Hashable {
        public var screen: String
        public var storyboardID: String?
        public var views: Int
        public var sessions: Int
        /// µs.
        public var dwellTotal: Int64
        public var dwellP50: Int64
        public var dwellP90: Int64
    }

    private struct Key: Hashable {
        var screen: String
        var storyboardID: String?
    }

    /// Per screen, its place in the lists below: one lookup (one hash of the screen's name) per
    /// visit, not one per list.
    private var places: [Key: Int] = [:]
    private var keys: [Key] = []
    private var dwells: [[Int64]] = []
    private var sessions: [Set<Int>] = []
    /// Per screen, the session of its last visit (-1: none yet).
    private var lastSession: [Int] = []

    public init() {}

    public var wantsTransitions: Bool { false }
    public var wantsSessions: Bool { false }
    public var wantsControllerIDs: Bool { false }

    public mutating func visit(_ row: ScreenVisit) {
        let place = place(of: Key(screen: row.view.screen, storyboardID: row.view.storyboardID))
        dwells[place].append(row.view.dwell)
        // A session's visits come together (the journals group each session's records), so
        // most repeat the last session counted here: no set insertion for them.
        if lastSession[place] != row.sessionNumber {
            lastSession[place] = row.sessionNumber
            sessions[place].insert(row.sessionNumber)
        }
    }

    public func emptyPart() -> ScreensReport { ScreensReport() }

    public mutating func merge(_ part: ScreensReport) {
        for (from, key) in part.keys.enumerated() {
            let place = self.place(of: key)
            dwells[place].append(contentsOf: part.dwells[from])
            sessions[place].formUnion(part.sessions[from])
        }
    }

    /// The place of `key` in the lists, added when new.
    private mutating func place(of key: Key) -> Int {
        if let known = places[key] { return known }
        places[key] = keys.count
        keys.append(key)
        dwells.append([])
        sessions.append([])
        lastSession.append(-1)
        return keys.count - 1
    }

    /// The rows, most viewed first.
    public var rows: [Row] {
        keys.indices.map { place in
            let (key, values) = (keys[place], dwells[place])
            let (p50, p90) = percentiles(values, 0.5, 0.9)
            return Row(
                screen: key.screen, storyboardID: key.storyboardID, views: values.count, sessions: sessions[place].count,
                dwellTotal: values.reduce(0, +), dwellP50: p50, dwellP90: p90)
        }.sorted { ($1.views, $0.screen, $0.storyboardID ?? "") < ($0.views, $1.screen, $1.storyboardID ?? "") }
    }
}

/// `transitions`: from-screen → to-screen counts, by how.
public struct TransitionsReport: MergeableTableSink {
    /// One (from, to, how) and how often.
    public struct Row: Sendable, Hashable {
        public var from: String?
        public var to: String
        public var how: String
        public var count: Int
    }

    private struct Key: Hashable {
        var from: String?
        var to: String
        var how: String
    }

    private var counts: [Key: Int] = [:]

    public init() {}

    public var wantsVisits: Bool { false }
    public var wantsSessions: Bool { false }
    public var wantsControllerIDs: Bool { false }

    public mutating func transition(_ row: TransitionRow) {
        counts[Key(from: row.from, to: row.to, how: row.how), default: 0] += 1
    }

    public func emptyPart() -> TransitionsReport { TransitionsReport() }

    public mutating func merge(_ part: TransitionsReport) {
        counts.merge(part.counts, uniquingKeysWith: +)
    }

    /// The rows, most frequent first.
    public var rows: [Row] {
        counts.map { Row(from: $0.key.from, to: $0.key.to, how: $0.key.how, count: $0.value) }
            .sorted { ($1.count, $0.from ?? "", $0.to, $0.how) < ($0.count, $1.from ?? "", $1.to, $1.how) }
    }
}

/// `paths`: the most frequent sequences of `length` consecutive screens within sessions.
public struct PathsReport: MergeableTableSink {
    /// One path and how many times (and in how many sessions) it occurred.
    public struct Row: Sendable, Hashable {
        public var path: [String]
        public var count: Int
        public var sessions: Int
    }

    public let length: Int
    public let from: String?
    public let to: String?
    private var current: [Int: [String]] = [:]
    private var counts: [[String]: Int] = [:]
    private var sessionCounts: [[String]: Int] = [:]

    /// Paths of `length` screens; only those starting at `from` or ending at `to` when given.
    public init(length: Int, from: String? = nil, to: String? = nil) {
        self.length = max(1, length)
        self.from = from
        self.to = to
    }

    public var wantsControllerIDs: Bool { false }

    public mutating func visit(_ row: ScreenVisit) {
        current[row.sessionNumber, default: []].append(row.view.screen)
    }

    public mutating func session(_ row: SessionRow) {
        guard let screens = current.removeValue(forKey: row.sessionNumber), screens.count >= length else { return }
        var seen = Set<[String]>()
        for start in 0...(screens.count - length) {
            let path = Array(screens[start..<(start + length)])
            if let from, path.first != from { continue }
            if let to, path.last != to { continue }
            counts[path, default: 0] += 1
            if seen.insert(path).inserted { sessionCounts[path, default: 0] += 1 }
        }
    }

    public func emptyPart() -> PathsReport { PathsReport(length: length, from: from, to: to) }

    public mutating func merge(_ part: PathsReport) {
        current.merge(part.current) { mine, _ in mine }
        counts.merge(part.counts, uniquingKeysWith: +)
        sessionCounts.merge(part.sessionCounts, uniquingKeysWith: +)
    }

    /// The `top` most frequent paths.
    public func rows(top: Int) -> [Row] {
        Array(
            counts.map { Row(path: $0.key, count: $0.value, sessions: sessionCounts[$0.key] ?? 0) }
                .sorted { ($1.count, $0.path.joined(separator: "\u{1}")) < ($0.count, $1.path.joined(separator: "\u{1}")) }
                .prefix(top))
    }
}

/// `funnel`: sessions reaching each step of an ordered list of screens, within a time window
/// from the first step when one is given.
public struct FunnelReport: MergeableTableSink {
    /// One step.
    public struct Row: Sendable, Hashable {
        public var step: Int
        public var screen: String
        /// Sessions that reached this step (in order).
        public var sessions: Int
        /// Of the previous step's sessions, the share that reached this one (1 for the first).
        public var conversion: Double
        /// Of the first step's sessions, the share that reached this one.
        public var overall: Double
        /// The median time from the previous step to this one, µs (0 for the first).
        public var medianTime: Int64
    }

    public let steps: [String]
    public let within: Int64?
    private var visits: [Int: [(screen: String, start: Int64)]] = [:]
    private var reached: [Int] = []
    private var times: [[Int64]] = []

    /// A funnel over `steps` (screen names), each step to be reached within `within` µs of the first.
    public init(steps: [String], within: Int64? = nil) {
        self.steps = steps
        self.within = within
        reached = Array(repeating: 0, count: steps.count)
        times = Array(repeating: [], count: steps.count)
    }

    public var wantsControllerIDs: Bool { false }

    public mutating func visit(_ row: ScreenVisit) {
        guard steps.contains(row.view.screen) else { return }
        visits[row.sessionNumber, default: []].append((row.view.screen, row.view.start))
    }

    public mutating func session(_ row: SessionRow) {
        guard let sequence = visits.removeValue(forKey: row.sessionNumber), !steps.isEmpty else { return }
        // Try every occurrence of the first step as the start; keep the one that gets furthest.
        var best: [Int64] = []
        for (index, visit) in sequence.enumerated() where visit.screen == steps[0] {
            var reachedTimes = [visit.start]
            var position = index + 1
            for step in steps.dropFirst() {
                guard let found = sequence[position...].firstIndex(where: { $0.screen == step }) else { break }
                let time = sequence[found].start
                if let within, time - visit.start > within { break }
                reachedTimes.append(time)
                position = found + 1
            }
            if reachedTimes.count > best.count { best = reachedTimes }
            if best.count == steps.count { break }
        }
        for (step, time) in best.enumerated() {
            reached[step] += 1
            if step > 0 { times[step].append(time - best[step - 1]) }
        }
    }

    public func emptyPart() -> FunnelReport { FunnelReport(steps: steps, within: within) }

    public mutating func merge(_ part: FunnelReport) {
        visits.merge(part.visits) { mine, _ in mine }
        for step in steps.indices {
            reached[step] += part.reached[step]
            times[step].append(contentsOf: part.times[step])
        }
    }

    /// One row per step.
    public var rows: [Row] {
        steps.enumerated().map { step, screen in
            let previous = step == 0 ? reached[0] : reached[step - 1]
            return Row(
                step: step + 1, screen: screen, sessions: reached[step], conversion: previous == 0 ? 0 : Double(reached[step]) / Double(previous),
                overall: reached[0] == 0 ? 0 : Double(reached[step]) / Double(reached[0]), medianTime: percentile(times[step], 0.5))
        }
    }
}

/// `exits`: the screen focused when the app went to the background or the session ended.
public struct ExitsReport: MergeableTableSink {
    /// One screen and reason.
    public struct Row: Sendable, Hashable {
        public var screen: String
        public var reason: String
        public var count: Int
        /// Share of all exits of that reason.
        public var share: Double
    }

    private var counts: [String: [String: Int]] = [:]

    public init() {}

    public var wantsControllerIDs: Bool { false }

    public mutating func exit(_ row: ExitRow) {
        counts[row.reason, default: [:]][row.screen, default: 0] += 1
    }

    public func emptyPart() -> ExitsReport { ExitsReport() }

    public mutating func merge(_ part: ExitsReport) {
        for (reason, screens) in part.counts { counts[reason, default: [:]].merge(screens, uniquingKeysWith: +) }
    }

    /// The rows, by reason then most frequent first.
    public var rows: [Row] {
        counts.sorted { $0.key < $1.key }.flatMap { reason, screens in
            let total = screens.values.reduce(0, +)
            return screens.map { Row(screen: $0.key, reason: reason, count: $0.value, share: Double($0.value) / Double(max(total, 1))) }
                .sorted { ($1.count, $0.screen) < ($0.count, $1.screen) }
        }
    }
}

/// `anomalies`: counts by code and app version, first and last seen.
public struct AnomalyCountsReport: DerivedTableSink {
    /// One code in one app version.
    public struct Row: Sendable, Hashable {
        public var code: String
        public var name: String
        public var fatal: Bool
        public var app: String
        public var version: String
        public var count: Int
        public var sessions: Int
        public var first: Int64
        public var last: Int64
    }

    private struct Key: Hashable {
        var code: String
        var app: String
        var version: String
    }

    private var rowsByKey: [Key: Row] = [:]
    private var sessions: [Key: Set<Int>] = [:]

    public init() {}

    public var wantsControllerIDs: Bool { false }

    public mutating func anomaly(_ row: AnomalyRow) {
        let key = Key(code: row.code, app: row.tags.app, version: row.tags.version)
        var entry =
            rowsByKey[key]
            ?? Row(code: row.code, name: row.name, fatal: row.fatal, app: row.tags.app, version: row.tags.version, count: 0, sessions: 0, first: .max, last: .min)
        entry.count += 1
        entry.first = min(entry.first, row.timestamp)
        entry.last = max(entry.last, row.timestamp)
        if sessions[key, default: []].insert(row.sessionNumber).inserted { entry.sessions += 1 }
        rowsByKey[key] = entry
    }

    /// The rows, by code number then app and version.
    public var rows: [Row] {
        rowsByKey.values.sorted {
            (Int($0.code.dropFirst()) ?? 0, $0.app, $0.version) < (Int($1.code.dropFirst()) ?? 0, $1.app, $1.version)
        }
    }
}

/// `sessions`: the distribution of session length, screens per session, and depth of stacks
/// and presentation chains.
public struct SessionsReport: DerivedTableSink {
    /// One measure over all sessions.
    public struct Row: Sendable, Hashable {
        public var measure: String
        public var sessions: Int
        public var mean: Double
        public var p50: Int64
        public var p90: Int64
        public var max: Int64
    }

    private var durations: [Int64] = []
    private var events: [Int64] = []
    private var visits: [Int64] = []
    private var screens: [Int64] = []
    private var stacks: [Int64] = []
    private var presentations: [Int64] = []
    private var anomalies: [Int64] = []

    public init() {}

    public var wantsControllerIDs: Bool { false }

    public mutating func session(_ row: SessionRow) {
        durations.append(row.last - row.first)
        events.append(Int64(row.events))
        visits.append(Int64(row.visits))
        screens.append(Int64(row.screens))
        stacks.append(Int64(row.maxStackDepth))
        presentations.append(Int64(row.maxPresentationDepth))
        anomalies.append(Int64(row.anomalies))
    }

    /// One row per measure.
    public var rows: [Row] {
        [
            ("duration µs", durations), ("events", events), ("screen visits", visits), ("distinct screens", screens),
            ("deepest navigation stack", stacks), ("deepest presentation chain", presentations), ("anomalies", anomalies),
        ].map { name, values in
            Row(
                measure: name, sessions: values.count, mean: values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count),
                p50: percentile(values, 0.5), p90: percentile(values, 0.9), max: values.max() ?? 0)
        }
    }
}

/// Several reports fed by one scan.
public struct CombinedSink<A: DerivedTableSink, B: DerivedTableSink>: DerivedTableSink {
    public var first: A
    public var second: B

    public init(_ first: A, _ second: B) {
        self.first = first
        self.second = second
    }

    public mutating func event(_ row: EventRow) {
        first.event(row)
        second.event(row)
    }
    public mutating func visit(_ row: ScreenVisit) {
        first.visit(row)
        second.visit(row)
    }
    public mutating func transition(_ row: TransitionRow) {
        first.transition(row)
        second.transition(row)
    }
    public mutating func session(_ row: SessionRow) {
        first.session(row)
        second.session(row)
    }
    public mutating func anomaly(_ row: AnomalyRow) {
        first.anomaly(row)
        second.anomaly(row)
    }
    public mutating func exit(_ row: ExitRow) {
        first.exit(row)
        second.exit(row)
    }
    public var wantsEvents: Bool { first.wantsEvents || second.wantsEvents }
    public var wantsControllerIDs: Bool { first.wantsControllerIDs || second.wantsControllerIDs }
}

// MARK: - The rows as JSON (the analytics page's screens, transitions and funnel)

extension ScreensReport.Row: JSONWritable {
    /// `{"screen", "storyboardID", "views", "sessions", "dwellTotal", "dwellP50", "dwellP90"}`.
    public func appendJSON(to json: inout JSONWriter) {
        json.object(
            ("screen", screen), ("storyboardID", storyboardID), ("views", views), ("sessions", sessions), ("dwellTotal", dwellTotal), ("dwellP50", dwellP50),
            ("dwellP90", dwellP90))
    }
}

extension TransitionsReport.Row: JSONWritable {
    /// `{"from", "to", "how", "count"}`.
    public func appendJSON(to json: inout JSONWriter) {
        json.object(("from", from), ("to", to), ("how", how), ("count", count))
    }
}

extension FunnelReport.Row: JSONWritable {
    /// `{"step", "screen", "sessions", "conversion", "overall", "medianTime"}`.
    public func appendJSON(to json: inout JSONWriter) {
        json.object(("step", step), ("screen", screen), ("sessions", sessions), ("conversion", conversion), ("overall", overall), ("medianTime", medianTime))
    }
}
