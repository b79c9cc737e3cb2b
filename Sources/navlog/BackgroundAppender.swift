import ArgumentParser
import Foundation  // Thread
import NavlogEvents
import NavlogStore
import Synchronization

/// Appends batches to an ``EventLog`` on a thread of its own, so that a command building
/// batches (`navlog import`) builds the next one while the last is encoded, compressed and
/// written: the block encoder and zstd run on the second core (docs/IMPORT.md has the figures).
///
/// The log belongs to the thread from ``init(log:command:advice:)`` until ``finish()`` returns;
/// nothing else may use it meanwhile. Batches are appended in the order they are handed over.
final class BackgroundAppender: Sendable {
    /// Batches handed over and not yet appended; one waits while the thread appends another.
    private let handedOver = BlockingChannel<EventBatch>(capacity: 1)
    /// Appended batches, emptied, for their storage to be reused.
    private let emptied = BlockingChannel<EventBatch>(capacity: 4)
    /// Whether an append failed (what happened is printed): later batches are not appended.
    private let failed = Atomic<Bool>(false)
    /// The thread's answer once everything handed over is appended (true) or an append failed (false).
    private let finished = BlockingChannel<Bool>(capacity: 1)

    /// The log, handed to the append thread.
    private struct Handover: @unchecked Sendable {
        // @unchecked: only the append thread uses the log until `finish()` has waited for its end.
        let log: EventLog
    }

    /// Starts the thread that appends to `log`; a failure prints `navlog COMMAND:`, what
    /// happened and `advice`.
    init(log: EventLog, command: String, advice: String) {
        let handover = Handover(log: log)
        Thread { self.appendAll(to: handover.log, command: command, advice: advice) }.start()
    }

    /// The thread's loop: appends each batch handed over until ``finish()`` closes the channel.
    private func appendAll(to log: EventLog, command: String, advice: String) {
        while var batch = handedOver.receive() {
            guard !failed.load(ordering: .acquiring) else { continue }
            do {
                try log.append(&batch, command: command, advice: advice)
            } catch {
                failed.store(true, ordering: .releasing)
                continue
            }
            _ = emptied.send(batch)
        }
        finished.send(!failed.load(ordering: .acquiring))
    }

    /// Hands `batch` over to be appended and gives back an empty one in its place, waiting
    /// while another batch is still waiting for the thread.
    /// - Throws: `ExitCode.failure` when an earlier append failed (it was reported).
    func append(_ batch: inout EventBatch) throws {
        guard !batch.isEmpty else { return }
        guard !failed.load(ordering: .acquiring) else { throw ExitCode.failure }
        var next = emptied.poll() ?? EventBatch()
        swap(&next, &batch)
        handedOver.send(next)
    }

    /// Waits until every batch handed over is appended; the log is the caller's again.
    /// - Throws: `ExitCode.failure` when an append failed (it was reported).
    func finish() throws {
        handedOver.close()
        let succeeded = finished.receive() ?? false
        // Kept for a later call, which would otherwise wait for an answer that never comes.
        finished.send(succeeded)
        guard succeeded else { throw ExitCode.failure }
    }
}
