import CoreMetrics
import Foundation  // Thread: the writer's dedicated OS thread
import Logging
import NIOConcurrencyHelpers
import NavlogEvents
import NavlogStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the writer did with one connection's batch.
struct WriteOutcome: Sendable {
    /// LSNs given to the stored events (empty when none were stored).
    var lsns: Range<UInt64>
    /// Events stored.
    var stored: Int
    /// Events dropped because their `(session, seq)` was already stored.
    var duplicates: Int
    /// Set when the batch (or its durability) failed; the message says what to do.
    var failure: StoreError?
}

/// Whether a connection's batches may still be stored: once one of them could not be, none
/// after it is, so that the client's resend of the failed one is not stored behind later
/// events of the same sessions. Set and read only on the writer thread.
final class ConnectionOrder: Sendable {
    let broken = Atomic<Bool>(false)
}

/// A batch from a connection and how it wants to hear back.
struct WriteRequest: Sendable {
    var batch: EventBatch
    var ack: HelloLine.AckMode
    /// Shared by every request of one connection.
    var order: ConnectionOrder
    /// When the connection handed it over (monotonic seconds), for the ack latency.
    var submittedAt = monotonicSeconds()
    /// Called on the writer thread once the batch is in the log (`none`, `batch`) or fsynced (`durable`).
    var completion: @Sendable (WriteOutcome) -> Void
    /// The memory its batch holds, as the queue budget counts it: the bytes of its sessions
    /// and bodies and its fixed-size headers (about as much again for small events).
    var memoryBytes: Int { batch.bytes.count + batch.count * MemoryLayout<EventBatch.Header>.stride }
}

/// The single writer of the data directory: a dedicated thread that takes every batch waiting
/// from all connections at once, a round of each connection's at a time (group commit with a
/// fair share: see ``WriterQueue/takeRound()``), drops resent events, appends, and then makes
/// the whole group visible (one block write) or durable (one fsync) together.
///
/// It runs on its own OS thread because writing and `fsync` block; event loops and the
/// cooperative pool never wait on the disk.
final class LogWriter: Sendable {
    /// The writer's states; requests are taken only while `running`.
    private enum State {
        /// Accepting requests.
        case running
        /// Asked to stop: finish what is queued, flush, close.
        case draining
        /// The thread has exited.
        case stopped
    }

    /// What connections hand the writer thread, and how it answers them: guarded by
    /// ``handoff``'s lock.
    private struct Handoff {
        /// The batches waiting, taken a round at a time.
        var queue = WriterQueue()
        /// Work on the log other than appending (installing a compacted segment), run on the
        /// writer thread between rounds.
        var chores: [@Sendable (EventLog) -> Void] = []
        var state = State.running
        /// Why the final write before stopping failed, if it did.
        var closeFailure: StoreError?
        /// Connections paused because the queue reached the daemon-wide budget, resumed when
        /// the thread has taken enough of it (see ``whenRoom(below:_:)``).
        var roomWaiters: [(budget: Int, resume: @Sendable () -> Void)] = []

        /// The waiters whose budget the queue is now under (removed from the list).
        mutating func waitersWithRoom() -> [@Sendable () -> Void] {
            guard !roomWaiters.isEmpty else { return [] }
            var ready: [@Sendable () -> Void] = []
            roomWaiters.removeAll { waiter in
                guard queue.bytes < waiter.budget else { return false }
                ready.append(waiter.resume)
                return true
            }
            return ready
        }
    }

    private let handoff = NIOLockedValueBox(Handoff())
    /// 1 when there is work (or a stop request) for the thread.
    private let handshake = ThreadHandshake()
    private let statistics: DaemonStatistics
    private let syncer: Syncer
    private let flushInterval: Double
    private let logger: Logger
    /// The log and the sequence tracker are touched only by the writer thread.
    private let logState: NIOLockedValueBox<LogState>

    /// The log and what the writer knows of it (dedupe, outage), confined to the writer thread.
    fileprivate struct LogState: @unchecked Sendable {
        // `EventLog` is a non-Sendable class confined to the writer thread; the box only
        // carries it there.
        var log: EventLog
        var tracker = SequenceTracker()
        /// Set while the log cannot be written (disk full, file size limit, I/O error): new
        /// batches are refused whole until a retry of the pending write succeeds.
        var outage: StoreOutage?
        /// When sessions were last swept for holes to give up (monotonic µs).
        var lastSweep: Int64 = 0
        /// The seal failure last logged, so a failure that repeats block after block is said once.
        var loggedSealFailure: String?

        /// Gives up the holes of sessions quiet for the grace window, once a second at most.
        mutating func sweepHoles(now clock: Int64) {
            guard clock - lastSweep >= 1_000_000 else { return }
            tracker.sweep(now: clock)
            lastSweep = clock
        }
    }

    /// Since when, and why, the log cannot be written.
    fileprivate struct StoreOutage {
        var since: Double
        var error: StoreError
        /// Events refused whole because of it (reported when the outage ends).
        var refusedEvents = 0
    }

    /// Opens the log and rebuilds the sequence tracker from it.
    /// - Parameter fatal: called (on the syncer thread) when fsync fails: the writes since the
    ///   last good fsync may be lost without a trace (Linux drops dirty pages it could not
    ///   write), so the daemon must not go on as if they were stored. By default it exits with
    ///   status 75; the next start recovers from what is on disk and rebuilds dedupe from it,
    ///   so clients' resends of what was not acknowledged are stored again.
    init(
        log: EventLog, statistics: DaemonStatistics, flushInterval: Double, lossGrace: Double = 300, roundBytes: Int = 64 << 10, roundLimitBytes: Int = 1 << 20,
        logger: Logger,
        fatal: @escaping @Sendable (String) -> Void = LogWriter.exitAfterFsyncFailure
    ) throws {
        self.statistics = statistics
        self.syncer = Syncer(statistics: statistics, logger: logger, fatal: fatal)
        self.flushInterval = flushInterval
        self.logger = logger
        handoff.withLockedValue {
            $0.queue.roundBytes = roundBytes > 0 ? roundBytes : Int.max
            $0.queue.roundLimitBytes = roundLimitBytes > 0 ? roundLimitBytes : Int.max
        }
        var tracker = SequenceTracker(grace: Int64(lossGrace * 1_000_000))
        // Dedupe survives restarts: every stored (session, seq) is known again, and what is
        // missing gets a whole grace window from now.
        let started = Int64(monotonicSeconds() * 1_000_000)
        let reader = try LogReader(directory: log.directory)
        var everyEvent = LogQuery()
        everyEvent.readsBodies = false
        try reader.scan(everyEvent) { block, index in
            if let sequence = block.sequence(index) {
                block.withSession(index) { session in
                    _ = tracker.record(session: session, sequence: sequence, now: started)
                    if block.types[index] == .sessionEnd { tracker.end(session: session, hash: StringHash.hash(session)) }
                }
            }
            return true
        }
        logState = NIOLockedValueBox(LogState(log: log, tracker: tracker, lastSweep: started))
        statistics.update {
            $0.sessionsTracked = tracker.sessionCount
            $0.missing = Int(tracker.missing)
            $0.lost = Int(tracker.lost)
        }
    }

    /// The default reaction to a failed fsync: say why, let the failure replies go out, exit 75
    /// (EX_TEMPFAIL: systemd's Restart= brings navlogd back, and recovery reads the disk).
    static let exitAfterFsyncFailure: @Sendable (String) -> Void = { reason in
        FileHandle.standardError.write(
            Data(
                "navlogd: \(reason) Events written since the last successful fsync may not be on disk. Exiting so that the next start recovers the log from what is on disk; clients resend what was not acknowledged as durable.\n"
                    .utf8))
        usleep(200_000)  // the failure replies are on their way to the clients
        exit(75)
    }

    /// Events queued and not yet taken by the thread (for backpressure decisions).
    var queuedEvents: Int { handoff.withLockedValue { $0.queue.events } }

    /// Bytes of events queued and not yet taken by the thread (for backpressure decisions).
    var queuedBytes: Int { handoff.withLockedValue { $0.queue.bytes } }

    /// Calls `resume` once the queue holds fewer than `budget` bytes: now (on this thread) if it
    /// already does, else when the writer thread next takes the queue. A connection paused for
    /// the daemon-wide budget has nothing of its own to wait for, so this is what wakes it.
    func whenRoom(below budget: Int, _ resume: @escaping @Sendable () -> Void) {
        let now = handoff.withLockedValue { handoff -> Bool in
            if handoff.queue.bytes < budget { return true }
            handoff.roomWaiters.append((budget, resume))
            return false
        }
        if now { resume() }
    }

    /// Queues a request; `false` once the writer is stopping.
    func submit(_ request: WriteRequest) -> Bool {
        let accepted = handoff.withLockedValue { handoff -> Bool in
            guard case .running = handoff.state else { return false }
            handoff.queue.append(request)
            return true
        }
        if accepted {
            handshake.wake()
        }
        return accepted
    }

    /// Starts the writer thread.
    func start() {
        syncer.start()
        let thread = Thread { [self] in self.run() }
        thread.start()
    }

    /// Stops taking requests, writes and fsyncs everything queued, closes the log, and waits
    /// for the thread to finish.
    /// - Returns: why the final write failed (events received were not stored), or `nil`.
    @discardableResult
    func stop() -> StoreError? {
        handoff.withLockedValue { if case .running = $0.state { $0.state = .draining } }
        handshake.wake()
        handshake.waitUntilFinished()
        return handoff.withLockedValue { $0.closeFailure }
    }

    /// Runs `chore` on the writer thread between rounds and waits for it.
    /// - Returns: its result, or nil when the writer is stopping (the chore did not run).
    func perform<Result: Sendable>(_ chore: @escaping @Sendable (EventLog) -> Result) -> Result? {
        let done = NIOLockedValueBox<Result?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let queued = handoff.withLockedValue { handoff -> Bool in
            guard case .running = handoff.state else { return false }
            handoff.chores.append { log in
                let result = chore(log)
                done.withLockedValue { $0 = result }
                finished.signal()
            }
            return true
        }
        guard queued else { return nil }
        handshake.wake()
        finished.wait()
        return done.withLockedValue { $0 }
    }

    private func run() {
        var lastFlush = monotonicSeconds()
        var dirty = false
        var more = false
        // Numbers are missing: they must be given up after the grace window even if no batch
        // comes, so the writer wakes once a second to sweep while there are any.
        var holes = false
        while true {
            // Clear the flag before taking the queue: a request queued after this sets it again.
            // Only unflushed events need a timed wake-up; with nothing to flush the writer
            // sleeps until woken, so an idle navlogd costs no CPU.
            // A round left batches in the queue: take the next one without waiting.
            if !more {
                let flushIn: Double? = dirty ? max(0.001, flushInterval - (monotonicSeconds() - lastFlush)) : nil
                handshake.waitForWork(timeout: holes ? min(flushIn ?? 1, 1) : flushIn)
            }
            let (requests, state, waiters, left, chores) = handoff.withLockedValue {
                handoff -> ([WriteRequest], State, [@Sendable () -> Void], Bool, [@Sendable (EventLog) -> Void]) in
                let taken = handoff.queue.takeRound()
                let chores = handoff.chores
                handoff.chores.removeAll()
                return (taken, handoff.state, handoff.waitersWithRoom(), !handoff.queue.isEmpty, chores)
            }
            more = left
            for resume in waiters { resume() }
            for chore in chores { logState.withLockedValue { chore($0.log) } }
            if !requests.isEmpty {
                process(requests)
                dirty = true
            } else if holes {
                sweepWhileIdle()
            }
            holes = logState.withLockedValue { $0.tracker.missing > 0 }
            if dirty && monotonicSeconds() - lastFlush >= flushInterval {
                logState.withLockedValue { state in
                    if state.outage != nil {
                        // Without new batches this is what notices that space came back.
                        retryAfterOutage(&state)
                        return
                    }
                    do throws(StoreError) {
                        try state.log.flush()
                        dirty = false
                    } catch {
                        beginOutage(&state, error)
                    }
                }
                lastFlush = monotonicSeconds()
            }
            if case .draining = state, handoff.withLockedValue({ $0.queue.isEmpty && $0.chores.isEmpty }) {
                // Everything still waiting for an fsync gets it before the log closes.
                syncer.stop()
                logState.withLockedValue { state in
                    let unwritten = state.log.bufferedEventCount
                    do throws(StoreError) {
                        try state.log.close()
                    } catch {
                        var failure = error
                        failure.message = "\(unwritten) events navlogd had accepted could not be written before it stopped: \(error.message)"
                        handoff.withLockedValue { $0.closeFailure = failure }
                    }
                }
                handoff.withLockedValue { $0.state = .stopped }
                handshake.finish()
                return
            }
        }
    }

    /// Gives up the holes of sessions quiet for the grace window when no batch comes (see
    /// ``process(_:)``, which sweeps under load), and updates the counters.
    private func sweepWhileIdle() {
        let clock = Int64(monotonicSeconds() * 1_000_000)
        let (missing, lost) = logState.withLockedValue { state -> (UInt64, UInt64) in
            state.sweepHoles(now: clock)
            return (state.tracker.missing, state.tracker.lost)
        }
        statistics.update { stats in
            stats.missing = Int(missing)
            stats.lost = Int(lost)
        }
    }

    /// Handles one round of requests in stages: under the log's lock, each request is refused
    /// (outage), or deduplicated and appended (``append(_:kept:to:clock:)``), then the round is
    /// written or handed to the syncer together (``makeVisible(_:_:in:)``); then, outside the
    /// lock, the counters are updated and each request completes, the durable ones once the
    /// syncer's fsync is done.
    private func process(_ requests: [WriteRequest]) {
        var outcomes: [WriteOutcome] = []
        outcomes.reserveCapacity(requests.count)
        var syncPoint: SyncPoint?
        let clock = Int64(monotonicSeconds() * 1_000_000)
        let snapshot = logState.withLockedValue { state -> RoundSnapshot in
            if state.outage != nil { retryAfterOutage(&state) }
            if let outage = state.outage {
                refuse(requests, outage, into: &outcomes, in: &state)
            } else {
                // The events of a batch that has duplicates; a batch without any is appended as
                // it is. Never assigned a request's batch, so clearing it keeps its own storage.
                var kept = EventBatch()
                var needsSync = false
                var needsWrite = false
                for request in requests {
                    if request.order.broken.load(ordering: .relaxed) {
                        outcomes.append(WriteOutcome(lsns: state.log.nextLSN..<state.log.nextLSN, stored: 0, duplicates: 0, failure: Self.afterFailedBatch))
                        continue
                    }
                    outcomes.append(append(request, kept: &kept, to: &state, clock: clock))
                    needsSync = needsSync || request.ack == .durable
                    needsWrite = needsWrite || request.ack == .batch
                }
                syncPoint = makeVisible(requests, &outcomes, sync: needsSync, write: needsWrite, in: &state)
                reportSealFailure(&state)
            }
            state.sweepHoles(now: clock)
            return RoundSnapshot(
                sessionsTracked: state.tracker.sessionCount, bufferedEvents: state.log.bufferedEventCount, missing: state.tracker.missing,
                lost: state.tracker.lost)
        }
        record(requests, outcomes, snapshot, waitingForSync: syncPoint != nil)
        // Durable requests wait for the syncer (unless nothing needed syncing); the rest are done now.
        var durable: [(WriteRequest, WriteOutcome)] = []
        for (request, outcome) in zip(requests, outcomes) {
            if Self.waitsForSync(request, outcome, syncPoint != nil) {
                durable.append((request, outcome))
            } else {
                request.completion(outcome)
            }
        }
        if let syncPoint { syncer.submit(syncPoint, durable) }
    }

    /// What the counters show of the log after a round, read under its lock.
    private struct RoundSnapshot {
        var sessionsTracked: Int
        var bufferedEvents: Int
        var missing: UInt64
        var lost: UInt64
    }

    /// Whether a request completes only once the syncer's fsync is done.
    private static func waitsForSync(_ request: WriteRequest, _ outcome: WriteOutcome, _ syncing: Bool) -> Bool {
        request.ack == .durable && outcome.failure == nil && syncing
    }

    /// Refuses a whole round during an outage, before dedupe: nothing about these events is
    /// remembered, so their resend after the outage is stored like a first send.
    private func refuse(_ requests: [WriteRequest], _ outage: StoreOutage, into outcomes: inout [WriteOutcome], in state: inout LogState) {
        let refusal = refusalError(outage)
        for request in requests {
            state.outage?.refusedEvents += request.batch.count
            request.order.broken.store(true, ordering: .relaxed)
            outcomes.append(WriteOutcome(lsns: state.log.nextLSN..<state.log.nextLSN, stored: 0, duplicates: 0, failure: refusal))
        }
    }

    /// Drops the resent events of one request (of a connection whose earlier batches were
    /// stored; exactly-once by session and `seq`), appends the
    /// rest, and says how it went. A failed append forgets the sequence numbers of what it
    /// could not store, so that a resend is stored, not dropped, and begins an outage.
    private func append(_ request: WriteRequest, kept: inout EventBatch, to state: inout LogState, clock: Int64) -> WriteOutcome {
        var keptIsCopy = false
        var duplicates = 0
        var endsSession = false
        let batch = request.batch
        for index in 0..<batch.count {
            if let sequence = batch.headers[index].sequence {
                let hash = batch.headers[index].sessionHash
                let verdict = batch.withSession(of: index) { state.tracker.record(session: $0, hash: hash, sequence: sequence, now: clock) }
                if verdict == .duplicate {
                    // From the first duplicate on, copy only what is kept.
                    if !keptIsCopy {
                        kept.removeAll()
                        for earlier in 0..<index { kept.append(earlier, of: batch) }
                        keptIsCopy = true
                    }
                    duplicates += 1
                    continue
                }
            }
            if keptIsCopy { kept.append(index, of: batch) }
            endsSession = endsSession || batch.headers[index].type == .sessionEnd
        }
        let stored = keptIsCopy ? kept : batch
        var outcome = WriteOutcome(lsns: state.log.nextLSN..<state.log.nextLSN, stored: 0, duplicates: duplicates, failure: nil)
        do throws(AppendError) {
            outcome.lsns = try state.log.append(stored)
            outcome.stored = stored.count
        } catch {
            for index in (error.accepted..<stored.count).reversed() {
                if let sequence = stored.headers[index].sequence {
                    let hash = stored.headers[index].sessionHash
                    stored.withSession(of: index) { state.tracker.forget(session: $0, hash: hash, sequence: sequence) }
                }
            }
            outcome.stored = error.accepted
            outcome.lsns = (state.log.nextLSN - UInt64(error.accepted))..<state.log.nextLSN
            outcome.failure = error.cause
            request.order.broken.store(true, ordering: .relaxed)
            beginOutage(&state, error.cause)
        }
        // A stored session.end gives up what its session still misses (lost); most batches
        // hold none, and are not walked again.
        if endsSession {
            for index in 0..<outcome.stored where stored.headers[index].type == .sessionEnd {
                let hash = stored.headers[index].sessionHash
                stored.withSession(of: index) { state.tracker.end(session: $0, hash: hash) }
            }
        }
        return outcome
    }

    /// Makes the round's events visible (one block write) when a request asked for a batch
    /// ack, or writes them for the syncer to make durable (one fsync on its thread while this
    /// one goes on) when one asked for a durable ack. A failure fails every acknowledged
    /// request of the round and begins an outage.
    private func makeVisible(
        _ requests: [WriteRequest], _ outcomes: inout [WriteOutcome], sync needsSync: Bool, write needsWrite: Bool, in state: inout LogState
    ) -> SyncPoint? {
        do throws(StoreError) {
            if needsSync { return try state.log.writeForSync() }
            if needsWrite { try state.log.writeBufferedEvents() }
            return nil
        } catch {
            beginOutage(&state, error)
            for index in outcomes.indices where requests[index].ack != .none && outcomes[index].failure == nil {
                outcomes[index].failure = error
                requests[index].order.broken.store(true, ordering: .relaxed)
            }
            return nil
        }
    }

    /// A full segment that could not be sealed costs no event (they are stored): says so once,
    /// and once more when it is sealed after all.
    private func reportSealFailure(_ state: inout LogState) {
        let sealFailure = state.log.sealFailure?.message
        guard sealFailure != state.loggedSealFailure else { return }
        if let sealFailure {
            logger.warning("A full segment could not be sealed; it stays active and navlogd tries again after the next block (every event is stored): \(sealFailure)")
        } else {
            logger.info("The full segment was sealed after all.")
        }
        state.loggedSealFailure = sealFailure
    }

    /// Updates the counters after a round, and records the ack latency of the requests done
    /// now (the syncer records the durable ones').
    private func record(_ requests: [WriteRequest], _ outcomes: [WriteOutcome], _ snapshot: RoundSnapshot, waitingForSync syncing: Bool) {
        let now = monotonicSeconds()
        statistics.update { stats in
            stats.sessionsTracked = snapshot.sessionsTracked
            stats.lagEvents = snapshot.bufferedEvents
            stats.missing = Int(snapshot.missing)
            stats.lost = Int(snapshot.lost)
            for (request, outcome) in zip(requests, outcomes) {
                stats.accepted += outcome.stored
                stats.duplicates += outcome.duplicates
                if outcome.failure != nil {
                    stats.storeFailures += 1
                    stats.storeRefusedEvents += request.batch.count - outcome.stored - outcome.duplicates
                } else if request.ack != .none && !Self.waitsForSync(request, outcome, syncing) {
                    stats.ackSamples.record((now - request.submittedAt) * 1000)
                    DaemonMetrics.ackLatency.recordSeconds(now - request.submittedAt)
                }
            }
        }
    }
}

extension LogWriter {
    /// Enters (or stays in) an outage after a failed write: logged once, not per batch, and
    /// shown in `navlog stats` and systemd's status line.
    fileprivate func beginOutage(_ state: inout LogState, _ error: StoreError) {
        guard state.outage == nil else {
            state.outage?.error = error
            return
        }
        state.outage = StoreOutage(since: monotonicSeconds(), error: error)
        logger.error(
            "navlogd cannot write its log and refuses new events until it can: \(error.message) It retries every \(flushInterval) s; \(state.log.bufferedEventCount) events already accepted wait in memory."
        )
        let since = RFC3339.format(microseconds: currentMicroseconds())
        statistics.update {
            $0.storeError = error.message
            $0.storeErrorSince = since
        }
    }

    /// Retries the write that failed; on success the outage ends and events are taken again.
    fileprivate func retryAfterOutage(_ state: inout LogState) {
        guard let outage = state.outage else { return }
        do throws(StoreError) {
            try state.log.writeBufferedEvents()
        } catch {
            state.outage?.error = error
            return
        }
        state.outage = nil
        let seconds = monotonicSeconds() - outage.since
        logger.notice(
            "navlogd can write its log again after \(Int(seconds.rounded())) s; \(outage.refusedEvents) events were refused meanwhile (their senders resend them)."
        )
        statistics.update {
            $0.storeError = nil
            $0.storeErrorSince = nil
        }
    }

    /// The error of a batch that came after one of its connection's batches failed.
    fileprivate static let afterFailedBatch = StoreError(
        code: .io,
        message:
            "An earlier batch of this connection was not stored, so this one was not either (a resend must keep each session's order). Reconnect and resend everything not acknowledged."
    )

    /// The error a batch refused during an outage gets.
    fileprivate func refusalError(_ outage: StoreOutage) -> StoreError {
        var error = outage.error
        error.message =
            "navlogd cannot write its log, so these events were not stored: \(outage.error.message) Resend them later (NavlogClient and `navlog send` do so by themselves, with backoff)."
        return error
    }
}

func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
