import ArgumentParser
import Foundation
import NavlogEvents

/// `navlog send`: streams JSON Lines files to navlogd and waits for its acknowledgements.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send JSON Lines event files to navlogd.",
        discussion: """
            Opens one connection, says hello with the chosen ack mode, streams the files and \
            waits until navlogd has acknowledged every line (with --ack durable: fsynced). \
            Rejected lines are reported with their file and line number. Exits 1 if any line \
            was rejected or navlogd could not store the events.
            """
    )

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket: String = defaultSocketPath()

    @Option(help: ArgumentHelp("When navlogd acknowledges: none, batch (in the log) or durable (fsynced).", valueName: "mode"))
    var ack: String = "durable"

    @Argument(help: ArgumentHelp("JSON Lines files (- for standard input).", valueName: "file"))
    var files: [String]

    func validate() throws {
        guard HelloLine.AckMode(rawValue: ack) != nil else { throw ValidationError("--ack must be none, batch or durable.") }
        guard !files.isEmpty else { throw ValidationError("Name at least one file to send (or - for standard input).") }
    }

    func run() throws {
        let connection: UnixSocket
        do { connection = try UnixSocket(path: socket) } catch {
            FileHandle.standardError.write(Data("navlog send: \(error)\n".utf8))
            throw ExitCode.failure
        }
        // Line 1 is the hello; each file's lines follow. Remember where each file starts.
        let starts = SendProgress()
        let sender = Thread { [files, ack] in
            do {
                let hello = Array("{\"hello\":1,\"client\":\"navlog send\",\"ack\":\"\(ack)\"}\n".utf8)
                try hello.withUnsafeBytes { try connection.write($0) }
                var line = 1
                for path in files {
                    starts.fileStarted(path, afterLine: line)
                    let handle = path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                    var endsWithNewline = true
                    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                        line += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                        endsWithNewline = chunk.last == 0x0A
                        try chunk.withUnsafeBytes { try connection.write($0) }
                    }
                    if !endsWithNewline {
                        try [UInt8(0x0A)].withUnsafeBytes { try connection.write($0) }
                        line += 1
                    }
                }
                starts.finished(lastLine: line)
            } catch {
                starts.failed("\(error)")
            }
            if ack == "none" { connection.finishWriting() }
        }
        sender.start()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var pending: [UInt8] = []
        var totals = (stored: 0, duplicates: 0, rejected: 0, lost: 0)
        var storeFailure: String?
        reading: while true {
            let n = connection.read(into: &buffer)
            if n == 0 { break }
            pending.append(contentsOf: buffer[..<n])
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                guard let reply = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                if let acked = reply["ack"] as? Int {
                    totals.stored += reply["stored"] as? Int ?? 0
                    totals.duplicates += reply["duplicates"] as? Int ?? 0
                    totals.lost += reply["lost"] as? Int ?? 0
                    if let last = starts.lastLine, acked >= last { break reading }
                } else if let error = reply["error"] as? String {
                    if error == "rejected", let number = reply["line"] as? Int {
                        totals.rejected += 1
                        let (file, fileLine) = starts.locate(number)
                        var text = "\(file): line \(fileLine)"
                        if let field = reply["field"] as? String { text += ", field \"\(field)\"" }
                        text += ": \(reply["reason"] as? String ?? "rejected")"
                        FileHandle.standardError.write(Data("\(text)\n".utf8))
                    } else {
                        storeFailure = reply["reason"] as? String ?? error
                        if error == "refused" { break reading }
                    }
                }
            }
        }
        if let failure = starts.failure {
            FileHandle.standardError.write(Data("navlog send: \(failure)\n".utf8))
            throw ExitCode.failure
        }
        if let storeFailure {
            FileHandle.standardError.write(Data("navlog send: navlogd: \(storeFailure)\n".utf8))
            throw ExitCode.failure
        }
        if ack != "none" && starts.lastLine == nil {
            FileHandle.standardError.write(Data("navlog send: navlogd closed the connection before acknowledging everything; resend (duplicates are dropped).\n".utf8))
            throw ExitCode.failure
        }
        print("Sent to \(socket): \(totals.stored) events stored, \(totals.duplicates) duplicates dropped, \(totals.rejected) lines rejected\(totals.lost > 0 ? ", \(totals.lost) sequence numbers missing" : "").")
        if totals.rejected > 0 { throw ExitCode.failure }
    }
}

/// Shared between the sending thread and the reading one: where each file starts.
final class SendProgress: @unchecked Sendable {
    // `@unchecked`: every access goes through `lock`.
    private let lock = NSLock()
    private var starts: [(String, Int)] = []
    private var last: Int?
    private(set) var failure: String?

    func fileStarted(_ path: String, afterLine line: Int) { lock.withLock { starts.append((path == "-" ? "<stdin>" : path, line)) } }
    func finished(lastLine: Int) { lock.withLock { last = lastLine } }
    func failed(_ reason: String) { lock.withLock { failure = reason; last = 0 } }
    var lastLine: Int? { lock.withLock { last } }

    /// The file and its own line number of connection line `number`.
    func locate(_ number: Int) -> (String, Int) {
        lock.withLock {
            guard let start = starts.last(where: { $0.1 < number }) else { return ("<hello>", number) }
            return (start.0, number - start.1)
        }
    }
}
