public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The outcome of running a program to completion.
public struct ProcessResult: Sendable {
    /// The exit status (or the signal number for a killed process).
    public var status: Int32
    /// Everything written to standard output.
    public var standardOutput: Data
    /// Everything written to standard error.
    public var standardError: Data

    /// Standard output as UTF-8 text.
    public var output: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var errorOutput: String { String(decoding: standardError, as: UTF8.self) }
}

/// Runs programs for end-to-end tests.
public enum ProcessRunner {
    /// Runs `executable` with `arguments`, feeding `input` to its standard input, and waits.
    /// - Parameter timeout: seconds before the process is killed (a hang is a test failure, not a stuck CI).
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        input: Data? = nil,
        environment: [String: String]? = nil,
        currentDirectory: URL? = nil,
        timeout: TimeInterval = 120
    ) throws -> ProcessResult {
        try RunningProcess(executable, arguments, input: input, environment: environment, currentDirectory: currentDirectory).finish(timeout: timeout)
    }

    /// Runs a built navlog executable (`navlog`, `navlogd`) by name.
    public static func navlog(_ arguments: [String], input: Data? = nil, executable: String = "navlog", timeout: TimeInterval = 120) throws -> ProcessResult {
        try run(TestEnvironment.binaries.appendingPathComponent(executable), arguments, input: input, timeout: timeout)
    }
}

/// A program started by a test that keeps running until ``stop()``: for followers such as
/// `navlog tail -f`. Started at once (no task to wait for a free thread), and it dies with the
/// test process (``TestChildProcesses``).
public final class RunningProcess: @unchecked Sendable {
    // `@unchecked`: used by the one test that started it.
    private let process = Process()
    private let outFile: URL
    private let errFile: URL

    /// Starts `executable` with `arguments`, optionally feeding `input` to its standard input,
    /// in `currentDirectory` when given.
    public init(_ executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil, currentDirectory: URL? = nil) throws {
        outFile = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-out-\(UUID().uuidString)")
        errFile = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardOutput = try FileHandle(forWritingTo: outFile)
        process.standardError = try FileHandle(forWritingTo: errFile)
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.runDyingWithTestProcess()
        if let input {
            let writer = inputPipe.fileHandleForWriting
            Thread.detachNewThread {
                try? writer.write(contentsOf: input)
                try? writer.close()
            }
        }
    }

    /// Waits for it to exit (killing it after `timeout` seconds) and returns what it printed.
    public func finish(timeout: TimeInterval) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        return stop()
    }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// What it has written to standard output so far.
    public var output: String { (try? String(contentsOf: outFile, encoding: .utf8)) ?? "" }

    /// What it has written to standard error so far.
    public var errorOutput: String { (try? String(contentsOf: errFile, encoding: .utf8)) ?? "" }

    /// Waits until its output contains `text` (or `timeout` passes); returns whether it did.
    public func waitForOutput(containing text: String, timeout: Double) -> Bool {
        wait(timeout) { output.contains(text) }
    }

    /// Waits until its standard error satisfies `condition` (or `timeout` passes); returns whether it did.
    public func waitForErrorOutput(timeout: Double, until condition: (String) -> Bool) -> Bool {
        wait(timeout) { condition(errorOutput) }
    }

    private func wait(_ timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// Stops it (SIGTERM) and returns everything it printed.
    public func stop() -> ProcessResult {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        defer {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        return ProcessResult(
            status: process.terminationStatus,
            standardOutput: (try? Data(contentsOf: outFile)) ?? Data(),
            standardError: (try? Data(contentsOf: errFile)) ?? Data()
        )
    }
}
