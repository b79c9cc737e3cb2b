import ArgumentParser
import Foundation
import NavlogEvents
import NavlogJSON
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// `navlog timeline`: a session's events, each with what it resolved into and the focus after it.
struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "List a session's events with their resolution, the focused screen after each, and the anomalies they raised.",
        discussion: """
            Each line: the event's position in the session, time, seq, type and main fields; for \
            an intent (show, showDetail, segue, unwind) → what the rules resolved it into; the \
            focused screen after it; and any anomaly it raised (⚠). --from/--to take an RFC 3339 \
            time, µs since the epoch, or an offset from the session's start such as +12.5s. json \
            prints one object per event.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Option(help: "The session.")
    var session: String

    @Option(help: ArgumentHelp("Only events at or after this time.", valueName: "time"))
    var from: SessionTime?

    @Option(help: ArgumentHelp("Only events at or before this time.", valueName: "time"))
    var to: SessionTime?

    @Flag(name: .customLong("anomalies-only"), help: "Only the events that raised an anomaly.")
    var anomaliesOnly = false

    @Option(help: "Output format: text or json.")
    var format: TimelineFormat = .text

    enum TimelineFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    func run() throws {
        let index = try openReplayIndex(command: "timeline", data: data, options: indexOptions, refresh: false)
        let seeker = SessionSeeker(index: index)
        var output = OutputBuffer()
        var start: Int64?
        var anomalyCount = 0
        var fromTime: Int64?
        var toTime: Int64?
        var gesture = PendingGestureLines(json: format == .json)
        let found: SessionReplayer?
        do {
            found = try seeker.replay(session: session, to: .end, useCheckpoints: false) { block, position, state, resolution in
                if start == nil {
                    start = state.info.firstTimestamp ?? block.timestamps[position]
                    fromTime = from?.microseconds(sessionStart: start!)
                    toTime = to?.microseconds(sessionStart: start!)
                }
                let timestamp = block.timestamps[position]
                let raised = state.anomalies[anomalyCount...]
                anomalyCount = state.anomalies.count
                if let fromTime, timestamp < fromTime { return true }
                if let toTime, timestamp > toTime { return false }
                // E6: lines from a pop or dismissal that may be a cancelled gesture wait until the
                // session shows which it was, so that they show the focus the user had.
                if let outcome = state.heldRemovalOutcome {
                    // The focus right after the rollback: the event that proved it may move it on.
                    gesture.flush(
                        cancelled: outcome == .cancelled, focus: focusText(state, state.rolledBackFocus ?? state.focus),
                        rule: state.evidence.isDisjoint(with: [.willAppear, .didAppear, .willDisappear, .didDisappear]) ? "E7" : "E6",
                        chosen: gesture.lines.isEmpty ? false : state.isRollbackChosen(position: gesture.firstPosition), into: &output.bytes)
                }
                if anomaliesOnly && raised.isEmpty { return true }
                var line: [UInt8] = []
                if format == .json {
                    appendJSON(block, position, state, resolution, Array(raised), to: &line)
                } else {
                    line.append(contentsOf: describe(block, position, state, resolution, Array(raised)).utf8)
                }
                if state.hasPendingRemoval {
                    if gesture.lines.isEmpty { gesture.firstPosition = state.eventCount - 1 }
                    gesture.lines.append((line, focusText(state, state.focus)))
                } else if state.isCancelledInHindsight(position: state.eventCount - 1) {
                    // E7: a later call proves this gesture cancelled; the replay rolled it back here.
                    output.bytes.append(
                        contentsOf: gesture.markedRolledBack(line, rule: "E7", chosen: state.isRollbackChosen(position: state.eventCount - 1)))
                } else {
                    output.bytes.append(contentsOf: line)
                }
                output.flushIfNeeded()
                return true
            }
            gesture.flush(cancelled: false, focus: nil, rule: "E6", chosen: false, into: &output.bytes)
        } catch let error as StoreError {
            output.flush()
            printError("navlog timeline: \(error.message)")
            throw ExitCode.failure
        }
        output.flush()
        if found == nil {
            printError(
                "navlog timeline: the log in \(data.dataDirectory) holds no events of session \(session). List the sessions with: navlog sessions --data-dir \(data.dataDirectory)")
            throw ExitCode.failure
        }
        if reportDamage(command: "timeline", index.log, index: index) { throw ExitCode.failure }
    }

    /// How a line names `focus` (text or JSON).
    private func focusText(_ state: SessionReplayer, _ focus: ControllerHandle?) -> String {
        let id = focus.map { state.id(of: $0) }
        if format == .json {
            var json = JSONWriter()
            json.string(id)
            return String(decoding: json.bytes, as: UTF8.self)
        }
        return id ?? "none"
    }

    /// The fields worth a glance, as `name=value`.
    static let shownFields: [FieldName] = [
        .from, .source, .nav, .tab, .split, .parent, .vc, .vcs, .destination, .target, .window, .kind, .style, .identifier, .action, .relationship,
        .phase, .result, .index, .selected, .primary, .secondary, .supplementary, .slot, .id, .interactive, .completed, .animated, .byUser, .name,
        .h, .v, .app, .reason, .cause,
    ]

    private func describe(
        _ block: borrowing DecodedBlock, _ position: Int, _ state: SessionReplayer, _ resolution: Resolution?, _ raised: [Anomaly]
    )
        -> String
    {
        var line = "#\(state.eventCount - 1)  \(RFC3339.format(microseconds: block.timestamps[position]))"
        if let sequence = block.sequence(position) { line += "  seq \(sequence)" }
        line += "  \(block.types[position].name)"
        block.withBody(position) { body in
            for field in Self.shownFields {
                guard let value = body.field(field) else { continue }
                line += " \(field.name)=\(value.displayText())"
            }
        }
        if let resolution { line += "  → \(state.describe(resolution))" }
        line += "  focus: \(state.focus.map { state.id(of: $0) } ?? "none")"
        for anomaly in raised {
            line += "\n    ⚠ \(anomaly.code.code) \(anomaly.code.name)\(anomaly.rule.map { " (\($0))" } ?? "")\(anomaly.isFatal ? " FATAL" : ""): \(anomaly.message)"
        }
        return line + "\n"
    }

    private func appendJSON(
        _ block: borrowing DecodedBlock, _ position: Int, _ state: SessionReplayer, _ resolution: Resolution?, _ raised: [Anomaly], to output: inout [UInt8]
    ) {
        JSONWriter.appending(to: &output) { json in
            json.raw("{")
            json.key("index", first: true)
            json.integer(state.eventCount - 1)
            json.member("seq", block.sequence(position))
            json.member("ts", block.timestamps[position])
            json.member("lsn", block.lsn(position))
            json.member("type", block.types[position].name)
            json.member("resolution", resolution.map { state.describe($0) })
            json.member("action", resolution?.action)
            json.member("focus", state.focus.map { state.id(of: $0) })
            json.key("anomalies")
            json.array(raised) { json, anomaly in state.appendAnomalyJSON(anomaly, session: session, to: &json.bytes) }
            json.raw("}\n")
        }
    }
}

/// Timeline lines held while a pop or dismissal is pending (E6): once the session shows it was
/// a cancelled interactive gesture, they show the focus that never left, and the pop's line says so.
private struct PendingGestureLines {
    let json: Bool
    /// Each held line and the focus it names.
    var lines: [(line: [UInt8], focus: String)] = []
    /// The position in the session of the first held line's event (the pop or dismissal).
    var firstPosition = 0

    /// Writes the held lines; with `cancelled`, each names `focus` (the focus after the rollback)
    /// and the first (the pop or dismissal) is marked rolled back by `rule` (E6, or E7 in a
    /// session that records navigation calls only), and as `chosen` among several removals
    /// that the proof fitted as well.
    mutating func flush(cancelled: Bool, focus: String?, rule: String, chosen: Bool, into output: inout [UInt8]) {
        for (number, held) in lines.enumerated() {
            guard cancelled, let focus else {
                output.append(contentsOf: held.line)
                continue
            }
            var text = String(decoding: held.line, as: UTF8.self)
            let (old, new) = json ? (",\"focus\":\(held.focus),", ",\"focus\":\(focus),") : ("  focus: \(held.focus)", "  focus: \(focus)")
            if let range = text.range(of: old) { text.replaceSubrange(range, with: new) }
            output.append(contentsOf: number == 0 ? markedRolledBack(Array(text.utf8), rule: rule, chosen: chosen) : Array(text.utf8))
        }
        lines.removeAll()
    }

    /// `line` marked as the pop or dismissal of a cancelled gesture that the replay rolled
    /// back, by `rule` (E6: the callbacks after it show it; E7: a later call does); `chosen`:
    /// the proof was a count that another removal fitted as well (E7), so this one is a choice.
    func markedRolledBack(_ line: [UInt8], rule: String, chosen: Bool) -> [UInt8] {
        var text = String(decoding: line, as: UTF8.self)
        if json {
            let mark = ",\"rolledBack\":\"\(rule)\"" + (chosen ? ",\"rollbackChosen\":true" : "")
            if let range = text.range(of: ",\"anomalies\":") { text.insert(contentsOf: mark, at: range.lowerBound) }
        } else if let range = text.range(of: "  focus: ") {
            let choice = chosen ? "; chosen: the calls prove one of several pops or dismissals cancelled, not which, and this is the most recent" : ""
            text.insert(contentsOf: "  (a cancelled interactive gesture: rolled back, \(rule)\(choice))", at: range.lowerBound)
        }
        return Array(text.utf8)
    }
}
