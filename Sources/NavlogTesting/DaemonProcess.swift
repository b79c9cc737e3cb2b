public import Foundation
import NavlogClient

#if canImport(Glibc)
    import Glibc
#endif

/// A `navlogd` started by a test on a temporary socket and data directory. It dies with the test
/// process, even a killed one (``TestChildProcesses``).
public final class DaemonProcess: @unchecked Sendable {
    // `@unchecked`: used from one test at a time; Process itself is thread-safe for these calls.
    /// The socket it listens on.
    public let socket: String
    /// Its data directory.
    public let dataDirectory: String
    private let process = Process()
    private let errorFile: URL

    /// Starts navlogd and waits until its socket accepts connections.
    /// - Parameters:
    ///   - directory: holds the socket (`navlog.sock`), the data (`data/`) and its log.
    ///   - arguments: extra navlogd arguments (e.g. `--config`).
    ///   - environment: extra environment variables.
    public init(directory: URL, arguments: [String] = [], environment: [String: String] = [:], waitForSocket: Bool = true) throws {
        socket = directory.appendingPathComponent("navlog.sock").path
        dataDirectory = directory.appendingPathComponent("data").path
        errorFile = directory.appendingPathComponent("navlogd-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.executableURL = TestEnvironment.binaries.appendingPathComponent("navlogd")
        process.arguments = ["--socket", socket, "--data-dir", dataDirectory] + arguments
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "INVOCATION_ID"] { env.removeValue(forKey: key) }
        process.environment = env.merging(environment) { $1 }
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardOutput = FileHandle.nullDevice
        try process.runDyingWithTestProcess()
        guard waitForSocket else { return }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let client = try? SocketClient(path: socket) {
                client.close()
                return
            }
            if !process.isRunning { throw TestFailure("navlogd exited at start: \(log)") }
            usleep(20_000)
        }
        throw TestFailure("navlogd did not open \(socket) within 30 s: \(log)")
    }

    /// What navlogd wrote to standard error.
    public var log: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    /// The part of ``log`` a failure message should show: when navlogd crashed, from the
    /// runtime's message (`Fatal error: …`, the backtracer's `💣 Program crashed`) through the
    /// first frames of the crashed thread; else the last 3,000 characters. The end of a crash
    /// report is only the thread's bottom frames, which say nothing of the cause.
    public var logForReport: String {
        let text = log
        let markers = ["Fatal error", "💣", "Program crashed"]
        guard let start = markers.compactMap({ text.range(of: $0)?.lowerBound }).min() else { return String(text.suffix(3000)) }
        return String(text[start...].prefix(6000))
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// navlogd's counters, as `navlog stats --format json` prints them.
    /// - Throws: ``TestFailure`` when `navlog stats` fails or does not print a JSON object.
    public func stats() throws -> [String: Any] {
        let result = try ProcessRunner.navlog(["stats", "--socket", socket, "--format", "json"])
        guard result.status == 0, let counters = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else {
            throw TestFailure("navlog stats failed (status \(result.status)): \(result.errorOutput)\(result.output)")
        }
        return counters
    }

    /// Sends SIGTERM and waits (up to `timeout` s) for the exit status.
    @discardableResult
    public func terminate(timeout: Double = 30) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        return wait(timeout: timeout)
    }

    /// Waits (up to `timeout` s) for navlogd to exit by itself; its status, or nil if it is still running.
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Limits the size navlogd may grow any file to (RLIMIT_FSIZE, what `ulimit -f` and
    /// systemd's `LimitFSIZE=` set), or lifts the limit with `nil`: a write beyond it fails with
    /// EFBIG, as a full disk fails with ENOSPC, without needing a small filesystem.
    public func setFileSizeLimit(_ bytes: Int?) throws {
        // util-linux's prlimit(1): glibc's prlimit(2) is not visible to Swift without _GNU_SOURCE.
        // Only the soft limit changes, which an unprivileged user may raise again.
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/prlimit"), ["--pid", "\(process.processIdentifier)", "--fsize=\(bytes.map(String.init) ?? "unlimited"):"])
        guard result.status == 0 else { throw TestFailure("prlimit could not set navlogd's file size limit: \(result.errorOutput)") }
    }

    /// Sends SIGKILL (a crash) and waits for the process to be gone.
    public func crash() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = wait(timeout: 30)
    }

    private func wait(timeout: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// A failure of test set-up, said as a sentence.
public struct TestFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// Creates a failure.
    public init(_ description: String) { self.description = description }
}

/// A raw client of navlogd's socket, for tests that need exact bytes and replies.
public final class SocketClient: @unchecked Sendable {
    // `@unchecked`: one test uses a client at a time.
    private let descriptor: Int32
    private var pending: [UInt8] = []
    private var closed = false

    /// Connects to `path`.
    public init(path: String) throws {
        do {
            descriptor = try UnixDomainSocket.connect(path: path)
        } catch {
            throw TestFailure(error.description)
        }
    }

    /// Sends `text` as is.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    /// The next reply line (without `\n`), or nil on end of stream or after `timeout` seconds.
    public func readLine(timeout: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 || closed { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if n <= 0 { closed = true; continue }
            pending.append(contentsOf: buffer[..<n])
        }
    }

    /// Reads reply lines until one satisfies `predicate` (or time runs out).
    public func readUntil(timeout: Double = 30, _ predicate: ([String: Any]) -> Bool) -> [[String: Any]] {
        var replies: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let line = readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            replies.append(object)
            if predicate(object) { break }
        }
        return replies
    }

    /// Shuts down the sending side (the daemon reads end of stream; replies still arrive).
    public func shutdownSending() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    private var descriptorOpen = true

    /// Closes the connection (once; later calls do nothing).
    public func close() {
        closed = true
        if descriptorOpen {
            descriptorOpen = false
            Glibc.close(descriptor)
        }
    }
}
