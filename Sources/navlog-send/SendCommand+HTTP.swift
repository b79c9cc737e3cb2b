import ArgumentParser
import Foundation
import NavlogClient
import NavlogClientHTTP
import NavlogEvents

extension SendCommand {
    /// Where a file set was queued from: the files (path and size) and the queue index of their
    /// first event line. Kept in the queue directory as `send-cursor.json`.
    private struct Cursor: Codable, Equatable {
        var files: [String]
        var start: UInt64
    }

    /// `navlog send --url`: the files through NavlogClient's HTTP transport and its queue.
    func runOverHTTP() async throws {
        let endpoint = URL(string: url!)!
        let secret: String
        do {
            secret = try String(contentsOfFile: keyFile!, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw failure("cannot read the key file \(keyFile!): \(error.localizedDescription)")
        }
        guard !secret.isEmpty else { throw failure("the key file \(keyFile!) is empty; it must hold the key's secret") }
        let queueDirectory = URL(fileURLWithPath: queue)
        var http = NavlogClient.HTTPConfiguration(url: endpoint, key: secret, queueDirectory: queueDirectory)
        http.maximumQueuedEvents = 50_000
        http.maximumQueuedBytes = 256 << 20
        http.retryDelay = 0.25...30
        var configuration = NavlogClient.Configuration(http: http)
        configuration.whenFull = .wait
        configuration.clientName = "navlog send"

        // Resume: the lines of these files already in the queue (or sent from it) are skipped.
        let identity = files.map { path -> String in
            if path == "-" { return "-" }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? -1
            return "\(URL(fileURLWithPath: path).standardizedFileURL.path) \(size)"
        }
        let queued: UInt64
        do {
            queued = try NavlogClient.queuedEventCount(queueDirectory: queueDirectory)
        } catch {
            throw failure("\(error)")
        }
        let cursorPath = queueDirectory.appendingPathComponent("send-cursor.json")
        var skip: UInt64 = 0
        let previous = (try? Data(contentsOf: cursorPath)).flatMap { try? JSONDecoder().decode(Cursor.self, from: $0) }
        if let previous, previous.files == identity, !identity.contains("-"), queued >= previous.start {
            skip = queued - previous.start
            if skip > 0 { FileHandle.standardError.write(Data("navlog send: \(skip) events of these files are already in \(queue) (an earlier run); sending from there.\n".utf8)) }
        } else {
            do {
                try FileManager.default.createDirectory(at: queueDirectory, withIntermediateDirectories: true)
                try JSONEncoder().encode(Cursor(files: identity, start: queued)).write(to: cursorPath, options: .atomic)
            } catch {
                throw failure("cannot write \(cursorPath.path): \(error.localizedDescription)")
            }
        }
        let start = previous?.files == identity ? previous!.start : queued

        let origins = Origins()
        let printed = Counter()
        var tooLong = 0
        let client = NavlogClient(configuration: configuration) { rejection in
            guard printed.increment() <= 100 else { return }
            var text: String
            if rejection.event > 0 {
                let (file, line) = origins.locate(rejection.event)
                text = "\(file): line \(line)"
            } else {
                text = "event \((rejection.queueIndex ?? start) - start + 1) of the files (queued by an earlier run)"
            }
            if let field = rejection.field { text += ", field \"\(field)\"" }
            FileHandle.standardError.write(Data("\(text): \(rejection.reason)\n".utf8))
        }
        // Lines the transport would refuse to send are reported here and not queued, so that
        // the count of queued lines (the resume point) stays the count of lines sent.
        let stall = try sendLines(through: client, origins: origins, skip: skip, maximumLineBytes: http.maximumLineBytes) { file, line, bytes in
            tooLong += 1
            FileHandle.standardError.write(
                Data("\(file): line \(line): the event has \(bytes) bytes; the intake takes at most \(http.maximumLineBytes). It was not sent.\n".utf8))
        }
        if let stall {
            let reason = client.lastError.map { " (\($0))" } ?? ""
            await client.close(timeout: 0)
            throw failure(
                "the intake took no events for \(timeout) s\(reason); \(stall.file) was queued up to line \(stall.line). Run the same command again: it resumes from \(queue)")
        }
        do {
            try await client.flush(timeout: timeout)
        } catch {
            await client.close(timeout: 0)
            throw failure("\(error) Run the same command again to resume")
        }
        let stats = client.statistics
        await client.close(timeout: 1)
        if printed.value > 100 { FileHandle.standardError.write(Data("navlog send: \(printed.value - 100) more rejections not shown.\n".utf8)) }
        var summary =
            "Sent to \(endpoint.absoluteString): \(stats.stored) events stored, \(stats.duplicates) duplicates dropped, \(stats.rejected + UInt64(tooLong)) lines rejected"
        if stats.dropped > 0 { summary += ", \(stats.dropped) events dropped by the full queue" }
        if stats.retries > 0 { summary += ", \(stats.retries) attempts retried" }
        print(summary + ".")
        if stats.rejected > 0 || stats.dropped > 0 || tooLong > 0 { throw ExitCode.failure }
    }
}

/// A count shared with the client's thread.
private final class Counter: @unchecked Sendable {
    // `@unchecked`: every access goes through `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() -> Int {
        lock.withLock {
            count += 1; return count
        }
    }
    var value: Int { lock.withLock { count } }
}
