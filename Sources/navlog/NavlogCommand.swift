import ArgumentParser
import NavlogReplayStore
import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `navlog`: the command line of the navlog event log.
@main
struct NavlogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navlog",
        abstract: "Record, inspect and check navlog's navigation event logs.",
        discussion: """
            Events are JSON Lines as described in schemas/README.md. A data directory holds the \
            compressed log; `navlog ingest` writes one, `navlog cat` and `navlog tail` read it \
            (also while navlogd writes), `navlog verify` checks it. `navlog send` and \
            `navlog stats` talk to a running navlogd over its socket.
            """,
        subcommands: [
            IngestCommand.self, ImportCommand.self, CatCommand.self, VerifyCommand.self, CompactCommand.self, SendCommand.self, StatsCommand.self, TailCommand.self,
            SessionsCommand.self,
            ReplayCommand.self, TimelineCommand.self, AnomaliesCommand.self, IndexCommand.self, SimulateCommand.self, QueryCommand.self, ExportCommand.self,
            StoryboardCommand.self, ServeCommand.self, IntakeCommand.self,
        ]
    )

    /// `navlog intake …` and `navlog send …` run their own programs (see ``SiblingProgram``)
    /// before any parsing, so that their own `--help` and errors are what the user sees.
    static func main() async {
        // A parent that spawns navlog from a thread with signals blocked (libdispatch's worker
        // threads block SIGTERM and SIGINT, and Foundation's Process passes that mask on) would
        // leave `navlog tail -f` or `navlog index --follow` deaf to SIGTERM: start unblocked.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, nil)
        let arguments = CommandLine.arguments
        if arguments.count >= 2 && SiblingProgram.programs[arguments[1]] != nil {
            SiblingProgram.execute(arguments[1], Array(arguments.dropFirst(2)))
        }
        await main(nil)
    }
}

/// Options every command that reads or writes a log takes.
struct DataDirectoryOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: ArgumentHelp("The data directory of the log.", valueName: "dir"))
    var dataDirectory: String = "navlog-data"

    /// Resolved against the working directory once, at startup: every later use (the log, its
    /// replay index) names the same place.
    mutating func validate() throws {
        dataDirectory = ReplayFiles.absolute(dataDirectory)
    }

    /// The log, for reading; on failure prints `navlog COMMAND: ` and what went wrong, and exits 1.
    func openReader(command: String) throws -> LogReader {
        do {
            return try LogReader(directory: dataDirectory)
        } catch {
            printError("navlog \(command): \(error.message)")
            throw ExitCode.failure
        }
    }

    /// The log, for appending, its recovery reported when it was not closed cleanly; on failure
    /// prints `navlog COMMAND: ` and what went wrong, and exits 1.
    func openLog(command: String) throws -> EventLog {
        let log: EventLog
        do {
            log = try EventLog(directory: dataDirectory)
        } catch {
            printError("navlog \(command): \(error.message)")
            throw ExitCode.failure
        }
        if !log.recovery.isClean { reportRecovery(log.recovery) }
        return log
    }
}
