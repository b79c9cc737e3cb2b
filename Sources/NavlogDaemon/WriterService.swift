import Foundation  // Thread
import Logging
import NavlogStore
public import ServiceLifecycle

/// The log writer as a `Service`. It is the first service of the group, so it stops last:
/// after the server has stopped taking events, it writes and fsyncs everything queued.
public final class WriterService: Service, Sendable {
    let writer: LogWriter

    init(writer: LogWriter) {
        self.writer = writer
    }

    public func run() async throws {
        writer.start()
        try? await gracefulShutdown()
        // `stop` waits for the writer thread's final flush; keep that wait off the
        // cooperative pool.
        let failure = await withCheckedContinuation { (continuation: CheckedContinuation<StoreError?, Never>) in
            let writer = self.writer
            let thread = Thread {
                continuation.resume(returning: writer.stop())
            }
            thread.start()
        }
        // Events were lost (the disk stayed full to the end): exit non-zero and say so.
        if let failure { throw failure }
    }
}
