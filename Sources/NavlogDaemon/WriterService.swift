import Logging
import NavlogStore
public import ServiceLifecycle

/// The log writer as a `Service`. It is the first service of the group, so it stops last: the
/// server, once it has stopped taking events, has the writer write and fsync everything queued
/// before its event loops end (``SocketServer``); this stop then reports how that ended.
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
        let writer = self.writer
        let failure = await waitOffThePool { writer.stop() }
        // Events were lost (the disk stayed full to the end): exit non-zero and say so.
        if let failure { throw failure }
    }
}
