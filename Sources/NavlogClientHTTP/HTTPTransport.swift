import Dispatch
import Foundation
import NavlogClient
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// ``NavlogClient``'s HTTP transport: memory → queue directory → gzip batches → `navlog intake`.
///
/// `send` only appends to memory under a lock (the app's thread never waits for a disk or a
/// network); the transport's own thread moves events to ``DiskQueue``, closes batches by count,
/// size and age, and posts the oldest batch until the intake answers it (see
/// ``NavlogClient/HTTPConfiguration``). One request at a time, so batches arrive in order.
final class HTTPTransport: NavlogClientTransport {
    private struct Pending: Sendable {
        var id: UInt64
        var bytes: [UInt8]
    }

    private struct State: Sendable {
        var memory: [Pending] = []
        var memoryStart = 0
        var nextID: UInt64 = 1
        /// Every event with a number at or below this is answered, rejected or dropped.
        var handledThrough: UInt64 = 0
        var handledAhead: Set<UInt64> = []
        var waiters = FlushWaiters()
        var statistics = NavlogClient.Statistics()
        var lastError: String?
        /// The highest event number a `flush` waits for: its batch is closed at once.
        var flushTarget: UInt64 = 0
        var closing = false
        var stopped = false
        /// The thread was signalled and has not woken yet (one signal per wake-up).
        var wakePending = false
        /// Batches an earlier process left in the queue and not yet answered (nil until the
        /// queue is open): `flush` waits for them too.
        var earlierBatchesLeft: Int?

        func flushed(through target: UInt64) -> Bool { handledThrough >= target && earlierBatchesLeft == 0 }

        var memoryCount: Int { memory.count - memoryStart }
    }

    /// How the intake answered one batch.
    private enum Outcome {
        /// `200`: the intake's counts and the lines it rejected.
        case answered(stored: Int, duplicates: Int, rejected: [[String: Any]])
        /// An answer that a resend cannot change.
        case refused(status: Int, reason: String)
        /// Try again later (after `Retry-After` when the server said).
        case retry(reason: String, retryAfter: Double?)
    }

    let configuration: NavlogClient.HTTPConfiguration
    private let whenFull: NavlogClient.FullQueuePolicy
    private let userAgent: String
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let onRejection: (@Sendable (NavlogClient.Rejection) -> Void)?

    init(configuration: NavlogClient.HTTPConfiguration, whenFull: NavlogClient.FullQueuePolicy, clientName: String, onRejection: (@Sendable (NavlogClient.Rejection) -> Void)?) {
        self.configuration = configuration
        self.whenFull = whenFull
        self.userAgent = clientName
        self.onRejection = onRejection
        let thread = Thread { [self] in self.run() }
        thread.name = "navlog.http"
        thread.start()
    }

    var lastError: String? { state.withLock { $0.lastError } }
    var statistics: NavlogClient.Statistics { state.withLock { $0.statistics } }

    func enqueue(_ bytes: [UInt8], deadline: ContinuousClock.Instant?) -> UInt64? {
        while true {
            let (id, signal): (UInt64?, Bool) = state.withLock { state in
                if state.memoryCount >= configuration.maximumQueuedEvents {
                    guard whenFull == .dropOldest else { return (nil, false) }
                    let dropped = state.memory[state.memoryStart]
                    state.memoryStart += 1
                    state.statistics.dropped += 1
                    state.lastError = "The queue held \(configuration.maximumQueuedEvents) events not yet on disk; the oldest were dropped."
                    markHandled(&state, dropped.id...dropped.id)
                }
                let id = state.nextID
                state.nextID += 1
                state.memory.append(Pending(id: id, bytes: bytes))
                state.statistics.queued += 1
                let signal = !state.wakePending
                state.wakePending = true
                return (id, signal)
            }
            if signal { wake.signal() }
            if let id { return id }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            usleep(1000)
        }
    }

    /// Waits until every event queued before the call is answered, rejected or dropped.
    func flush(timeout: Double) async throws {
        let target = state.withLock { state in
            state.flushTarget = max(state.flushTarget, state.nextID - 1)
            return state.nextID - 1
        }
        wakeUp()
        let flushed = await FlushWaiters.wait(timeout: timeout) { continuation in
            self.state.withLock { state in
                if state.flushed(through: target) { return true }
                state.waiters.add(target: target, continuation)
                return false
            }
        } expire: {
            self.state.withLock { $0.waiters.expire(target: target) }
        }
        guard flushed else {
            let error = lastError ?? "no answer arrived"
            throw NavlogClient.FlushError(
                description:
                    "The intake did not answer every event within \(timeout) s (\(error)); they stay in the queue \(configuration.queueDirectory.path) and are sent when it is reachable."
            )
        }
    }

    /// Stops the thread after it wrote everything in memory to the queue (what is not yet
    /// answered stays there for the next client on the same directory), and waits for that.
    func stop() async {
        state.withLock { $0.closing = true }
        wakeUp()
        while !state.withLock({ $0.stopped }) { try? await Task.sleep(for: .milliseconds(2)) }
    }

    private func wakeUp() {
        let signal = state.withLock { state in
            defer { state.wakePending = true }
            return !state.wakePending
        }
        if signal { wake.signal() }
    }

    private func markHandled(_ state: inout State, _ ids: ClosedRange<UInt64>) {
        for id in ids where id > state.handledThrough { state.handledAhead.insert(id) }
        while state.handledAhead.remove(state.handledThrough + 1) != nil { state.handledThrough += 1 }
        resumeFlushed(&state)
    }

    private func resumeFlushed(_ state: inout State) {
        let done = state
        state.waiters.resume { done.flushed(through: $0) }
    }

    /// Notes that a batch is answered or dropped; one an earlier process queued counts down
    /// what `flush` waits for.
    private func batchDone(_ state: inout State, _ batch: SealedBatch) {
        if batch.localIDs.isEmpty, let left = state.earlierBatchesLeft {
            state.earlierBatchesLeft = max(left - 1, 0)
            resumeFlushed(&state)
        } else {
            markHandled(&state, batch.localIDs)
        }
    }

    private func markHandled(_ state: inout State, _ ids: [UInt64]) {
        for id in ids { markHandled(&state, id...id) }
    }

    // MARK: - The transport's thread

    private func run() {
        let clock = configuration.clock
        let session = Self.makeSession(configuration)
        var queue: DiskQueue?
        var attempts = 0
        var nextAttempt = -Double.infinity
        defer {
            session.invalidateAndCancel()
            state.withLock { $0.stopped = true }
        }
        while true {
            let closing = state.withLock { state in
                state.wakePending = false
                return state.closing
            }
            if queue == nil {
                do {
                    let opened = try DiskQueue(directory: configuration.queueDirectory.path, compressionLevel: configuration.compressionLevel)
                    queue = opened
                    state.withLock { state in
                        state.earlierBatchesLeft = opened.sealed.count
                        resumeFlushed(&state)
                    }
                } catch {
                    state.withLock { $0.lastError = "\(error)" }
                    if closing { return }
                    clock.sleep(configuration.retryDelay.lowerBound, wake)
                    continue
                }
            }
            let queue = queue!
            let now = clock.now()
            let persisted = persist(queue, now: now)
            if whenFull == .dropOldest { enforceBounds(queue) }
            let flushTarget = state.withLock { $0.flushTarget }
            if queue.openCount > 0,
                closing || now - (queue.openSince ?? now) >= configuration.maximumBatchAge
                    || queue.openLocalIDs.first.map({ $0 <= flushTarget }) ?? false
            {
                do { try queue.seal() } catch { state.withLock { $0.lastError = "\(error)" } }
            }
            state.withLock { state in
                state.statistics.eventsOnDisk = UInt64(queue.eventCount)
                state.statistics.bytesOnDisk = UInt64(queue.byteCount)
            }
            if closing {
                if !persisted || state.withLock({ $0.memoryCount }) == 0 { return }
                continue
            }
            if let batch = queue.sealed.first, now >= nextAttempt {
                let outcome = upload(batch, queue: queue, session: session)
                let after = clock.now()
                switch outcome {
                case .answered, .refused:
                    attempts = 0
                    nextAttempt = -Double.infinity
                    finish(batch, outcome, queue: queue)
                case .retry(let reason, let retryAfter):
                    attempts += 1
                    nextAttempt = after + delay(attempt: attempts, retryAfter: retryAfter)
                    state.withLock { state in
                        state.statistics.retries += 1
                        state.lastError = reason
                    }
                }
                continue
            }
            if persisted && state.withLock({ $0.memoryCount }) > 0 { continue }
            var wait = 60.0
            if !queue.sealed.isEmpty { wait = min(wait, nextAttempt - now) }
            if let since = queue.openSince { wait = min(wait, since + configuration.maximumBatchAge - now) }
            clock.sleep(max(wait, 0.001), wake)
        }
    }

    /// Moves events from memory to the open batch (numbering sessions' events that have no
    /// `seq`), then writes them. Returns false when nothing could move (the queue is at its
    /// bound and the client waits rather than drops, or the disk failed).
    private func persist(_ queue: DiskQueue, now: Double) -> Bool {
        let atBound = queue.eventCount >= configuration.maximumQueuedEvents || queue.byteCount >= configuration.maximumQueuedBytes
        if whenFull == .wait && atBound { return false }
        let taken: [Pending] = state.withLock { state in
            let end = min(state.memory.count, state.memoryStart + 4096)
            let taken = Array(state.memory[state.memoryStart..<end])
            state.memoryStart = end
            if state.memoryStart > 4096 && state.memoryStart * 2 > state.memory.count {
                state.memory.removeFirst(state.memoryStart)
                state.memoryStart = 0
            }
            return taken
        }
        var index = 0
        var failure: (any Error)?
        while index < taken.count {
            let pending = taken[index]
            if pending.bytes.count > configuration.maximumLineBytes {
                reject(
                    [pending.id],
                    reason: "The event has \(pending.bytes.count) bytes; the intake takes at most \(configuration.maximumLineBytes). It was not sent.",
                    code: "too-long", status: nil, queueIndex: nil)
                index += 1
                continue
            }
            do {
                try queue.append(
                    SequenceNumbers.numbered(pending.bytes, in: queue), localID: pending.id, now: now,
                    maximumEvents: configuration.maximumBatchEvents, maximumBytes: configuration.maximumBatchBytes)
            } catch {
                failure = error
                break
            }
            index += 1
        }
        if failure == nil {
            do { try queue.writeOpenBatch() } catch { failure = error }
        }
        if index < taken.count {
            // Not taken by the queue: back to the front of memory, in order.
            state.withLock { state in
                state.memory.replaceSubrange(state.memoryStart..<state.memoryStart, with: taken[index...])
            }
        }
        if let failure {
            state.withLock { $0.lastError = "\(failure)" }
            return index > 0
        }
        return true
    }

    /// Drops the oldest batches (counted) while the queue is over its bounds.
    private func enforceBounds(_ queue: DiskQueue) {
        while queue.eventCount > configuration.maximumQueuedEvents || queue.byteCount > configuration.maximumQueuedBytes {
            if queue.sealed.isEmpty {
                guard queue.openCount > 0, (try? queue.seal()) != nil else { return }
                if queue.sealed.count == 1 && queue.eventCount <= configuration.maximumQueuedEvents && queue.byteCount <= configuration.maximumQueuedBytes { return }
            }
            guard let batch = try? queue.removeOldest(dropped: true) else { return }
            state.withLock { state in
                state.statistics.eventsOnDisk = UInt64(queue.eventCount)
                state.statistics.bytesOnDisk = UInt64(queue.byteCount)
                state.statistics.dropped += UInt64(batch.count)
                state.lastError =
                    "The queue reached its bound (\(configuration.maximumQueuedEvents) events, \(configuration.maximumQueuedBytes) bytes) while the intake was unreachable; its oldest \(batch.count) events were dropped."
                batchDone(&state, batch)
            }
        }
    }

    private func finish(_ batch: SealedBatch, _ outcome: Outcome, queue: DiskQueue) {
        do {
            try queue.removeOldest(dropped: false)
        } catch {
            // The answer stands; the batch is sent again later and comes back as duplicates.
            state.withLock { $0.lastError = "\(error)" }
        }
        state.withLock { state in
            state.statistics.eventsOnDisk = UInt64(queue.eventCount)
            state.statistics.bytesOnDisk = UInt64(queue.byteCount)
        }
        switch outcome {
        case .answered(let stored, let duplicates, let rejected):
            var rejections: [NavlogClient.Rejection] = []
            for entry in rejected {
                let line = (entry["line"] as? NSNumber)?.intValue ?? 0
                let local = line >= 1 && line <= batch.localIDs.count ? batch.localIDs[line - 1] : 0
                rejections.append(
                    NavlogClient.Rejection(
                        event: local, field: entry["field"] as? String, reason: entry["reason"] as? String ?? "rejected",
                        code: entry["code"] as? String, status: 200, queueIndex: line >= 1 ? batch.first + UInt64(line - 1) : nil))
            }
            state.withLock { state in
                state.statistics.acknowledged += UInt64(batch.count)
                state.statistics.duplicates += UInt64(duplicates)
                state.statistics.rejected += UInt64(rejected.count)
                state.statistics.stored += UInt64(stored)
                batchDone(&state, batch)
            }
            for rejection in rejections { onRejection?(rejection) }
        case .refused(let status, let reason):
            state.withLock { state in
                state.statistics.acknowledged += UInt64(batch.count)
                state.statistics.rejected += UInt64(batch.count)
                state.lastError = "The intake refused a batch of \(batch.count) events with \(status): \(reason)"
                batchDone(&state, batch)
            }
            for offset in 0..<batch.count {
                let local = offset < batch.localIDs.count ? batch.localIDs[offset] : 0
                onRejection?(
                    NavlogClient.Rejection(event: local, field: nil, reason: reason, code: "http-\(status)", status: status, queueIndex: batch.first + UInt64(offset)))
            }
        case .retry:
            break
        }
    }

    private func reject(_ ids: [UInt64], reason: String, code: String, status: Int?, queueIndex: UInt64?) {
        state.withLock { state in
            state.statistics.rejected += UInt64(ids.count)
            markHandled(&state, ids)
        }
        for id in ids { onRejection?(NavlogClient.Rejection(event: id, field: nil, reason: reason, code: code, status: status, queueIndex: queueIndex)) }
    }

    /// The wait before attempt `attempt + 1`: the server's `Retry-After` (capped, plus up to 10%
    /// so clients told the same do not come back together), else an exponential delay with
    /// "equal jitter" (half fixed, half random), capped at the largest retry delay.
    private func delay(attempt: Int, retryAfter: Double?) -> Double {
        if let retryAfter {
            let wait = min(max(retryAfter, 0), configuration.maximumRetryAfter)
            return wait + Double.random(in: 0...max(wait * 0.1, 0.05))
        }
        let base = configuration.retryDelay.lowerBound * pow(2, Double(min(attempt - 1, 40)))
        let capped = min(base, configuration.retryDelay.upperBound)
        return capped / 2 + Double.random(in: 0...(capped / 2))
    }

    // MARK: - HTTP

    private static func makeSession(_ configuration: NavlogClient.HTTPConfiguration) -> URLSession {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.requestTimeout * 2
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: sessionConfiguration, delegate: RedirectRefuser(), delegateQueue: nil)
    }

    private func upload(_ batch: SealedBatch, queue: DiskQueue, session: URLSession) -> Outcome {
        let body: Data
        do {
            body = try queue.body(of: batch)
        } catch {
            return .retry(reason: "\(error)", retryAfter: nil)
        }
        var request = URLRequest(url: configuration.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: configuration.requestTimeout)
        request.httpMethod = "POST"
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Content-Type")
        request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        request.setValue("Bearer \(configuration.key)", forHTTPHeaderField: "Authorization")
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        #if canImport(FoundationNetworking)
            // One connection per batch on Linux. When a kept-alive connection turns out to be dead
            // (a proxy or load balancer closed it between batches), libcurl reconnects by itself
            // and must rewind the body, which swift-corelibs-foundation cannot do for a data body:
            // it sent nothing and the request hung for the whole requestTimeout (60 s, seen behind
            // Tests/client's cutting proxy). A fresh connection fails at once instead, and the
            // transport's own retry sends the batch again.
            request.setValue("close", forHTTPHeaderField: "Connection")
        #endif
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<(Data?, URLResponse?, String?)>((nil, nil, nil))
        let task = session.uploadTask(with: request, from: body) { data, response, error in
            result.withLock { $0 = (data, response, error.map { ($0 as NSError).localizedDescription }) }
            done.signal()
        }
        task.resume()
        done.wait()
        let (data, response, error) = result.withLock { $0 }
        state.withLock { $0.statistics.bytesSent += UInt64(body.count) }
        if let error { return .retry(reason: "The intake could not be reached: \(error).", retryAfter: nil) }
        guard let http = response as? HTTPURLResponse else { return .retry(reason: "The intake's answer was not HTTP.", retryAfter: nil) }
        let payload = data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let reason = payload?["reason"] as? String ?? "no reason given"
        switch http.statusCode {
        case 200:
            guard let payload, let stored = (payload["stored"] as? NSNumber)?.intValue, let duplicates = (payload["duplicates"] as? NSNumber)?.intValue,
                let rejected = payload["rejected"] as? [[String: Any]]
            else {
                // A captive portal's page, a proxy's: the batch was not stored.
                return .retry(reason: "A 200 answer that is not the intake's (a captive portal or a proxy?); the batch is sent again later.", retryAfter: nil)
            }
            return .answered(stored: stored, duplicates: duplicates, rejected: rejected)
        case 400, 401, 403, 404, 405, 411, 413, 415, 422:
            return .refused(status: http.statusCode, reason: payload == nil ? "HTTP \(http.statusCode) without the intake's reason" : reason)
        default:
            let retryAfter = http.value(forHTTPHeaderField: "Retry-After").flatMap(Self.parseRetryAfter)
            return .retry(reason: "The intake answered \(http.statusCode): \(reason)", retryAfter: retryAfter)
        }
    }

    /// `Retry-After` as seconds or as an HTTP date.
    static func parseRetryAfter(_ value: String) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: trimmed).map { $0.timeIntervalSinceNow }
    }
}

/// Refuses redirects: a captive portal's redirect is not the intake, and its answer must not
/// count as one (the batch is sent again later).
private final class RedirectRefuser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // `@unchecked`: no state.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
