import Dispatch
import NavlogEvents
import NavlogReplay
public import NavlogReplayStore
import NavlogStore

/// The derived rows from the replay index's focus journals (``FocusJournal``) instead of a
/// replay of the log: the journals were written when the checkpoints were built, so a query
/// reads a few records per screen change rather than every event. Sessions still open at the
/// end of the log are finished from their checkpointed end state.
///
/// Gives the same rows as ``DerivedTableScanner`` on a log stored in `seq` order (a test
/// compares the two); where events arrived late, the journals hold each session's rows in `seq`
/// order (E4: the index re-derived it) where a replay in log order would not. `events` rows,
/// which the journals do not hold, come from one plain pass over the log after them.
///
/// A sink that adds rows up (``MergeableTableSink``: the reports of `navlog query`) is filled
/// in parts side by side, one per core the index builds with, each part the sessions whose id
/// hashes to it, and the parts merged.
public struct JournalScanner {
    /// The replay index (refreshed by ``scan(into:)``).
    public let index: ReplayIndex
    /// Which sessions and times.
    public let filter: AnalyticsFilter

    /// A scanner over `index` restricted by `filter`.
    public init(index: ReplayIndex, filter: AnalyticsFilter = AnalyticsFilter()) {
        self.index = index
        self.filter = filter
    }

    /// Brings the index up to date and feeds `sink` from the journals.
    /// - Returns: false when the journals cannot be used (no writable index, or damage): then
    ///   nothing was given to `sink`, and the caller should use ``DerivedTableScanner``.
    /// - Parameter progress: told how many events the index build replayed so far, when it has to.
    public func scan<Sink: DerivedTableSink>(into sink: inout Sink, progress: ((Int) -> Void)? = nil) throws -> Bool {
        guard index.directory != nil else { return false }
        try index.refresh(progress: progress)
        guard let journals = index.focusJournals() else { return false }
        var parts: [JournalPart]
        do {
            let count = max(1, index.workers)
            if count > 1, !sink.wantsEvents, !sink.takesEventSource, let mergeable = sink as? any MergeableTableSink {
                let filled = try fillInParts(mergeable, from: journals, parts: count)
                sink = filled.sink as! Sink
                parts = filled.parts
            } else {
                parts = [JournalPart(number: 0, of: 1, filter: filter)]
                try parts[0].read(journals, into: &sink)
            }
        } catch let malformed as FocusJournals.Malformed {
            throw index.unreadableJournal(malformed)
        }
        try finishOpenSessions(&parts, into: &sink)
        if sink.wantsEvents || sink.takesEventSource {
            // Every event gets its session's tags as the journals know them, so an event stored
            // before its session's session.start has them too.
            var known: [String: (tags: SessionTags, included: Bool)] = [:]
            for part in parts {
                for (id, n) in part.numbers { known[id] = (part.sessions[n].tags, part.sessions[n].included) }
            }
            try sink.events(EventRowSource(reader: index.log, filter: filter, sessions: known))
        }
        return true
    }

    /// Fills a part of `sink` per part of the sessions, each on a thread of its own (the first
    /// on this one), and merges them.
    private func fillInParts<Sink: MergeableTableSink>(
        _ sink: Sink, from journals: FocusJournals, parts count: Int
    ) throws -> (
        sink: Sink, parts: [JournalPart]
    ) {
        let runs = (0..<count).map { number in
            PartRun(part: JournalPart(number: number, of: count, filter: filter), sink: number == 0 ? sink : sink.emptyPart())
        }
        let group = DispatchGroup()
        for run in runs.dropFirst() {
            DispatchQueue.global(qos: .userInitiated).async(group: group) { run.read(journals) }
        }
        runs[0].read(journals)
        group.wait()
        if let failure = runs.lazy.compactMap(\.failure).first { throw failure }
        var merged = runs[0].sink
        for run in runs.dropFirst() { merged.merge(run.sink) }
        return (merged, runs.map(\.part))
    }

    /// Sessions with no session.end yet: their last view and figures from their end state
    /// (the seeker takes the one the index keeps for such a session), in order of id.
    private func finishOpenSessions<Sink: DerivedTableSink>(_ parts: inout [JournalPart], into sink: inout Sink) throws {
        let maker = DerivedRowMaker(filter: filter)
        let seeker = SessionSeeker(index: index)
        var open: [(id: String, part: Int, n: Int)] = []
        for (number, part) in parts.enumerated() {
            for (id, n) in part.numbers where !part.sessions[n].ended { open.append((id, number, n)) }
        }
        for (id, number, n) in open.sorted(by: { $0.id < $1.id }) {
            guard let end = try seeker.replay(session: id, to: .end) else { continue }
            if parts[number].sessions[n].tags == SessionTags() {
                let info = end.info
                parts[number].sessions[n].tags = SessionTags(
                    app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? "")
            }
            let last = end.info.lastTimestamp ?? 0
            let global = parts[number].globalNumber(n)
            maker.rows(of: .end(FocusJournal.Ending(end, end: last)), at: last, session: id, number: global, &parts[number].sessions[n], ended: false, into: &sink)
        }
    }
}

/// What a scan knows of the sessions of one part while it reads the journals.
struct JournalPart {
    /// Which part, of how many.
    let number: Int
    let count: Int
    let filter: AnalyticsFilter
    /// Sessions by number in this part (in order of first record), and their numbers by id.
    var sessions: [DerivedRowMaker.Session] = []
    var numbers: [String: Int] = [:]

    init(number: Int, of count: Int, filter: AnalyticsFilter) {
        (self.number, self.count, self.filter) = (number, count, filter)
    }

    /// The number rows give session `n` of this part: unique across the parts.
    func globalNumber(_ n: Int) -> Int { n * count + number }

    /// Gives `sink` the rows of this part's sessions' records.
    mutating func read<Sink: DerivedTableSink>(_ journals: FocusJournals, into sink: inout Sink) throws {
        let maker = DerivedRowMaker(filter: filter)
        // The journal's string numbers map to sessions through `frameSessions`, so most
        // records need no lookup by id.
        var frameSessions: [Int] = []
        try journals.forEachRecord(
            controllerIDs: sink.wantsControllerIDs, part: number, of: count, frameStarted: { frameSessions.removeAll(keepingCapacity: true) }
        ) { record, key in
            let n: Int
            if key < frameSessions.count, frameSessions[key] >= 0 {
                n = frameSessions[key]
            } else {
                n = session(record.session)
                if key >= frameSessions.count { frameSessions.append(contentsOf: repeatElement(-1, count: key + 1 - frameSessions.count)) }
                frameSessions[key] = n
            }
            maker.rows(of: record.change, at: record.timestamp, session: record.session, number: globalNumber(n), &sessions[n], ended: true, into: &sink)
        }
    }

    /// The number of session `id`, added when new.
    private mutating func session(_ id: String) -> Int {
        if let known = numbers[id] { return known }
        sessions.append(DerivedRowMaker.Session(id: id, filter: filter))
        numbers[id] = sessions.count - 1
        return sessions.count - 1
    }
}

/// One part of a scan in parts and its sink, read on a thread of its own.
///
/// `@unchecked Sendable`: each run is used by one thread at a time; the thread that starts the
/// parts reads them only after `DispatchGroup.wait()`, which orders the accesses.
private final class PartRun<Sink: MergeableTableSink>: @unchecked Sendable {
    var part: JournalPart
    var sink: Sink
    var failure: (any Error)?

    init(part: JournalPart, sink: Sink) {
        (self.part, self.sink) = (part, sink)
    }

    func read(_ journals: FocusJournals) {
        do {
            try part.read(journals, into: &sink)
        } catch {
            failure = error
        }
    }
}
