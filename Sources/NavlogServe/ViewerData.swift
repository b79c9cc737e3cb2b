import Dispatch
import NavlogAnalytics
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// What the viewer reads: the log, its replay index and the answers built from them, behind one
/// serial queue.
///
/// The log reader, the index and the seeker are classes that keep decoding buffers and open
/// files; they are not meant to be shared between threads. Every request runs its work as a
/// closure on ``queue``, off Swift's cooperative pool (a replay or a journal scan blocks on file
/// reads), one at a time: the viewer serves a handful of people, and one at a time keeps the
/// memory of a big log's scan from doubling.
public final class ViewerData: @unchecked Sendable {
    // @unchecked: every stored property below is read and written only on `queue`.
    private let queue = DispatchQueue(label: "navlog.serve.data")
    private let engine: ViewerEngine

    /// Opens the log in `dataDirectory` (the index in `indexDirectory`, default `<data>/replay`).
    /// - Throws: ``StoreError`` when the log cannot be opened (no such directory, damage).
    public init(dataDirectory: String, indexDirectory: String?, storyboards: [String] = []) throws {
        engine = try ViewerEngine(dataDirectory: dataDirectory, indexDirectory: indexDirectory, storyboards: storyboards)
    }

    /// Runs `work` on the data's queue and returns what it returns.
    func perform<Answer: Sendable>(_ work: @escaping @Sendable (ViewerEngine) throws -> Answer) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [engine] in
                continuation.resume(with: Result { try work(engine) })
            }
        }
    }
}

/// The viewer's answers, computed on ``ViewerData``'s queue only.
// @unchecked: ViewerData hands the engine to closures that run on its serial queue, never elsewhere.
final class ViewerEngine: @unchecked Sendable {
    let dataDirectory: String
    let reader: LogReader
    let index: ReplayIndex
    let seeker: SessionSeeker
    let storyboards: [String]
    /// The newest LSN the index was refreshed to (nil before the first refresh).
    private var indexedThrough: UInt64?
    /// The session summaries and the newest LSN they cover.
    var summaries: SessionSummaries?
    /// Analytics answers by question, for the LSN they were computed at.
    var analyticsCache: [String: (through: UInt64, body: [UInt8])] = [:]
    /// The storyboard coverage and the LSN it covers.
    var coverageCache: (through: UInt64, body: [UInt8])?

    init(dataDirectory: String, indexDirectory: String?, storyboards: [String]) throws {
        self.dataDirectory = dataDirectory
        reader = try LogReader(directory: dataDirectory)
        index = ReplayIndex(log: reader, directory: indexDirectory)
        seeker = SessionSeeker(index: index)
        self.storyboards = storyboards
    }

    /// The newest LSN of the log (0 for an empty one).
    var newestLSN: UInt64 { reader.lsnRange?.upperBound ?? 0 }

    /// Picks up what navlogd appended since the last call, and brings the replay index up to it
    /// (new blocks only): a replay from a checkpoint must not start from a stale end state.
    func catchUp() throws {
        try reader.refresh()
        let newest = newestLSN
        guard indexedThrough != newest else { return }
        do {
            try index.refresh()
        } catch {
            // An index that cannot be written (read-only directory, full disk): replays start from
            // a session's first event instead, with the same answers, slower.
        }
        indexedThrough = newest
    }
}
