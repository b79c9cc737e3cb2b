import Foundation
import NavlogEvents
import NavlogReplay
public import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an incremental export has shipped: kept in the `--state` file between runs.
///
/// A run exports the log's events up to an LSN fixed when the run begins (`pending`) and
/// commits by rewriting this file once every file of the run is in place. A run that died
/// (kill -9, a full disk, a power cut after the file system's own recovery) leaves `pending` set:
/// the next run deletes the dead run's files, by their run number, and writes the same run again
/// over the same events, so every row reaches the output directory exactly once.
public struct IncrementalExportState: Codable, Sendable, Equatable {
    /// The run in progress or to redo.
    public struct PendingRun: Codable, Sendable, Equatable {
        /// Its number (in its files' names: `part-r000007-00000.jsonl.zst`).
        public var run: Int
        /// The last LSN it exports.
        public var throughLSN: UInt64
    }

    /// The file's layout version.
    public var version = 1
    /// The options every run must share (a file of another format in the same tree would mix tables).
    public var format: String
    public var compression: String
    public var partitioning: String
    public var host: String?
    public var tables: [String]
    /// The last committed run's ``IncrementalExportRule/idle`` (`--idle`), µs.
    public var idleMicroseconds: Int64?
    /// The last committed run's ``IncrementalExportRule/endGrace`` (`--end-grace`), µs.
    public var endGraceMicroseconds: Int64?
    /// The last run whose files are all in place.
    public var committedRun = 0
    /// Events up to this LSN are exported.
    public var exportedThroughLSN: UInt64 = 0
    /// A run begun and not committed.
    public var pending: PendingRun?
    /// Events that arrived for sessions already exported (complete): in `events`, not in the
    /// derived tables of their session. Summed over runs.
    public var eventsAfterSessionExported = 0
}

/// When a session is complete, so that an incremental run exports its rows: once no event of it
/// arrived for ``idle``, or, after its `session.end`, for ``endGrace`` (events delivered late,
/// out of order, still arrive after `session.end`: workload.md). Times are gaps of navlog's
/// receive clock between the session's events, or from its last event to the newest event of
/// the log. A gap stays in the log once it is there, so completion is monotonic.
public struct IncrementalExportRule: Sendable, Equatable {
    /// A session with no event for this long is complete, µs.
    public var idle: Int64
    /// A session with no event for this long after its `session.end` is complete, µs (at most ``idle``).
    public var endGrace: Int64

    /// A rule.
    public init(idle: Int64, endGrace: Int64) {
        self.idle = idle
        self.endGrace = min(endGrace, idle)
    }

    /// Whether a gap of `gap` µs completes a session (`ended`: its session.end came before the gap).
    @inline(__always)
    func completes(gap: Int64, ended: Bool) -> Bool { gap >= idle || (ended && gap >= endGrace) }

    /// Whether some session this rule leaves open `other` completes (a run with no new event can then export).
    func isShorter(than other: IncrementalExportRule) -> Bool { idle < other.idle || endGrace < other.endGrace }
}

/// What one incremental run did.
public struct IncrementalExportReport: Sendable {
    /// The run's number (0: no run, nothing was new).
    public var run = 0
    /// Whether a run was made.
    public var ran: Bool { run > 0 }
    /// Whether it redid a run that had died.
    public var redone = false
    /// Files of a dead run that were deleted first.
    public var deletedFiles = 0
    /// The LSNs it exported (empty when nothing was new).
    public var lsns: ClosedRange<UInt64>?
    /// Sessions whose derived rows it wrote.
    public var sessionsCompleted = 0
    /// Sessions still live (their rows wait for a later run).
    public var sessionsLive = 0
    /// Events of this run that belong to sessions exported by an earlier run.
    public var eventsAfterSessionExported = 0
    /// The files, rows and bytes written.
    public var export = ExportReport()
}

/// `navlog export --incremental`: writes only what is new since the last run, as new part files
/// with deterministic names, atomically, so that a crash at any point followed by a rerun
/// leaves every row in the output exactly once.
///
/// - The derived tables (screen_visits, transitions, sessions, anomalies, exits): the rows of the
///   sessions that became complete (``IncrementalExportRule``) between the last run's last LSN
///   and this run's (the log's end when it began), from a replay of their events up to this
///   run's last LSN. Completion is monotonic (a gap stays in the log), so no session is
///   exported twice.
/// - `events`: the events up to this run's last LSN that became ready since the last run (their
///   session's `session.start` stored, or their session complete), so that every row carries the
///   tags a full export gives it and is written once.
public enum IncrementalExporter {
    /// Runs one incremental export of `reader` with `options` and the state file at `statePath`.
    /// - Throws: ``ExportError`` (a state file of other options, I/O), ``StoreError`` (the log).
    public static func run(reader: LogReader, options baseOptions: ExportOptions, statePath: String, rule: IncrementalExportRule) throws -> IncrementalExportReport {
        var state = try loadState(statePath, options: baseOptions)
        var report = IncrementalExportReport()
        let from = state.exportedThroughLSN
        // The rule of the runs so far says which sessions they exported; a new one applies from now on.
        let previousRule = IncrementalExportRule(idle: state.idleMicroseconds ?? rule.idle, endGrace: state.endGraceMicroseconds ?? rule.endGrace)
        let through: UInt64
        if let pending = state.pending {
            report.redone = true
            report.run = pending.run
            through = pending.throughLSN
        } else {
            let end = max(from, reader.lsnRange?.upperBound ?? 0)
            // With no new event only a shorter --idle or --end-grace can complete a session.
            guard end > from || rule.isShorter(than: previousRule) else { return report }
            report.run = state.committedRun + 1
            through = end
            state.pending = .init(run: report.run, throughLSN: through)
            try saveState(state, to: statePath)
        }
        let prefix = "part-r" + zeroPadded(report.run, 6) + "-"
        report.deletedFiles = try deleteFiles(of: prefix, under: baseOptions.directory, tables: baseOptions.tables, host: baseOptions.host)
        report.lsns = from < through ? (from + 1)...through : nil

        let sessions = try completion(reader: reader, after: from, through: through, previous: previousRule, rule: rule)
        report.sessionsCompleted = sessions.completed.count
        report.sessionsLive = sessions.live
        report.eventsAfterSessionExported = sessions.eventsAfterExport
        var options = baseOptions
        options.filePrefix = prefix
        options.appending = true
        report.export = try Exporter.export(options: options) { sink in
            if options.tables.contains(.events) {
                // An event's row waits until its session's tags are known (its session.start is
                // stored) or the session is complete, so that it carries the tags a full export
                // gives it; a run writes the events that became ready since the last run.
                try reader.scan(LogQuery(fromLSN: sessions.firstHeldLSN.map { min($0, from + 1) } ?? from + 1)) { block, index in
                    let lsn = block.lsn(index)
                    guard lsn <= through else { return false }
                    block.withEvent(index) { _, sessionBytes, _ in
                        let slot = Int(sessions.table.reference(of: sessionBytes) ?? 0)
                        let start = sessions.startLSN[slot]
                        let readyNow = start <= through || sessions.completeNow[slot]
                        let readyBefore = lsn <= from && (start <= from || sessions.completeBefore[slot])
                        guard readyNow && !readyBefore else { return }
                        sink.event(
                            EventRow(
                                lsn: lsn, session: sessions.names[slot], tags: sessions.tags[slot], sequence: block.sequence(index),
                                timestamp: block.timestamps[index], receivedAt: block.receiveTimes[index], type: block.types[index].name,
                                key: block.peers[Int(block.peerIndexes[index])].relayKey.name))
                    }
                    return true
                }
            }
            guard !sessions.completed.isEmpty else { return }
            sink.wantsEvents = false
            var scanner = DerivedTableScanner(reader: reader)
            scanner.sessions = sessions.completed
            scanner.throughLSN = through
            try scanner.scan(into: &sink)
        }
        state.pending = nil
        state.committedRun = report.run
        state.exportedThroughLSN = through
        state.idleMicroseconds = rule.idle
        state.endGraceMicroseconds = rule.endGrace
        state.eventsAfterSessionExported += report.eventsAfterSessionExported
        try saveState(state, to: statePath)
        return report
    }

    /// The sessions of the events up to a run's last LSN, as its first pass finds them.
    struct Completion {
        /// The sessions complete at the run's last LSN and not at the last run's: their rows are written.
        var completed: Set<String> = []
        /// Sessions not complete.
        var live = 0
        /// Events of this run for sessions an earlier run completed.
        var eventsAfterExport = 0
        /// The sessions by number, their ids and tags.
        var table = ByteStringTable()
        var names: [String] = []
        var tags: [SessionTags] = []
        /// Per session: the LSN of its session.start (`UInt64.max` when none is stored), and
        /// whether it is complete now and was at the last run.
        var startLSN: [UInt64] = []
        var completeNow: [Bool] = []
        var completeBefore: [Bool] = []
        /// The lowest LSN of an event an earlier run held back (its session had neither tags nor completion then).
        var firstHeldLSN: UInt64?
    }

    /// The sessions of events up to `through` that are complete there and were not at `after`,
    /// with every session's id and tags (for the events table).
    private static func completion(
        reader: LogReader, after: UInt64, through: UInt64, previous: IncrementalExportRule, rule: IncrementalExportRule
    ) throws -> Completion {
        /// One session as far as the scan has read.
        struct Progress {
            var lastReceived: Int64 = .min
            /// Its session.end was read.
            var ended = false
            /// A gap between two of its events completes it (``IncrementalExportRule``).
            var complete = false
            /// The same by the previous runs' rule.
            var completePreviously = false
            var completeBefore = false
            var seenBefore = false
            var eventsAfterExport = 0
            var startLSN = UInt64.max
            var firstLSN = UInt64.max
        }
        var table = ByteStringTable()
        var names: [String] = []
        var tags: [SessionTags] = []
        var progress: [Progress] = []
        var clock = Int64.min
        var snapshotTaken = false
        func snapshot() {
            snapshotTaken = true
            for slot in progress.indices where progress[slot].lastReceived != .min {
                progress[slot].seenBefore = true
                progress[slot].completeBefore =
                    progress[slot].completePreviously || previous.completes(gap: clock - progress[slot].lastReceived, ended: progress[slot].ended)
            }
        }
        try reader.scan(LogQuery()) { block, index in
            let lsn = block.lsn(index)
            guard lsn <= through else { return false }
            if lsn > after && !snapshotTaken { snapshot() }
            let received = block.receiveTimes[index]
            let type = block.types[index]
            block.withEvent(index) { strings, sessionBytes, tokens in
                let (reference, inserted) = table.insert(sessionBytes)
                let slot = Int(reference)
                if inserted {
                    names.append(String(decoding: sessionBytes, as: UTF8.self))
                    tags.append(SessionTags())
                    progress.append(Progress())
                }
                if snapshotTaken && progress[slot].completeBefore { progress[slot].eventsAfterExport += 1 }
                if progress[slot].firstLSN == .max { progress[slot].firstLSN = lsn }
                if type == .sessionStart && progress[slot].startLSN == .max { progress[slot].startLSN = lsn }
                if progress[slot].lastReceived != .min {
                    let gap = received - progress[slot].lastReceived
                    if rule.completes(gap: gap, ended: progress[slot].ended) { progress[slot].complete = true }
                    if previous.completes(gap: gap, ended: progress[slot].ended) { progress[slot].completePreviously = true }
                }
                progress[slot].lastReceived = max(progress[slot].lastReceived, received)
                if type == .sessionEnd { progress[slot].ended = true }
                if type == .sessionStart {
                    var replayer = SessionReplayer()
                    _ = replayer.apply(
                        ReplayEvent(
                            type: type, sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: lsn,
                            body: StoredBody(tokens: tokens, strings: strings)))
                    let info = replayer.info
                    tags[slot] = SessionTags(
                        app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? "")
                }
            }
            clock = max(clock, received)
            return true
        }
        if !snapshotTaken { snapshot() }
        var result = Completion(table: table, names: names, tags: tags)
        for slot in progress.indices {
            let session = progress[slot]
            result.eventsAfterExport += session.eventsAfterExport
            result.startLSN.append(session.startLSN)
            result.completeBefore.append(session.completeBefore)
            let now = session.completeBefore || session.complete || rule.completes(gap: clock - session.lastReceived, ended: session.ended)
            result.completeNow.append(now)
            if session.seenBefore && session.startLSN > after && !session.completeBefore {
                result.firstHeldLSN = min(result.firstHeldLSN ?? .max, session.firstLSN)
            }
            if session.completeBefore { continue }
            if now { result.completed.insert(names[slot]) } else { result.live += 1 }
        }
        return result
    }

    /// Reads the state file (a new state when there is none) and checks it was written for `options`.
    static func loadState(_ path: String, options: ExportOptions) throws(ExportError) -> IncrementalExportState {
        let fresh = IncrementalExportState(
            format: options.format.rawValue, compression: options.compression.rawValue, partitioning: options.partitioning.rawValue, host: options.host,
            tables: options.tables.sorted().map(\.name), idleMicroseconds: nil, endGraceMicroseconds: nil)
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw ExportError("cannot read the state file \(path).", code: .stateMismatch) }
            return fresh
        }
        let state: IncrementalExportState
        do { state = try JSONDecoder().decode(IncrementalExportState.self, from: data) } catch {
            throw ExportError(
                "the state file \(path) is not one navlog export --incremental wrote (\(error)). Move it away only if its export directory is to start again from nothing.",
                code: .stateMismatch)
        }
        for (name, saved, wanted) in [
            ("--format", state.format, fresh.format), ("--compress", state.compression, fresh.compression), ("--partition", state.partitioning, fresh.partitioning),
            ("--host", state.host ?? "(none)", fresh.host ?? "(none)"), ("--table", state.tables.joined(separator: ","), fresh.tables.joined(separator: ",")),
        ] where saved != wanted {
            throw ExportError(
                "\(path) belongs to an export with \(name) \(saved), not \(wanted): one output tree holds one layout. Give the same options, or another --state and --to.",
                code: .stateMismatch)
        }
        return state
    }

    /// Writes the state file atomically and durably (temporary file, fsync, rename, fsync of the directory).
    static func saveState(_ state: IncrementalExportState, to path: String) throws(ExportError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(state) } catch { throw ExportError("cannot encode the state: \(error).") }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw ExportError("cannot create \(directory): \(error.localizedDescription)")
            }
        }
        do { try DurableFile.replace(path, with: Array(data) + [0x0A]) } catch { throw ExportError(error.message) }
    }

    /// Deletes the files of the run whose names start with `prefix` (finished or `.tmp`) under each
    /// table: under the host's own partition only, as the other hosts of a fleet have runs of the same numbers.
    static func deleteFiles(of prefix: String, under directory: String, tables: Set<SQLTable>, host: String?) throws(ExportError) -> Int {
        var deleted = 0
        for table in tables {
            let root = directory + "/" + table.name + (host.map { "/host=" + $0 } ?? "")
            guard let walk = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = walk.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                guard name.hasPrefix(prefix) else { continue }
                guard unlink(root + "/" + relative) == 0 || errno == ENOENT else {
                    throw ExportError("cannot delete \(root)/\(relative), a file of a run that did not finish: \(String(cString: strerror(errno))).")
                }
                deleted += 1
            }
        }
        return deleted
    }

    static func zeroPadded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
