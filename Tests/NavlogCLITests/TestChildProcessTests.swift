import Foundation
import NavlogTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a test starts (navlogd, a program run with ProcessRunner, a raw posix_spawn) dies with
/// the test process, even when that process is SIGKILLed and runs no cleanup
/// (`TestChildProcesses`, `navlog-test-launch`); and it lives as long as the test process does,
/// also after the thread that started it has ended (Linux's parent-death signal follows the
/// thread that forked, so the harness forks from a thread of its own).
@Suite("Programs a test starts die with the test process")
struct TestChildProcessTests {
    /// Whether process `pid` is still running (a zombie waiting for its new parent to reap it is not).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
        return state != "Z" && state != "X"
    }

    @Test("navlogd, a RunningProcess and a spawned program survive the end of the thread that started them, and are gone within 3 s of the test process's SIGKILL")
    func childrenDieWithTheTestProcess() async throws {
        let launcher = TestEnvironment.binaries.appendingPathComponent("navlog-test-launch")
        try #require(FileManager.default.isExecutableFile(atPath: launcher.path), "\(launcher.path) is not built (swift build --build-tests builds it)")
        try await TestEnvironment.withTemporaryDirectory { dir in
            let pidsFile = dir.appendingPathComponent("pids").path
            let directory = dir.path
            // The child stands for a test process: it starts the programs from a thread that
            // then ends, checks they outlive it, writes their pids and kills itself. (`.failure`
            // takes any end but exit 0, so that the result, with what the child said, comes back.)
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [pidsFile = pidsFile as String, directory = directory as String] in
                let started = Started()
                let thread = Thread {
                    do {
                        started.daemon = try DaemonProcess(directory: URL(fileURLWithPath: directory))
                        started.sleeper = try RunningProcess(URL(fileURLWithPath: "/bin/sleep"), ["20"])
                        started.spawned = try TestChildProcesses.spawn(["/bin/sleep", "21"], standardError: "/dev/null")
                    } catch {
                        started.error = "\(error)"
                    }
                }
                thread.start()
                while !thread.isFinished { usleep(10_000) }
                usleep(500_000)  // the thread is gone, not only finished
                guard let daemon = started.daemon, let sleeper = started.sleeper, let spawned = started.spawned else {
                    ExitTestChild.say("could not start the children: \(started.error ?? "?")")
                    exit(3)
                }
                let pids = [daemon.pid, sleeper.pid, spawned]
                for pid in pids where !TestChildProcessTests.isRunning(pid) {
                    ExitTestChild.say("child \(pid) died when the thread that started it ended, with the test process still running")
                    exit(4)
                }
                try pids.map(String.init).joined(separator: " ").write(toFile: pidsFile, atomically: true, encoding: .utf8)
                kill(getpid(), SIGKILL)
            }
            if let result, result.exitStatus != .signal(SIGKILL) {  // exit 3 or 4: it said why
                Issue.record("the child ended with \(result.exitStatus): \(ExitTestChild.readableEnd(of: result.standardErrorContent).joined(separator: "\n"))")
            }
            let pids = ((try? String(contentsOfFile: pidsFile, encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
            try #require(pids.count == 3, "the child wrote no pids")
            let deadline = Date().addingTimeInterval(3)
            while pids.contains(where: Self.isRunning) && Date() < deadline { usleep(20_000) }
            for (pid, what) in zip(pids, ["navlogd (DaemonProcess)", "sleep (RunningProcess)", "sleep (TestChildProcesses.spawn)"]) where Self.isRunning(pid) {
                Issue.record("\(what), pid \(pid), still runs 3 s after the test process that started it was killed")
                kill(pid, SIGKILL)
            }
        }
    }
}

/// What the starting thread made, read once it has ended.
private final class Started: @unchecked Sendable {
    // `@unchecked`: written by the starting thread, read after it finished.
    var daemon: DaemonProcess?
    var sleeper: RunningProcess?
    var spawned: Int32?
    var error: String?
}
