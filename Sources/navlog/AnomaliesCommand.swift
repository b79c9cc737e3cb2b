import ArgumentParser
import NavlogEvents
import NavlogJSON
import NavlogReplay
import NavlogReplayStore
import NavlogStore

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
            let session = record.session
            switch record.change {
            case .start(let app, _, _, _): apps[session] = app
            case .anomaly(let anomaly):
                keep(
                    Row(
                        session: session, app: apps[session], code: anomaly.code, rule: anomaly.rule, sequence: anomaly.sequence, timestamp: record.timestamp,
                        lsn: anomaly.lsn, controllers: anomaly.controllers.split(separator: " ").map(String.init), message: anomaly.message))
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
        if format == .json {
            var json = JSONWriter()
            for row in found {
                json.raw("{\"code\":")
                json.string(row.code.code)
                json.member("name", row.code.name)
                json.member("rule", row.rule)
                json.member("fatal", row.code.isFatal)
                json.raw(",\"event\":{\"session\":")
                json.string(row.session)
                json.member("seq", row.sequence)
                json.member("ts", row.timestamp)
                json.member("lsn", row.lsn)
                json.raw("}")
                json.key("controllers")
                json.array(row.controllers) { json, id in json.string(id) }
                json.member("message", row.message)
                json.member("app", row.app)
                json.raw("}\n")
            }
            printOutput(String(decoding: json.bytes, as: UTF8.self))
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
