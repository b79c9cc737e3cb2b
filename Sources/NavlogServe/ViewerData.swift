import Dispatch
import NavlogAnalytics
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore
import Synchronization

/// What the viewer reads: the log, its replay index and the answers built from them, on two
/// serial queues.
///
/// The log reader, the index and the seeker are classes that keep decoding buffers and open
/// files; they are not meant to be shared between threads. So each queue has its own:
/// - the *interactive* engine answers what a person waits for while stepping through a session
///   (its events, the state at an instant, whether it grew): it never builds the index, so a
///   slider step is never stuck behind a build while navlogd keeps appending;
/// - the *derived* engine brings the replay index up to date (in the background after the log
///   grows, like `navlog index --follow`) and answers from the focus journals (the sessions
///   list, analytics, storyboard coverage).
/// The interactive engine reopens the index each time the derived one has extended it; for a
/// session with events newer than the index it replays from the session's first event.
public final class ViewerData: Sendable {
    private let interactiveQueue = DispatchQueue(label: "navlog.serve.interactive")
    private let derivedQueue = DispatchQueue(label: "navlog.serve.derived")
    private let interactive: ViewerEngine
    private let derived: ViewerEngine
    private let indexing = IndexingState()

    /// Opens the log in `dataDirectory` (the index in `indexDirectory`, default `<data>/replay`).
    /// - Throws: ``StoreError`` when the log cannot be opened (no such directory, damage).
    public init(dataDirectory: String, indexDirectory: String?, storyboards: [String] = []) throws {
        interactive = try ViewerEngine(dataDirectory: dataDirectory, indexDirectory: indexDirectory, storyboards: storyboards)
        derived = try ViewerEngine(dataDirectory: dataDirectory, indexDirectory: indexDirectory, storyboards: storyboards)
        interactive.indexedThrough = { [indexing] in indexing.state.withLock { $0.through } }
        interactive.logGrew = { [weak self] in self?.refreshIndexSoon() }
        derived.indexedThrough = { [indexing] in indexing.state.withLock { $0.through } }
        derived.indexRefreshed = { [indexing] through in indexing.state.withLock { $0.through = max($0.through, through) } }
        // At once, not at the first request: the first page opened replays from a checkpoint,
        // and the sessions list is ready.
        refreshIndexSoon()
        derivedQueue.async { [derived] in _ = try? derived.sessionSummaries() }
    }

    /// Runs `work` on the interactive queue (session pages, live updates).
    func interactive<Answer: Sendable>(_ work: @escaping @Sendable (ViewerEngine) throws -> Answer) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            interactiveQueue.async { [interactive] in
                continuation.resume(with: Result { try work(interactive) })
            }
        }
    }

    /// Runs `work` on the derived queue, after the index is brought up to date (sessions list,
    /// analytics, storyboards).
    func derived<Answer: Sendable>(_ work: @escaping @Sendable (ViewerEngine) throws -> Answer) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            derivedQueue.async { [derived] in
                continuation.resume(
                    with: Result {
                        try derived.refreshIndex(); return try work(derived)
                    })
            }
        }
    }

    /// Queues one index refresh on the derived queue unless one is already waiting there.
    private func refreshIndexSoon() {
        let queue = indexing.state.withLock { state -> Bool in
            defer { state.queued = true }
            return !state.queued
        }
        guard queue else { return }
        derivedQueue.async { [derived, indexing] in
            indexing.state.withLock { $0.queued = false }
            try? derived.refreshIndex()
        }
    }
}

/// The newest LSN the derived engine has indexed, and whether a refresh is already queued.
private final class IndexingState: Sendable {
    let state = Mutex<(through: UInt64, queued: Bool)>((0, false))
}

/// The viewer's answers, each engine used on one of ``ViewerData``'s queues only.
// @unchecked: ViewerData hands each engine to closures that run on that engine's serial queue only.
final class ViewerEngine: @unchecked Sendable {
    let indexDirectory: String?
    let reader: LogReader
    private(set) var index: ReplayIndex
    private(set) var seeker: SessionSeeker
    let storyboards: [String]
    /// The LSN the index this engine opened covers (as the derived engine last reported it).
    private var openedIndexThrough: UInt64 = 0
    /// The newest LSN the derived engine indexed (shared between the engines).
    var indexedThrough: @Sendable () -> UInt64 = { 0 }
    /// Told (derived engine) that the index now covers the log through an LSN.
    var indexRefreshed: @Sendable (UInt64) -> Void = { _ in }
    /// Told (interactive engine) that the log grew past the index.
    var logGrew: @Sendable () -> Void = {}
    /// The last few timelines built (whole sessions), newest first, with the LSN they cover.
    var timelines: [(session: String, through: UInt64, body: [UInt8])] = []
    /// The session summaries and the newest LSN they cover.
    var summaries: SessionSummaries?
    /// Analytics answers by question, for the LSN they were computed at.
    var analyticsCache: [String: (through: UInt64, body: [UInt8])] = [:]
    /// The storyboard coverage and the LSN it covers.
    var coverageCache: (through: UInt64, body: [UInt8])?

    init(dataDirectory: String, indexDirectory: String?, storyboards: [String]) throws {
        self.indexDirectory = indexDirectory
        reader = try LogReader(directory: dataDirectory)
        index = ReplayIndex(log: reader, directory: indexDirectory)
        seeker = SessionSeeker(index: index)
        self.storyboards = storyboards
    }

    /// The newest LSN of the log (0 for an empty one).
    var newestLSN: UInt64 { reader.lsnRange?.upperBound ?? 0 }

    /// Interactive engine: picks up what navlogd appended since the last call, reopens the index
    /// when the derived engine extended it, and asks for a refresh when the log is ahead of it.
    func catchUp() throws {
        try reader.refresh()
        let indexed = indexedThrough()
        if indexed > openedIndexThrough {
            // A new instance: the old one keeps its files open as they were when first read.
            index = ReplayIndex(log: reader, directory: indexDirectory)
            seeker = SessionSeeker(index: index)
            openedIndexThrough = indexed
        }
        if newestLSN > indexed { logGrew() }
    }

    /// Whether the opened index covers every event of `session` (none stored after it).
    func indexIsCurrent(for session: String) throws -> Bool {
        if openedIndexThrough == 0 { return newestLSN == 0 }
        return try !hasEvents(of: session, after: openedIndexThrough)
    }

    /// The derived rows of the sessions `filter` keeps, fed to a sink `make` makes: from the
    /// focus journals, or from a replay of the log into a new sink when the journals cannot
    /// answer (no writable index, damage). The same rows either way.
    func derivedRows<Sink: DerivedTableSink>(filter: AnalyticsFilter = AnalyticsFilter(), _ make: () -> Sink) throws -> Sink {
        var sink = make()
        if try JournalScanner(index: index, filter: filter).scan(into: &sink) { return sink }
        sink = make()
        var scanner = DerivedTableScanner(reader: reader, filter: filter)
        try scanner.scan(into: &sink)
        return sink
    }

    /// Derived engine: brings the replay index up to the log (new blocks only) and says so.
    func refreshIndex() throws {
        try reader.refresh()
        let newest = newestLSN
        guard newest > indexedThrough() || newest == 0 else { return }
        do {
            try index.refresh()
        } catch {
            // An index that cannot be written (read-only directory, full disk): replays start from
            // a session's first event instead (indexIsCurrent stays false), with the same answers.
            return
        }
        indexRefreshed(newest)
    }
}
