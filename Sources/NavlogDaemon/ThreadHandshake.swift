import Foundation  // Thread
import NIOConcurrencyHelpers

/// Runs `wait` (a call that blocks until another thread is done) on a new thread of its own and
/// returns its result: a service's stop waits this way, off the cooperative pool.
func waitOffThePool<Result: Sendable>(_ wait: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
        Thread { continuation.resume(returning: wait()) }.start()
    }
}

/// The wake-up and stop handshake between a dedicated thread (the log writer's, the syncer's)
/// and the threads that hand it work: a wake-up is never lost, and a stop waits for the
/// thread's last round.
final class ThreadHandshake: Sendable {
    /// 1 while there is work (or a stop request) the thread has not looked at.
    private let wakeUp = ConditionLock(value: 0)
    /// 1 once the thread has exited its loop.
    private let finished = ConditionLock(value: 0)

    /// Tells the thread there is work.
    func wake() {
        wakeUp.lock()
        wakeUp.unlock(withValue: 1)
    }

    /// On the thread: waits until woken, or at most `timeout` seconds. The signal is cleared
    /// before the thread takes its work, so work handed over meanwhile wakes it again.
    func waitForWork(timeout: Double? = nil) {
        if let timeout {
            if wakeUp.lock(whenValue: 1, timeoutSeconds: timeout) { wakeUp.unlock(withValue: 0) }
        } else {
            wakeUp.lock(whenValue: 1)
            wakeUp.unlock(withValue: 0)
        }
    }

    /// On the thread: its loop is over.
    func finish() {
        finished.lock()
        finished.unlock(withValue: 1)
    }

    /// Waits until the thread has called ``finish()``.
    func waitUntilFinished() {
        finished.lock(whenValue: 1)
        finished.unlock()
    }
}
