import ArgumentParser
import Foundation
import Logging
import NavlogDaemon

/// `navlogd`: the navlog daemon.
@main
struct NavlogdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navlogd",
        abstract: "Receive navigation events from apps over a Unix socket and append them to the log.",
        discussion: """
            Apps write JSON Lines to the socket (see schemas/README.md); a first line \
            {"hello":1,"ack":"batch|durable"} asks for acknowledgements. SIGTERM or SIGINT stops \
            it cleanly: no new connections, what was read is stored and fsynced. Under systemd it \
            uses the passed socket (LISTEN_FDS) and reports readiness (NOTIFY_SOCKET). \
            Settings come from defaults, then --config FILE (JSON), then the options below.
            """
    )

    @Option(help: ArgumentHelp("The Unix socket to listen on.", valueName: "path"))
    var socket: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("The data directory of the log.", valueName: "dir"))
    var dataDirectory: String?

    @Option(help: ArgumentHelp("A JSON configuration file (every setting optional).", valueName: "file"))
    var config: String?

    @Flag(help: "Print the effective configuration as JSON and exit.")
    var printConfig = false

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error.", valueName: "level"))
    var logLevel: String = "info"

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var settings = DaemonConfiguration(environment: environment)
        do {
            if let config { settings = try settings.merging(file: config) }
        } catch {
            FileHandle.standardError.write(Data("navlogd: \(error)\n".utf8))
            throw ExitCode.failure
        }
        if let socket { settings.socketPath = socket }
        if let dataDirectory { settings.dataDirectory = dataDirectory }
        guard settings.socketModeValue != nil else {
            FileHandle.standardError.write(Data("navlogd: socketMode \"\(settings.socketMode)\" is not an octal mode such as \"0660\".\n".utf8))
            throw ExitCode.failure
        }
        if printConfig {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(settings), as: UTF8.self))
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "navlogd")
        do {
            try await Daemon(configuration: settings).run(logger: logger, environment: environment)
        } catch {
            // Store and configuration errors describe themselves as sentences.
            logger.critical("navlogd stopped: \(error)")
            throw ExitCode.failure
        }
        logger.info("Stopped cleanly; everything received is stored and fsynced.")
    }
}
