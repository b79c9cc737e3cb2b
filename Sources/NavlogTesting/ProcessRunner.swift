public import Foundation

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
        timeout: TimeInterval = 120
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let outFile = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-out-\(UUID().uuidString)")
        let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: outFile.path, contents: nil)
        FileManager.default.createFile(atPath: errFile.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        let outHandle = try FileHandle(forWritingTo: outFile)
        let errHandle = try FileHandle(forWritingTo: errFile)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            let writer = inputPipe.fileHandleForWriting
            Thread.detachNewThread {
                try? writer.write(contentsOf: input)
                try? writer.close()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        return ProcessResult(
            status: process.terminationStatus,
            standardOutput: try Data(contentsOf: outFile),
            standardError: try Data(contentsOf: errFile)
        )
    }

    /// Runs a built navlog executable (`navlog`, `navlogd`) by name.
    public static func navlog(_ arguments: [String], input: Data? = nil, executable: String = "navlog", timeout: TimeInterval = 120) throws -> ProcessResult {
        try run(TestEnvironment.binaries.appendingPathComponent(executable), arguments, input: input, timeout: timeout)
    }
}
