/// A way to navlogd other than its socket, behind the same ``NavlogClient`` API: the HTTP
/// transport of NavlogClientHTTP. A separate module holds it so that programs using only the
/// socket do not load FoundationNetworking (libcurl and some thirty more shared libraries on
/// Linux, several milliseconds at every start).
package protocol NavlogClientTransport: Sendable {
    /// Queues one event line; waits for room until `deadline` when the queue is full and the
    /// policy is ``NavlogClient/FullQueuePolicy/wait`` (forever when nil).
    /// - Returns: the event's number in this client, or nil when the deadline passed.
    func enqueue(_ bytes: [UInt8], deadline: ContinuousClock.Instant?) -> UInt64?
    /// Waits until every event queued before the call is answered, rejected or dropped.
    /// - Throws: ``NavlogClient/FlushError`` saying what is left when `timeout` passes first.
    func flush(timeout: Double) async throws
    /// Stops the transport's work; what is not answered stays where the transport keeps it.
    func stop() async
    /// Why the last attempt failed, if one did.
    var lastError: String? { get }
    /// A copy of the counters.
    var statistics: NavlogClient.Statistics { get }
}

extension NavlogClient.Configuration {
    /// Makes the transport a configuration names (set by another module's initializer, such as
    /// NavlogClientHTTP's `init(http:)`), given the configuration and the rejection handler.
    package typealias TransportFactory = @Sendable (NavlogClient.Configuration, (@Sendable (NavlogClient.Rejection) -> Void)?) -> any NavlogClientTransport
}

/// `flush` calls waiting for the events before them to be handled, for every transport.
package struct FlushWaiters: Sendable {
    private var waiters: [(target: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []

    /// No one waiting.
    package init() {}

    /// Resumes (with `true`) every waiter whose target `isFlushed` says is reached.
    package mutating func resume(where isFlushed: (UInt64) -> Bool) {
        let ready = waiters.filter { isFlushed($0.target) }
        guard !ready.isEmpty else { return }
        waiters.removeAll { isFlushed($0.target) }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Waits until `register` reports the target reached at once or a later ``resume(where:)``
    /// resumes the waiter it added, or until `timeout` seconds pass (then `expire` must resume
    /// it with `false`, through ``expire(target:)``).
    /// - Parameters:
    ///   - register: under the caller's lock: returns true when already flushed, else adds the
    ///     continuation with ``add(target:_:)`` and returns false.
    ///   - expire: under the caller's lock: calls ``expire(target:)``.
    /// - Returns: whether everything up to the target was handled in time.
    package static func wait(
        timeout: Double, register: @escaping @Sendable (CheckedContinuation<Bool, Never>) -> Bool, expire: @escaping @Sendable () -> Void
    ) async -> Bool {
        await withTaskGroup(of: Bool?.self) { group -> Bool in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    if register(continuation) { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            // Time ran out: release this call's waiter so that the group can finish.
            if first == nil { expire() }
            group.cancelAll()
            var result = first ?? false
            while let next = await group.next() { if let next { result = result || next } }
            return result
        }
    }

    /// Adds a waiter for `target`.
    package mutating func add(target: UInt64, _ continuation: CheckedContinuation<Bool, Never>) {
        waiters.append((target, continuation))
    }

    /// Resumes the waiters for `target` with `false`: their time ran out.
    package mutating func expire(target: UInt64) {
        for waiter in waiters where waiter.target == target { waiter.continuation.resume(returning: false) }
        waiters.removeAll { $0.target == target }
    }
}
