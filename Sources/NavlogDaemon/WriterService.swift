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
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let writer = self.writer
            let thread = Thread {
                writer.stop()
                continuation.resume()
            }
            thread.start()
        }
    }
}
