import Foundation  // JSONSerialization for the daemon's replies (one per batch), Thread
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends navigation events to navlogd without ever blocking the app.
///
/// Events go into a bounded queue (when it is full the oldest is dropped and counted) and a
/// background thread writes them to the daemon's socket: it says hello with the chosen ack
/// mode, batches writes, reads acknowledgements, reconnects with exponential backoff when the
/// daemon goes away, and resends every event not yet acknowledged; the daemon drops the ones
/// it already stored (same `session` and `seq`), so a resend never duplicates.
///
/// With NavlogClientHTTP's `Configuration.init(http:)` the same API sends to `navlog intake`
/// over HTTP(S) instead, through a queue directory that survives the app being killed.
///
/// ```swift
/// let client = NavlogClient(configuration: .init(socketPath: "/run/navlog/navlog.sock"))
/// client.send(#"{"type":"nav.push","session":"…","seq":7,"nav":"0x1","vc":"0x2"}"#)
/// try await client.flush()   // everything sent so far is fsynced by navlogd
/// ```
public final class NavlogClient: Sendable {
    /// How the client behaves.
    public struct Configuration: Sendable {
        /// navlogd's socket.
        public var socketPath: String
        /// When the daemon acknowledges: `durable` (fsynced, the default) or `batch` (in the log).
        public var acknowledgement: Acknowledgement = .durable
        /// Events kept while the daemon is slow or away; beyond this the oldest are dropped.
        public var maximumQueuedEvents = 10_000
        /// The client's name in its hello.
        public var clientName = "NavlogClient"
        /// First and largest wait between reconnection attempts (doubling in between).
        public var reconnectDelay: ClosedRange<Double> = 0.05...5
        /// What `send` does when the queue is full.
        public var whenFull: FullQueuePolicy = .dropOldest

        /// When set, events go through the transport it makes instead of the socket, and
        /// `socketPath`, `acknowledgement` and `reconnectDelay` are not used.
        package var transport: TransportFactory?

        /// A configuration for `socketPath` with defaults for the rest.
        public init(socketPath: String) {
            self.socketPath = socketPath
        }
    }

    /// The socket navlogd listens on when its configuration names none, as navlogd chooses it:
    /// `/run/navlog/navlog.sock` when it exists (the systemd service), else
    /// `$XDG_RUNTIME_DIR/navlog.sock`, else `navlog.sock` in the working directory.
    public static var defaultSocketPath: String {
        if access("/run/navlog/navlog.sock", F_OK) == 0 { return "/run/navlog/navlog.sock" }
        if let runtime = getenv("XDG_RUNTIME_DIR") { return String(cString: runtime) + "/navlog.sock" }
        return "navlog.sock"
    }

    /// The acknowledgement the client asks for.
    public enum Acknowledgement: String, Sendable {
        /// Acknowledged once in the log.
        case batch
        /// Acknowledged once fsynced.
        case durable
    }

    /// What `send` does when the queue is full.
    public enum FullQueuePolicy: Sendable {
        /// Drop the oldest queued event (count it) and never wait: for apps.
        case dropOldest
        /// Wait until there is room: for tools that must not lose anything.
        case wait
    }

    /// A line the daemon rejected.
    public struct Rejection: Sendable {
        /// The event's number in this client (1 for the first `send`).
        public var event: UInt64
        /// The field at fault, if any.
        public var field: String?
        /// Why.
        public var reason: String
        /// The rejection's code (`type`, `missing`, … as navlogd says it; `http-401` and the like
        /// for a batch the intake refused whole; `too-long` for a line the client did not send).
        public var code: String? = nil
        /// The HTTP status of the answer (HTTP transport only).
        public var status: Int? = nil
        /// The event's index in the HTTP transport's queue directory, which stays valid across
        /// restarts (`event` is 0 for events an earlier process queued).
        public var queueIndex: UInt64? = nil

        package init(event: UInt64, field: String?, reason: String, code: String? = nil, status: Int? = nil, queueIndex: UInt64? = nil) {
            self.event = event
            self.field = field
            self.reason = reason
            self.code = code
            self.status = status
            self.queueIndex = queueIndex
        }
    }

    /// Counters.
    public struct Statistics: Sendable, Equatable {
        /// Events given to `send`.
        public var queued: UInt64 = 0
        /// Events the daemon acknowledged (stored, dropped as duplicates, or rejected).
        public var acknowledged: UInt64 = 0
        /// Events dropped because the queue was full.
        public var dropped: UInt64 = 0
        /// Events the daemon rejected.
        public var rejected: UInt64 = 0
        /// Events the daemon reported as already stored.
        public var duplicates: UInt64 = 0
        /// Connections made after the first.
        public var reconnects: UInt64 = 0
        /// HTTP: events the intake stored (new, not duplicates).
        public var stored: UInt64 = 0
        /// HTTP: attempts that failed and will be made again (no network, 429, 5xx, …).
        public var retries: UInt64 = 0
        /// HTTP: gzip bytes posted (every attempt).
        public var bytesSent: UInt64 = 0
        /// HTTP: events in the queue directory, not yet answered.
        public var eventsOnDisk: UInt64 = 0
        /// HTTP: bytes the queue directory holds.
        public var bytesOnDisk: UInt64 = 0

        /// Every counter at zero.
        public init() {}
    }

    /// Why `flush` could not finish.
    public struct FlushError: Error, CustomStringConvertible {
        /// What happened.
        public var description: String

        package init(description: String) {
            self.description = description
        }
    }

    private struct Pending: Sendable {
        var id: UInt64
        var bytes: [UInt8]
    }

    private struct State: Sendable {
        var queue: [Pending] = []
        var queueStart = 0
        /// Sent on the current connection, not yet acknowledged, with their connection line numbers.
        var unacknowledged: [(line: Int, pending: Pending)] = []
        var nextID: UInt64 = 1
        /// Every event with an id at or below this is acknowledged, rejected or dropped.
        var handledThrough: UInt64 = 0
        /// Handled ids above ``handledThrough`` (drops of queued events overtake sent ones).
        var handledAhead: Set<UInt64> = []
        var statistics = Statistics()
        var closing = false
        /// `flush` calls waiting for ``handledThrough`` to reach their target.
        var waiters = FlushWaiters()
        var lastError: String?
        var connectedOnce = false
        /// navlogd said it would not take the events (its disk is full, or this peer is not
        /// allowed): its reason stays the last error, the connection is dropped and everything
        /// unacknowledged resent after a growing delay.
        var daemonRefused = false

        var queuedCount: Int { queue.count - queueStart }
    }

    private let configuration: Configuration
    private let state = Mutex(State())
    private let onRejection: (@Sendable (Rejection) -> Void)?
    /// The configuration's other transport, if it names one (then the socket is not used).
    private let transport: (any NavlogClientTransport)?

    /// Creates a client and starts its background thread.
    /// - Parameter onRejection: called (on the client's thread) for each line the daemon rejects.
    public init(configuration: Configuration, onRejection: (@Sendable (Rejection) -> Void)? = nil) {
        self.configuration = configuration
        self.onRejection = onRejection
        if let makeTransport = configuration.transport {
            transport = makeTransport(configuration, onRejection)
            return
        }
        transport = nil
        let thread = Thread { [self] in self.run() }
        thread.start()
    }

    /// Queues one event line (a JSON object, without a newline). Never blocks unless the
    /// configuration says ``FullQueuePolicy/wait``.
    /// - Returns: the event's number in this client.
    @discardableResult
    public func send(_ line: String) -> UInt64 {
        send(bytes: Array(line.utf8))
    }

    /// Queues one event line given as bytes.
    @discardableResult
    public func send(bytes: [UInt8]) -> UInt64 {
        if let transport { return transport.enqueue(bytes, deadline: nil)! }
        return enqueue(bytes, deadline: nil)!
    }

    /// Queues one event line given as bytes, waiting at most `timeout` seconds for room when
    /// the configuration says ``FullQueuePolicy/wait`` (navlogd is unreachable or cannot store).
    /// - Returns: the event's number, or `nil` when the queue stayed full that long.
    public func send(bytes: [UInt8], waitingAtMost timeout: Double) -> UInt64? {
        if let transport { return transport.enqueue(bytes, deadline: .now + .seconds(timeout)) }
        return enqueue(bytes, deadline: .now + .seconds(timeout))
    }

    /// Why the last connection or batch failed, if one did (for messages to people).
    public var lastError: String? { transport?.lastError ?? state.withLock { $0.lastError } }

    private func enqueue(_ bytes: [UInt8], deadline: ContinuousClock.Instant?) -> UInt64? {
        while true {
            let id: UInt64? = state.withLock { state in
                if state.queuedCount >= configuration.maximumQueuedEvents {
                    guard configuration.whenFull == .dropOldest else { return nil }
                    let dropped = state.queue[state.queueStart]
                    state.queueStart += 1
                    state.statistics.dropped += 1
                    markHandled(&state, dropped.id)
                }
                let id = state.nextID
                state.nextID += 1
                state.queue.append(Pending(id: id, bytes: bytes))
                state.statistics.queued += 1
                return id
            }
            if let id { return id }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            usleep(1000)
        }
    }

    /// Waits until the daemon has acknowledged (with the configured acknowledgement) every
    /// event queued before this call.
    /// - Throws: ``FlushError`` when that has not happened within `timeout` seconds.
    public func flush(timeout: Double = 30) async throws {
        if let transport {
            try await transport.flush(timeout: timeout)
            return
        }
        let target = state.withLock { $0.nextID - 1 }
        let reached = await FlushWaiters.wait(timeout: timeout) { continuation in
            self.state.withLock { state in
                if state.handledThrough >= target { return true }
                state.waiters.add(target: target, continuation)
                return false
            }
        } expire: {
            self.state.withLock { $0.waiters.expire(target: target) }
        }
        if !reached {
            let error = state.withLock { $0.lastError } ?? "no acknowledgement arrived"
            throw FlushError(description: "navlogd did not acknowledge every event within \(timeout) s (\(error)); they stay queued and are resent when it is reachable.")
        }
    }

    /// A copy of the counters.
    public var statistics: Statistics { transport?.statistics ?? state.withLock { $0.statistics } }

    /// Stops the background thread once everything queued is acknowledged or `timeout` passes.
    /// Over HTTP, what is not answered by then stays in the queue directory for the next client.
    public func close(timeout: Double = 30) async {
        try? await flush(timeout: timeout)
        if let transport {
            await transport.stop()
            return
        }
        state.withLock { $0.closing = true }
    }

    // MARK: - The background thread

    private func markHandled(_ state: inout State, _ id: UInt64) {
        state.handledAhead.insert(id)
        while state.handledAhead.remove(state.handledThrough + 1) != nil { state.handledThrough += 1 }
        let through = state.handledThrough
        state.waiters.resume { $0 <= through }
    }

    private func run() {
        var delay = configuration.reconnectDelay.lowerBound
        while !state.withLock({ $0.closing }) {
            guard let descriptor = connectSocket() else {
                usleep(useconds_t(delay * 1_000_000))
                delay = min(delay * 2, configuration.reconnectDelay.upperBound)
                continue
            }
            serve(descriptor)
            posixClose(descriptor)
            let daemonRefused = state.withLock { state in
                defer { state.daemonRefused = false }
                return state.daemonRefused
            }
            if daemonRefused {
                // Resending at once would be refused again: back off until navlogd can write.
                usleep(useconds_t(delay * 1_000_000))
                delay = min(delay * 2, configuration.reconnectDelay.upperBound)
            } else {
                delay = configuration.reconnectDelay.lowerBound
            }
        }
    }

    private func connectSocket() -> Int32? {
        do {
            return try UnixDomainSocket.connect(path: configuration.socketPath)
        } catch {
            state.withLock { $0.lastError = error.description }
            return nil
        }
    }

    /// Runs one connection until it fails or the client closes.
    private func serve(_ fd: Int32) {
        // Everything sent on the previous connection and not acknowledged goes first again.
        state.withLock { state in
            let resend = state.unacknowledged.map(\.pending)
            state.unacknowledged.removeAll()
            if !resend.isEmpty {
                state.queue.replaceSubrange(state.queueStart..<state.queueStart, with: resend)
            }
            if state.connectedOnce { state.statistics.reconnects += 1 }
            state.connectedOnce = true
        }
        var line = 0
        var output: [UInt8] = Array("{\"hello\":1,\"client\":\(jsonQuoted(configuration.clientName)),\"ack\":\"\(configuration.acknowledgement.rawValue)\"}\n".utf8)
        line += 1
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let closing = state.withLock { $0.closing }
            if closing && output.isEmpty { return }
            // Take a batch from the queue (bounded, so acks keep flowing).
            if output.count < 256 << 10 {
                state.withLock { state in
                    var taken = 0
                    while state.queueStart < state.queue.count && taken < 4096 {
                        let pending = state.queue[state.queueStart]
                        state.queueStart += 1
                        line += 1
                        state.unacknowledged.append((line, pending))
                        output.append(contentsOf: pending.bytes)
                        output.append(0x0A)
                        taken += 1
                    }
                    if state.queueStart > 4096 && state.queueStart * 2 > state.queue.count {
                        state.queue.removeFirst(state.queueStart)
                        state.queueStart = 0
                    }
                }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN) | (output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            let ready = poll(&poller, 1, 20)
            if ready < 0 && errno != EINTR { return }
            // Replies first: navlogd may have said why it is about to close (it cannot store).
            if poller.revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 {
                    connectionFailed("navlogd closed the connection")
                    return
                }
                input.append(contentsOf: buffer[..<n])
                while let newline = input.firstIndex(of: 0x0A) {
                    handleReply(Array(input[..<newline]))
                    input.removeSubrange(...newline)
                }
                if state.withLock({ $0.daemonRefused }) { return }
            }
            if poller.revents & Int16(POLLOUT) != 0 {
                let n = output.withUnsafeBytes { posixSend(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno != EAGAIN && errno != EINTR {
                    let reason = String(cString: strerror(errno))
                    // Its last replies may still be readable: they say why.
                    while case let n = buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }), n > 0 {
                        input.append(contentsOf: buffer[..<n])
                    }
                    while let newline = input.firstIndex(of: 0x0A) {
                        handleReply(Array(input[..<newline]))
                        input.removeSubrange(...newline)
                    }
                    connectionFailed("navlogd closed the connection: \(reason)")
                    return
                }
                if n > 0 { output.removeFirst(n) }
            }
        }
    }

    /// Records why the connection ended, unless navlogd already said why (a store failure).
    private func connectionFailed(_ reason: String) {
        state.withLock { state in
            if !state.daemonRefused { state.lastError = reason }
        }
    }

    private func handleReply(_ bytes: [UInt8]) {
        guard let reply = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return }
        if let through = reply["ack"] as? Int {
            state.withLock { state in
                state.statistics.duplicates += UInt64(reply["duplicates"] as? Int ?? 0)
                while let first = state.unacknowledged.first, first.line <= through {
                    state.unacknowledged.removeFirst()
                    state.statistics.acknowledged += 1
                    markHandled(&state, first.pending.id)
                }
            }
        } else if reply["error"] as? String == "rejected", let line = reply["line"] as? Int {
            let rejection: Rejection? = state.withLock { state in
                guard let entry = state.unacknowledged.first(where: { $0.line == line }) else { return nil }
                state.statistics.rejected += 1
                return Rejection(event: entry.pending.id, field: reply["field"] as? String, reason: reply["reason"] as? String ?? "rejected")
            }
            if let rejection { onRejection?(rejection) }
        } else if let error = reply["error"] as? String {
            state.withLock { state in
                state.lastError = "navlogd: \(reply["reason"] as? String ?? error)"
                // A refused peer or a full disk: say why (not "closed"), and back off before trying again.
                if error == "store" || error == "refused" { state.daemonRefused = true }
            }
        }
    }
}

private func jsonQuoted(_ text: String) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
    return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}

// Free functions, so the C calls are not shadowed by the client's `send` and `close`.
private func posixClose(_ fd: Int32) {
    _ = close(fd)
}

private func posixSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        return send(fd, bytes, count, Int32(MSG_NOSIGNAL))
    #else
        return send(fd, bytes, count, 0)  // Darwin: SO_NOSIGPIPE would be set on the socket instead
    #endif
}
