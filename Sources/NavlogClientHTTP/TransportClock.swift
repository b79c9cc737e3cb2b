public import Dispatch

/// The time source and the wait of ``NavlogClient``'s HTTP transport: the system's, or one a
/// test drives (hours offline in milliseconds, without sleeping).
public struct TransportClock: Sendable {
    /// Seconds since any fixed point; only differences are used.
    public var now: @Sendable () -> Double
    /// Waits up to `seconds`, or less when the semaphore is signalled (new events, `flush`,
    /// `close`). A test's clock may advance its time by `seconds` and return at once.
    public var sleep: @Sendable (_ seconds: Double, _ wake: DispatchSemaphore) -> Void

    /// A clock from its two functions.
    public init(now: @escaping @Sendable () -> Double, sleep: @escaping @Sendable (_ seconds: Double, _ wake: DispatchSemaphore) -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The monotonic system clock and a real, wakeable wait.
    public static let system = TransportClock(
        now: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
        sleep: { seconds, wake in
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(max(0, min(seconds, 86_400)) * 1e9)))
        }
    )
}
