import Foundation  // Thread: copies are made on a dedicated OS thread, off the cooperative pool
import Logging
import NavlogStore
public import ServiceLifecycle
import Synchronization

/// Compacts sealed segments in the background: every ``interval`` seconds it looks for sealed
/// segments with small blocks (durable clients make the writer write a block at every fsync),
/// writes each again with full blocks on its own thread (``SegmentCompaction``), and has the
/// writer put the copy in place between two rounds. Acknowledged events are never at risk: the
/// original stays until the fsynced copy replaces it with one rename.
///
/// It comes after the writer in the service group, so it stops first: a copy in progress is
/// abandoned (the next start removes it) and nothing is installed after the writer's last round.
public final class CompactionService: Service, Sendable {
    private let directory: String
    private let options: LogOptions
    private let interval: Double
    private let writer: LogWriter
    private let statistics: DaemonStatistics
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    private let handshake = ThreadHandshake()

    init(directory: String, options: LogOptions, interval: Double, writer: LogWriter, statistics: DaemonStatistics, logger: Logger) {
        self.directory = directory
        self.options = options
        self.interval = interval
        self.writer = writer
        self.statistics = statistics
        self.logger = logger
    }

    public func run() async throws {
        let thread = Thread { [self] in self.loop() }
        thread.start()
        try? await gracefulShutdown()
        stopping.store(true, ordering: .relaxed)
        handshake.wake()
        // Waiting for the thread (it may be between two blocks of a copy) stays off the pool.
        let handshake = self.handshake
        await waitOffThePool { handshake.waitUntilFinished() }
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) }

    private func loop() {
        while !isStopping {
            handshake.waitForWork(timeout: interval)
            if isStopping { break }
            compactOnce()
        }
        handshake.finish()
    }

    /// Compacts every sealed segment worth it, oldest first.
    func compactOnce() {
        let reader: LogReader
        do {
            reader = try LogReader(directory: directory)
        } catch {
            logger.warning("Log compaction could not read the log: \(error.message)")
            return
        }
        for name in SegmentCompaction.candidates(reader, options: options) {
            if isStopping { return }
            do {
                guard let copy = try SegmentCompaction.writeCopy(of: name, reader: reader, options: options, isCancelled: { self.isStopping }) else {
                    continue
                }
                let installed = writer.perform { log -> Result<Bool, StoreError> in
                    do throws(StoreError) { return .success(try log.install(copy)) } catch { return .failure(error) }
                }
                switch installed {
                case .success(true):
                    statistics.update { $0.segmentsCompacted += 1 }
                    logger.info(
                        "Compacted \(name): \(copy.events) events in \(copy.originalBlocks) blocks, \(copy.originalBytes) bytes → \(copy.compactedBlocks) blocks, \(copy.compactedBytes) bytes."
                    )
                case .success(false):
                    logger.info("Did not compact \(name): it changed or went while it was copied (retention, recovery).")
                case .failure(let error):
                    logger.warning("Could not put the compacted copy of \(name) in place (the original stays): \(error.message)")
                case nil:
                    SegmentCompaction.discard(copy)
                    return
                }
            } catch {
                logger.warning("Could not compact \(name) (the original stays; retried in \(Int(interval)) s): \(error.message)")
            }
        }
    }
}
