import ArgumentParser
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// `navlog sessions`: one line per session.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List sessions: id, app, version, device and idiom, first and last time, events, anomalies.",
        discussion: """
            Sessions are listed by their first event's time. --since/--until keep the sessions \
            active in that window. Times: an RFC 3339 date-time, µs since the epoch, now, or an \
            offset such as -15m, -2h, -7d. json prints one object per line; csv has a header line. \
            --keys adds a key column: the keys a trusted relay (navlog intake) said sent the \
            session's events (comma-separated; empty when no relay passed them on), read from \
            the log's blocks.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Option(help: "Only sessions of this app.")
    var app: String?

    @Option(help: ArgumentHelp("Only sessions with events at or after this time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: ArgumentHelp("Only sessions with events at or before this time.", valueName: "time"))
    var until: TimeArgument?

    @Option(help: "Output format: table, json or csv.")
    var format: TableFormat = .table

    @Flag(help: "Add a key column: which keys a trusted relay said sent each session's events (reads every block's peers).")
    var keys = false

    func run() throws {
        let index = try openReplayIndex(command: "sessions", data: data, options: indexOptions)
        try requireIndexDirectory(index, command: "sessions")
        // One summary per session, not its whole state: a day of sessions would not fit.
        struct Summary {
            var id: String
            var app: String?
            var version: String?
            var device: String?
            var idiom: String?
            var first: Int64?
            var last: Int64?
            var events = 0
            var anomalies = 0
        }
        // An ended session's figures are in the focus journal (its session.start and
        // session.end records); the index keeps the end state of the others only.
        var started: [String: (app: String, version: String, device: String, idiom: String)] = [:]
        var endings: [String: (events: Int, anomalies: Int, first: Int64, last: Int64)] = [:]
        let streamed = try index.forEachJournalRecord { record in
            switch record {
            case .start(let session, _, let app, let version, let idiom, let device): started[session] = (app, version, device, idiom)
            case .end(let session, _, _, let events, let anomalies, let first, let last, _, _, _): endings[session] = (events, anomalies, first, last)
            default: break
            }
        }
        let seeker = SessionSeeker(index: index)
        var sessions: [Summary] = []
        try index.endStates { id, kept in
            var summary = Summary(id: id)
            if kept == nil, streamed, let ending = endings[id] {
                let start = started[id]
                summary.app = start?.app
                summary.version = start?.version
                summary.device = start?.device
                summary.idiom = start.flatMap { $0.idiom.isEmpty ? nil : $0.idiom }
                (summary.first, summary.last, summary.events, summary.anomalies) = (ending.first, ending.last, ending.events, ending.anomalies)
            } else {
                guard let state = try kept ?? seeker.replay(session: id, to: .end) else { return }
                let info = state.info
                (summary.app, summary.version, summary.device) = (info.app, info.version, info.device)
                summary.idiom = info.idiom == .unknown ? nil : info.idiom.description
                (summary.first, summary.last, summary.events, summary.anomalies) = (info.firstTimestamp, info.lastTimestamp, state.eventCount, state.anomalies.count)
            }
            if let app, summary.app != app { return }
            if let since, (summary.last ?? .min) < since.microseconds { return }
            if let until, (summary.first ?? .max) > until.microseconds { return }
            sessions.append(summary)
        }
        sessions.sort { ($0.first ?? 0, $0.id) < ($1.first ?? 0, $1.id) }
        let keysOfSessions = keys ? try Self.relayKeys(index.log) : [:]
        var table = TableWriter(columns: ["session", "app", "version", "device", "idiom", "first", "last", "events", "anomalies"] + (keys ? ["key"] : []))
        table.numeric = ["events", "anomalies"]
        for session in sessions {
            table.rows.append(
                [
                    session.id, session.app, session.version, session.device, session.idiom,
                    session.first.map { RFC3339.format(microseconds: $0) }, session.last.map { RFC3339.format(microseconds: $0) },
                    "\(session.events)", "\(session.anomalies)",
                ] + (keys ? [keysOfSessions[session.id].map { $0.sorted().joined(separator: ",") } ?? ""] : []))
        }
        printOutput(table.render(format))
        if reportDamage(command: "sessions", index.log, index: index) { throw ExitCode.failure }
    }
}

extension SessionsCommand {
    /// The relay keys of each session's events (sessions with none are absent): one pass over
    /// the blocks' peer tables, the events of a block looked at only when a peer has a key.
    static func relayKeys(_ log: LogReader) throws -> [String: Set<String>] {
        var found: [String: Set<String>] = [:]
        var block = DecodedBlock()
        var keyed: [Bool] = []
        for (segment, number) in log.blocks(matching: LogQuery()) {
            // Damaged blocks are skipped here and reported with the rest (reportDamage).
            guard try log.readBlock(segment: segment, block: number, into: &block, locatingBodies: false) else { continue }
            keyed = block.peers.map { !$0.relayKey.isNone }
            guard keyed.contains(true) else { continue }
            var seen: Set<UInt64> = []
            for index in 0..<block.count where keyed[Int(block.peerIndexes[index])] {
                // Once per (session, peer) of the block.
                guard seen.insert(UInt64(block.sessions[index]) << 32 | UInt64(block.peerIndexes[index])).inserted else { continue }
                let key = block.peers[Int(block.peerIndexes[index])].relayKey.name!
                found[block.session(index), default: []].insert(key)
            }
        }
        return found
    }
}

/// `navlog anomalies`: the UIKit misuses found across sessions.
struct AnomaliesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anomalies",
        abstract: "List the UIKit misuses (anomalies A1–A18) found across sessions, oldest first.",
        discussion: """
            --code takes a code (A4) or a name (popover-without-anchor); repeat it for several. \
            FATAL marks the misuses UIKit raises an exception for (the app would have crashed). \
            json prints one anomaly object per line, with the session and app added.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Option(name: .customLong("code"), help: ArgumentHelp("Only anomalies with this code or name, e.g. A4.", valueName: "code"))
    var codes: [String] = []

    @Option(help: ArgumentHelp("Only anomalies at or after this time.", valueName: "time"))
    var since: TimeArgument?

    @Option(help: "Only sessions of this app.")
    var app: String?

    @Option(help: "Output format: table or json.")
    var format: TableFormat = .table

    func validate() throws {
        for code in codes where AnomalyCode(code) == nil {
            throw ValidationError("\(code) is not an anomaly code. Codes are A1 to A18, or their names such as push-duplicate.")
        }
        if format == .csv { throw ValidationError("navlog anomalies prints table or json.") }
    }

    /// One anomaly as listed.
    struct Row {
        var session: String
        var app: String?
        var code: AnomalyCode
        var rule: String?
        var sequence: UInt64?
        var timestamp: Int64
        var lsn: UInt64?
        var controllers: [String]
        var message: String
    }

    func run() throws {
        let wanted = Set(codes.compactMap(AnomalyCode.init))
        let index = try openReplayIndex(command: "anomalies", data: data, options: indexOptions)
        try requireIndexDirectory(index, command: "anomalies")
        var found: [Row] = []
        func keep(_ row: Row) {
            if !wanted.isEmpty && !wanted.contains(row.code) { return }
            if let since, row.timestamp < since.microseconds { return }
            if let app, row.app != app { return }
            found.append(row)
        }
        // The focus journals hold every anomaly as it was raised: reading them streams a few
        // records per session instead of decoding every session's final state.
        var apps: [String: String] = [:]
        let streamed = try index.forEachJournalRecord { record in
            switch record {
            case .start(let session, _, let app, _, _, _): apps[session] = app
            case .anomaly(let session, let timestamp, let sequence, let lsn, let code, _, let rule, _, let controllers, let message):
                guard let code = AnomalyCode(code) else { return }
                keep(
                    Row(
                        session: session, app: apps[session], code: code, rule: rule, sequence: sequence, timestamp: timestamp, lsn: lsn,
                        controllers: controllers.split(separator: " ").map(String.init), message: message))
            default: break
            }
        }
        if !streamed {
            // No usable journal (damage): the sessions' final states hold the same anomalies.
            found.removeAll()
            try index.finalStates { session, state in
                for anomaly in state.anomalies {
                    keep(
                        Row(
                            session: session, app: state.info.app, code: anomaly.code, rule: anomaly.rule, sequence: anomaly.event.sequence,
                            timestamp: anomaly.event.timestamp, lsn: anomaly.event.lsn, controllers: anomaly.controllers.map { state.id(of: $0) },
                            message: anomaly.message))
                }
            }
        }
        found.sort { ($0.timestamp, $0.session, $0.lsn ?? 0, $0.sequence ?? 0) < ($1.timestamp, $1.session, $1.lsn ?? 0, $1.sequence ?? 0) }
        var output: [UInt8] = []
        if format == .json {
            for row in found {
                output.append(contentsOf: "{\"code\":".utf8)
                EventJSONWriter.appendString(row.code.code, to: &output)
                output.append(contentsOf: ",\"name\":".utf8)
                EventJSONWriter.appendString(row.code.name, to: &output)
                output.append(contentsOf: ",\"rule\":".utf8)
                if let rule = row.rule { EventJSONWriter.appendString(rule, to: &output) } else { output.append(contentsOf: "null".utf8) }
                output.append(contentsOf: ",\"fatal\":\(row.code.isFatal),\"event\":{\"session\":".utf8)
                EventJSONWriter.appendString(row.session, to: &output)
                output.append(
                    contentsOf: ",\"seq\":\(row.sequence.map { "\($0)" } ?? "null"),\"ts\":\(row.timestamp),\"lsn\":\(row.lsn.map { "\($0)" } ?? "null")},\"controllers\":[".utf8)
                for (number, id) in row.controllers.enumerated() {
                    if number > 0 { output.append(UInt8(ascii: ",")) }
                    EventJSONWriter.appendString(id, to: &output)
                }
                output.append(contentsOf: "],\"message\":".utf8)
                EventJSONWriter.appendString(row.message, to: &output)
                output.append(contentsOf: ",\"app\":".utf8)
                if let app = row.app { EventJSONWriter.appendString(app, to: &output) } else { output.append(contentsOf: "null".utf8) }
                output.append(contentsOf: "}\n".utf8)
            }
            printOutput(String(decoding: output, as: UTF8.self))
        } else {
            var table = TableWriter(columns: ["time", "session", "app", "seq", "code", "name", "rule", "fatal", "controllers", "message"])
            for row in found {
                table.rows.append([
                    RFC3339.format(microseconds: row.timestamp), row.session, row.app, row.sequence.map { "\($0)" }, row.code.code, row.code.name,
                    row.rule, row.code.isFatal ? "FATAL" : nil, row.controllers.joined(separator: " "), row.message,
                ])
            }
            printOutput(found.isEmpty ? "no anomalies\n" : table.render(.table))
        }
        if reportDamage(command: "anomalies", index.log, index: index) { throw ExitCode.failure }
    }
}

/// `navlog index`: builds or refreshes the replay checkpoints, once or following the log.
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build or bring up to date the replay checkpoints of a data directory.",
        discussion: """
            navlog replay, sessions, timeline, anomalies, query and export do this themselves; \
            run it ahead so that they answer at once. With --follow it keeps running and indexes \
            what navlogd appends within a second (systemd/navlog-index.service runs it beside \
            navlogd), so the first query after ingest is as fast as the next. Checkpoints are \
            derived from the log: deleting them is safe, they are rebuilt.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Flag(help: "Keep running: index new events as they are stored, until SIGTERM or SIGINT.")
    var follow = false

    @Option(help: ArgumentHelp("With --follow: seconds between two looks at the log.", valueName: "seconds"))
    var interval = 1.0

    @Option(
        help: ArgumentHelp(
            "Cores the build uses, each replaying the sessions of its share (1 to 64; default: the processors online, 1, 2 or 4). 1 leaves the other cores to navlogd.",
            valueName: "count"))
    var workers: Int?

    func validate() throws {
        if let workers, !(1...64).contains(workers) {
            throw ValidationError("--workers must be between 1 and 64 (got \(workers)); 2 or 4 on machines with that many cores.")
        }
    }

    func run() async throws {
        if follow {
            try await runFollowing()
            return
        }
        let clock = ContinuousClock()
        let started = clock.now
        let index = try openReplayIndex(command: "index", data: data, options: indexOptions, refresh: false)
        if let workers { index.workers = workers }
        guard let directory = index.directory else {
            printError("navlog index: found no writable place for the replay index. Give one with --index-dir DIR.")
            throw ExitCode.failure
        }
        do {
            try index.refresh()
            noteRebuiltIndex(command: "index", index)
        } catch {
            printError("navlog index: \(error)")
            throw ExitCode.failure
        }
        let report = index.lastRefresh
        let elapsed = clock.now - started
        let logBytes = index.log.segments.reduce(0) { $0 + ($1.blocks.last.map { $0.offset + $0.size } ?? 0) }
        let size = index.sizeOnDisk
        let share = logBytes > 0 ? Double(size) * 100 / Double(logBytes) : 0
        let rederived = index.rederivedFromHeldEvents + index.rederivedByReading
        // Sessions replayed again (E4, E7), and how many took a second read of the log: what
        // an operator looks at when a build is slower than its events explain.
        let again =
            rederived == 0
            ? ""
            : "; sessions replayed again from their first event \(rederived) time(s), in seq order or knowing a gesture cancelled (E4, E7), \(index.rederivedByReading) of them by reading the log again"
        printOutput(
            "replay index in \(directory): \(report.filesWritten) file(s) written, \(report.eventsReplayed) events replayed, \(report.filesRemoved) stale file(s) removed in \(elapsed); \(size) bytes (\(Int(share.rounded()))% of the log's \(logBytes) bytes)\(again)\n"
        )
        if reportDamage(command: "index", index.log, index: index) { throw ExitCode.failure }
    }
}

/// Listing every session needs the index's per-session states.
func requireIndexDirectory(_ index: ReplayIndex, command: String) throws {
    guard index.directory == nil else { return }
    printError("navlog \(command): found no writable place for the replay index, which this command reads. Give one with --index-dir DIR.")
    throw ExitCode.failure
}
