import ArgumentParser
import Foundation
import NavlogClient
import NavlogEvents

/// `navlog send`: streams JSON Lines files to navlogd through ``NavlogClient``. A program of its
/// own (`navlog send` runs it) because the HTTP transport loads FoundationNetworking.
@main
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navlog send",
        abstract: "Send JSON Lines event files to navlogd.",
        discussion: """
            Sends every non-empty line through NavlogClient (the library apps use): one \
            connection, hello with the chosen ack mode, reconnection with backoff and resend of \
            anything unacknowledged if navlogd restarts (it drops what it already stored). Waits \
            until navlogd has acknowledged every line (with --ack durable: fsynced). Rejected \
            lines are reported with their file and line number. Exits 1 if any line was \
            rejected or navlogd did not acknowledge everything within --timeout seconds.

            With --url and --key-file, sends over HTTP(S) to navlog intake instead (the transport \
            apps use from phones): the lines go through a queue directory (--queue) in gzip \
            batches, resent until the intake answers (429 and 503 after their Retry-After). Run \
            the same command again after a crash or a timeout and it resumes: it sends what the \
            queue still holds and queues only the lines after it, so nothing is sent twice. To \
            send the same files again, use another queue directory.
            """
    )

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket: String = NavlogClient.defaultSocketPath

    @Option(help: ArgumentHelp("When navlogd acknowledges: batch (in the log) or durable (fsynced).", valueName: "mode"))
    var ack: String = "durable"

    @Option(help: ArgumentHelp("Seconds to wait for navlogd to take more events (when it is unreachable or cannot store) and for the last acknowledgement.", valueName: "seconds"))
    var timeout: Double = 120

    @Option(help: ArgumentHelp("navlog intake's events endpoint (http://HOST:PORT/v1/events): send over HTTP(S) instead of the socket.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("A file holding the intake key's bearer secret (with --url).", valueName: "file"))
    var keyFile: String?

    @Option(help: ArgumentHelp("The HTTP transport's queue directory (with --url); a rerun resumes from it.", valueName: "dir"))
    var queue: String = "navlog-send.queue"

    @Argument(help: ArgumentHelp("JSON Lines files (- for standard input).", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard NavlogClient.Acknowledgement(rawValue: ack) != nil else { throw ValidationError("--ack must be batch or durable.") }
        guard !files.isEmpty else { throw ValidationError("Name at least one file to send (or - for standard input).") }
        if let url {
            guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil else {
                throw ValidationError("--url must be an http:// or https:// address, such as http://127.0.0.1:8443/v1/events.")
            }
            guard keyFile != nil else { throw ValidationError("--url needs --key-file, the file holding the intake key's secret.") }
        } else if keyFile != nil {
            throw ValidationError("--key-file goes with --url.")
        }
    }

    func run() async throws {
        if url != nil {
            try await runOverHTTP()
            return
        }
        var configuration = NavlogClient.Configuration(socketPath: socket)
        configuration.acknowledgement = NavlogClient.Acknowledgement(rawValue: ack)!
        configuration.whenFull = .wait
        configuration.clientName = "navlog send"
        // Where each event came from, for rejection reports: event number → (file, line).
        let origins = Origins()
        let client = NavlogClient(configuration: configuration) { rejection in
            let (file, line) = origins.locate(rejection.event)
            var text = "\(file): line \(line)"
            if let field = rejection.field { text += ", field \"\(field)\"" }
            FileHandle.standardError.write(Data("\(text): \(rejection.reason)\n".utf8))
        }
        if let stall = try sendLines(through: client, origins: origins) {
            let reason = client.lastError.map { " (\($0))" } ?? ""
            throw failure(
                "navlogd took no events for \(timeout) s\(reason); \(stall.file) was sent only up to line \(stall.line). Run the same command again once navlogd is reachable and can store: what it already stored is dropped as duplicates"
            )
        }
        do {
            try await client.flush(timeout: timeout)
        } catch {
            throw failure("\(error)")
        }
        let stats = client.statistics
        await client.close(timeout: 1)
        let stored = stats.acknowledged - stats.duplicates - stats.rejected
        print(
            "Sent to \(socket): \(stored) events stored, \(stats.duplicates) duplicates dropped, \(stats.rejected) lines rejected\(stats.reconnects > 0 ? ", \(stats.reconnects) reconnections" : "")."
        )
        if stats.rejected > 0 { throw ExitCode.failure }
    }

    /// Where a send stopped: the queue stayed full for `--timeout` seconds.
    struct Stall {
        /// The file being sent (`<stdin>` for standard input).
        var file: String
        /// Its last line handed to the client.
        var line: Int
    }

    /// Hands every non-blank line of the files to `client`, in order, recording where each came
    /// from; skips the first `skip` such lines and, when `maximumLineBytes` is set, lines longer
    /// than that (`tooLong` reports them; they do not count towards `skip`).
    /// - Returns: where it stopped when the client took no event for `--timeout` seconds.
    func sendLines(
        through client: NavlogClient, origins: Origins, skip: UInt64 = 0, maximumLineBytes: Int? = nil, tooLong: (String, Int, Int) -> Void = { _, _, _ in }
    ) throws -> Stall? {
        var seen: UInt64 = 0
        for path in files {
            let name = path == "-" ? "<stdin>" : path
            let handle: FileHandle
            do {
                handle = path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw failure("cannot open \(path): \(error.localizedDescription)")
            }
            var framer = LineFramer(maximumLineLength: 1 << 30)
            var stalled = false
            func deliver(_ number: Int, _ piece: LineFramer.Piece) {
                guard !stalled, case .line(let bytes) = piece, bytes.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
                if let maximumLineBytes, bytes.count > maximumLineBytes {
                    tooLong(name, number, bytes.count)
                    return
                }
                seen += 1
                if seen <= skip { return }
                // The queue stays full only while nothing is taken: --timeout bounds that wait too.
                guard let id = client.send(bytes: Array(bytes), waitingAtMost: timeout) else {
                    stalled = true
                    return
                }
                origins.record(id, file: name, line: number)
            }
            while !stalled, let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                chunk.withUnsafeBytes { framer.feed($0, deliver) }
            }
            framer.finish(deliver)
            if stalled { return Stall(file: name, line: framer.lineNumber) }
        }
        return nil
    }

    /// Says `message` (a sentence without its full stop) on standard error; the exit to throw.
    func failure(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("navlog send: \(message).\n".utf8))
        return ExitCode.failure
    }
}

/// Event number → where it came from (shared with the client's thread, hence the lock).
final class Origins: @unchecked Sendable {
    // `@unchecked`: every access goes through `lock`.
    private let lock = NSLock()
    private var files: [(first: UInt64, name: String)] = []
    private var lines: [Int32] = []

    func record(_ id: UInt64, file: String, line: Int) {
        lock.withLock {
            if files.last?.name != file { files.append((id, file)) }
            lines.append(Int32(truncatingIfNeeded: line))
        }
    }

    func locate(_ id: UInt64) -> (String, Int) {
        lock.withLock {
            let name = files.last(where: { $0.first <= id })?.name ?? "?"
            let index = Int(id) - 1
            return (name, index < lines.count ? Int(lines[index]) : 0)
        }
    }
}
