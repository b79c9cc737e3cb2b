import ArgumentParser
import NavlogEvents
import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `navlog ingest`: offline import of JSON Lines files with the daemon's validation.
struct IngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Import JSON Lines event files into a data directory.",
        discussion: """
            Every line is validated exactly as the daemon validates it (schemas/README.md). Good \
            lines are stored even when others are rejected; each rejected line is reported on \
            standard error with its file, line number, column or field, and what was wrong. \
            Use - to read standard input. Exits 1 when any line was rejected.
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: ArgumentHelp("Reject lines longer than this many bytes.", valueName: "bytes"))
    var maxLineBytes = 65_536

    @Flag(help: "Do not list each rejected line, only the counts.")
    var quiet = false

    @Argument(help: ArgumentHelp("JSON Lines files to import (- for standard input).", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one file to import (or - for standard input).") }
        guard maxLineBytes > 0 else { throw ValidationError("--max-line-bytes must be positive.") }
    }

    func run() throws {
        let log = try data.openLog(command: "ingest")
        let peer = PeerCredentials(uid: getuid(), gid: getgid(), pid: getpid())
        var parser = EventLineParser(maximumLineLength: maxLineBytes)
        var batch = EventBatch()
        var totals = (events: 0, rejected: 0, hellos: 0)
        let firstLSN = log.nextLSN
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for path in files {
            let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                printError("navlog ingest: cannot open \(path): \(String(cString: strerror(errno))). Nothing from it was imported.")
                throw ExitCode.failure
            }
            defer { if descriptor != STDIN_FILENO { close(descriptor) } }
            var framer = LineFramer(maximumLineLength: maxLineBytes)
            var counts = (events: 0, rejected: 0, hellos: 0)
            let name = path == "-" ? "<stdin>" : path
            func handle(_ number: Int, _ piece: LineFramer.Piece, receivedAt: Int64) {
                let rejection: EventRejection
                switch piece {
                case .tooLong(let length):
                    rejection = parser.tooLong(lineNumber: number, length: length)
                case .line(let bytes):
                    do throws(EventRejection) {
                        switch try parser.parse(bytes, lineNumber: number, receivedAt: receivedAt, peer: peer, into: &batch) {
                        case .event: counts.events += 1
                        case .hello, .control: counts.hellos += 1
                        case .blank: break
                        case .relay:
                            // Trusted fields are never taken from input: a key is stored only
                            // when a relay navlogd trusts says it over navlogd's socket.
                            throw EventRejection(
                                code: .forbidden, line: number, path: "relay",
                                reason: "navlog ingest takes no relay keys; only a relay that navlogd trusts (relayUIDs, relayGIDs) may say which key sent events")
                        }
                        return
                    } catch {
                        rejection = error
                    }
                }
                counts.rejected += 1
                if !quiet { printError("\(name): \(rejection)") }
            }
            while true {
                let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    printError("navlog ingest: reading \(name) failed: \(String(cString: strerror(errno))).")
                    throw ExitCode.failure
                }
                if n == 0 { break }
                let now = currentMicroseconds()
                chunk.withUnsafeBytes { raw in
                    framer.feed(UnsafeRawBufferPointer(rebasing: raw[..<n])) { number, piece in handle(number, piece, receivedAt: now) }
                }
                if batch.count >= 16_384 { try append(&batch, to: log) }
            }
            framer.finish { number, piece in handle(number, piece, receivedAt: currentMicroseconds()) }
            try append(&batch, to: log)
            totals.events += counts.events
            totals.rejected += counts.rejected
            totals.hellos += counts.hellos
            if files.count > 1 {
                print("\(name): \(framer.lineNumber) lines, \(counts.events) events stored, \(counts.rejected) rejected")
            }
        }
        do {
            try log.close()
        } catch {
            printError("navlog ingest: \(error.message)")
            throw ExitCode.failure
        }
        let range = totals.events > 0 ? ", LSNs \(firstLSN)–\(log.nextLSN - 1)" : ""
        print(
            "Stored \(totals.events) events in \(data.dataDirectory)\(range); \(totals.rejected) lines rejected\(totals.hellos > 0 ? ", \(totals.hellos) hello lines skipped" : "")."
        )
        if totals.rejected > 0 { throw ExitCode.failure }
    }

    private func append(_ batch: inout EventBatch, to log: EventLog) throws {
        try log.append(&batch, command: "ingest", advice: "Run the command again once the problem is fixed; events already stored stay stored.")
    }
}

/// Tells the user what opening the log repaired.
func reportRecovery(_ report: RecoveryReport) {
    for sentence in report.sentences { printError("navlog: recovering the log: \(sentence)") }
}
