import ArgumentParser
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore

/// `navlog replay`: the view-controller hierarchy of a session at one instant.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Show a session's view-controller hierarchy at one instant, what was on screen, and the UIKit misuses so far.",
        discussion: """
            Choose the instant with one of --at, --seq, --index or --end (the default). The state \
            shown is the one after that event. --at takes an RFC 3339 time, µs since the epoch, or \
            an offset from the session's first event such as +12.5s, +3m or +250ms.

            Formats: tree (readable; ◉ the focused screen, ● visible, ○ hidden), json (the shape \
            of events.md "Replay output", schemas/replay-output.schema.json), dot (Graphviz: \
            navlog replay ... --format dot | dot -Tsvg > state.svg).

            Checkpoints kept beside the log (see navlog index) make any point fast to reach; they \
            are rebuilt from the events whenever missing or stale.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Option(help: "The session to replay (navlog sessions lists them).")
    var session: String

    @Option(help: ArgumentHelp("The state after the last event at or before this time.", valueName: "time"))
    var at: SessionTime?

    @Option(help: ArgumentHelp("The state after the event with this seq.", valueName: "n"))
    var seq: UInt64?

    @Option(help: ArgumentHelp("The state after the session's event at this 0-based position.", valueName: "k"))
    var index: Int?

    @Flag(help: "The state after the session's last event (the default).")
    var end = false

    @Option(help: "Output format: tree, json or dot.")
    var format: ReplayFormat = .tree

    @Flag(name: .customLong("no-checkpoints"), help: "Replay from the session's first event instead of the nearest checkpoint.")
    var noCheckpoints = false

    enum ReplayFormat: String, ExpressibleByArgument, CaseIterable {
        case tree, json, dot
    }

    func validate() throws {
        let chosen = [at != nil, seq != nil, index != nil, end].filter { $0 }.count
        if chosen > 1 { throw ValidationError("Give only one of --at, --seq, --index and --end.") }
        if let index, index < 0 { throw ValidationError("--index counts from 0; \(index) is not a position.") }
    }

    func run() throws {
        let replayIndex = try openReplayIndex(command: "replay", data: data, options: indexOptions, refresh: !noCheckpoints)
        let seeker = SessionSeeker(index: replayIndex)
        var target = ReplayTarget.end
        if let seq { target = .sequence(seq) }
        if let index { target = .index(index) }
        do {
            if let at {
                var start: Int64 = 0
                if case .offset = at {
                    guard let final = try seeker.replay(session: session, to: .end, useCheckpoints: !noCheckpoints), let first = final.info.firstTimestamp else {
                        throw noSuchSession()
                    }
                    start = first
                }
                target = .time(at.microseconds(sessionStart: start))
            }
            guard let state = try seeker.replay(session: session, to: target, useCheckpoints: !noCheckpoints) else {
                if case .time(let time) = target, let final = try seeker.replay(session: session, to: .end), let first = final.info.firstTimestamp {
                    printError(
                        "navlog replay: \(RFC3339.format(microseconds: time)) is before the first event of session \(session) (\(RFC3339.format(microseconds: first))). Use a later --at, or --index 0."
                    )
                    throw ExitCode.failure
                }
                throw noSuchSession()
            }
            try check(state, against: target)
            var output: [UInt8] = []
            switch format {
            case .json:
                state.appendJSON(session: session, to: &output)
                output.append(0x0A)
            case .tree: output.append(contentsOf: state.tree(session: session).utf8)
            case .dot: output.append(contentsOf: state.dot(session: session).utf8)
            }
            printOutput(String(decoding: output, as: UTF8.self))
        } catch let error as StoreError {
            printError("navlog replay: \(error.message)")
            throw ExitCode.failure
        }
        if reportDamage(command: "replay", replayIndex.log, index: replayIndex) { throw ExitCode.failure }
    }

    private func noSuchSession() -> ExitCode {
        printError(
            "navlog replay: the log in \(data.dataDirectory) holds no events of session \(session). List the sessions with: navlog sessions --data-dir \(data.dataDirectory)")
        return ExitCode.failure
    }

    /// A target the session does not reach is an error that says what does exist.
    private func check(_ state: SessionReplayer, against target: ReplayTarget) throws {
        switch target {
        case .index(let index) where state.eventCount <= index:
            printError("navlog replay: session \(session) has \(state.eventCount) events (--index 0 to \(state.eventCount - 1)); \(index) is past its end.")
            throw ExitCode.failure
        case .sequence(let wanted) where state.position?.sequence != wanted:
            let nearest = state.position?.sequence.map { "the nearest earlier event has seq \($0)" } ?? "its events before it carry no seq"
            printError("navlog replay: session \(session) has no event with seq \(wanted); \(nearest). Use navlog timeline --session \(session) to see its events.")
            throw ExitCode.failure
        default:
            break
        }
    }
}
