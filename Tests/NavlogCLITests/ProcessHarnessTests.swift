import Foundation
import NavlogTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The test harness's child processes")
struct ProcessHarnessTests {
    /// SIGTERM's bit in /proc/PID/status's SigBlk (a hexadecimal mask, bit n-1 for signal n).
    static func blocksSIGTERM(_ status: String) -> Bool? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
            let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return nil }
        return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
    }

    @Test("a child spawned from a thread that blocks SIGTERM starts with it unblocked, so a test's SIGTERM reaches it")
    func childrenSeeSIGTERM() throws {
        let outcome = Mutex<Result<ProcessResult, any Error>?>(nil)
        let thread = Thread {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            let spawned = Result { try ProcessRunner.run(URL(fileURLWithPath: "/bin/cat"), ["/proc/self/status"]) }
            var now = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &now)
            // The spawning thread keeps its own mask.
            precondition(sigismember(&now, SIGTERM) == 1)
            outcome.withLock { $0 = spawned }
        }
        thread.start()
        let deadline = Date().addingTimeInterval(60)
        while outcome.withLock({ $0 }) == nil && Date() < deadline { usleep(5_000) }
        let status = try #require(outcome.withLock { $0 }).get()
        #expect(status.status == 0)
        #expect(Self.blocksSIGTERM(status.output) == false, "\(status.output)")
    }
}
