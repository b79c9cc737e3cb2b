public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The programs a test starts die with the test process, even when it is killed (SIGKILL, a
/// crash): none is left running to hold a socket, a port or a data directory's lock, nor to
/// hide a failed run behind a hang.
///
/// Every child goes through `navlog-test-launch` (Sources/navlog-test-launch), which asks Linux
/// for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`) and then executes the program in its
/// place. Linux sends that signal when the *thread* that started the child ends, not the
/// process, and tests run on Swift's and libdispatch's worker threads, which come and go: so
/// children are started from one thread of this module's own that lives as long as the process.
public enum TestChildProcesses {
    /// `navlog-test-launch` beside the built programs, or nil (then children are started as
    /// they are, and may outlive a killed test process; said once on standard error).
    static let launcher: URL? = {
        let url = TestEnvironment.binaries.appendingPathComponent("navlog-test-launch")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        let line = "navlog tests: \(url.path) is not built (swift build --build-tests builds it); programs the tests start may outlive a killed test process\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        return nil
    }()

    /// `executable` and `arguments` as the launcher runs them, or as they are without one, or when
    /// `executable` cannot be run (so that starting it fails as it would have).
    static func launching(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
        guard let launcher, FileManager.default.isExecutableFile(atPath: executable.path) else { return (executable, arguments) }
        return (launcher, ["\(getpid())", executable.path] + arguments)
    }

    /// Starts `arguments` (a program's path, then its arguments) with `posix_spawn`, standard
    /// output to /dev/null and standard error to the file `standardError`, through the launcher
    /// on the long-lived thread; returns its pid, for `waitpid`.
    public static func spawn(_ arguments: [String], standardError: String) throws -> pid_t {
        let (program, rest) = launching(URL(fileURLWithPath: arguments[0]), Array(arguments.dropFirst()))
        let argv = ([program.path] + rest).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let (pid, result) = try SpawningThread.shared.run { () -> (pid_t, Int32) in
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            var pid: pid_t = 0
            let result = withSignalsUnblocked { posix_spawn(&pid, program.path, &actions, nil, argv, environ) }
            return (pid, result)
        }
        guard result == 0 else { throw TestFailure("cannot start \(arguments[0]): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Runs `body` with SIGTERM and SIGINT unblocked in the calling thread, then restores its
    /// mask. A child inherits the signal mask of the thread that spawns it, and Swift's and
    /// libdispatch's threads block those signals: a child that does not unblock them itself (as
    /// `navlog` does since b22a79a) would never see the test's SIGTERM (`navlog tail -f` once
    /// hung a whole test run that way).
    static func withSignalsUnblocked<R>(_ body: () throws -> R) rethrows -> R {
        #if canImport(Glibc)
            var signals = sigset_t()
            var previous = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGTERM)
            sigaddset(&signals, SIGINT)
            pthread_sigmask(SIG_UNBLOCK, &signals, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        #endif
        return try body()
    }
}

/// The thread children are started from: made on first use, it lives as long as the process,
/// so a child's parent-death signal comes only when the process ends.
final class SpawningThread: @unchecked Sendable {
    // `@unchecked`: `jobs` is only touched with `condition` locked.
    static let shared = SpawningThread()

    private static let name = "navlog-test-spawner"
    private let condition = NSCondition()
    private var jobs: [Job] = []

    /// Work for the thread, and the signal that it is done.
    private final class Job {
        var work: (() -> Void)?
        let done = DispatchSemaphore(value: 0)

        init(_ work: @escaping () -> Void) { self.work = work }

        /// Does the work, lets go of it (the caller's closure must not outlive its call:
        /// `withoutActuallyEscaping` checks), then signals.
        func run() {
            do {
                let work = self.work!
                self.work = nil
                work()
            }
            done.signal()
        }
    }

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = Self.name
        thread.start()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.run()
        }
    }

    /// Runs `body` on the spawning thread and returns what it returned (or throws what it threw).
    func run<R>(_ body: () throws -> R) throws -> R {
        if Thread.current.name == Self.name { return try body() }
        return try withoutActuallyEscaping(body) { body in
            var result: Result<R, any Error>?
            let job = Job { result = Result { try body() } }
            condition.lock()
            jobs.append(job)
            condition.signal()
            condition.unlock()
            job.done.wait()
            return try result!.get()
        }
    }
}

extension Process {
    /// Starts the process through `navlog-test-launch` from the spawning thread, with SIGTERM
    /// and SIGINT unblocked (``TestChildProcesses``): it dies when the test process does.
    /// `processIdentifier` is the program's own pid (the launcher executes it in its place).
    func runDyingWithTestProcess() throws {
        if let executableURL {
            let (program, arguments) = TestChildProcesses.launching(executableURL, self.arguments ?? [])
            self.executableURL = program
            self.arguments = arguments
        }
        try SpawningThread.shared.run { try TestChildProcesses.withSignalsUnblocked { try run() } }
    }
}
