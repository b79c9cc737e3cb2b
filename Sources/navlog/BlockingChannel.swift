import Foundation  // NSCondition

/// A bounded first-in, first-out queue between two threads: ``send(_:)`` waits while it is
/// full, ``receive()`` while it is empty, so the faster side waits for the slower one and what
/// is in flight stays bounded.
///
/// Either side may ``close()`` it: the sender when it has nothing more (the receiver still gets
/// what is queued, then `nil`), the receiver when it stops early (the sender's next
/// ``send(_:)`` returns false, and it should stop).
final class BlockingChannel<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `queued` and `closed` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var queued: [Element] = []
    private var closed = false
    /// The most elements queued at once.
    let capacity: Int

    /// A channel that holds at most `capacity` elements.
    init(capacity: Int) {
        precondition(capacity > 0, "a channel holds at least one element")
        self.capacity = capacity
    }

    /// Queues `element`, waiting while the channel is full.
    /// - Returns: false, without queuing it, once the channel is closed.
    @discardableResult
    func send(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queued.count >= capacity, !closed { condition.wait() }
        guard !closed else { return false }
        queued.append(element)
        condition.broadcast()
        return true
    }

    /// The oldest element, waiting while there is none; `nil` once the channel is closed and empty.
    func receive() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while queued.isEmpty, !closed { condition.wait() }
        guard !queued.isEmpty else { return nil }
        condition.broadcast()
        return queued.removeFirst()
    }

    /// The oldest element if there is one, without waiting.
    func poll() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        guard !queued.isEmpty else { return nil }
        condition.broadcast()
        return queued.removeFirst()
    }

    /// Nothing more will be sent, or nothing more is wanted (see the type's description).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
