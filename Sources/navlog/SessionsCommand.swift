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
            switch record.change {
            case .start(let app, let version, let idiom, let device): started[record.session] = (app, version, device, idiom)
            case .end(let ending): endings[record.session] = (ending.events, ending.anomalies, ending.first, ending.last)
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
