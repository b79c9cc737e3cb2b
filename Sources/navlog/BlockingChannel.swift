import Foundation  // NSCondition

/// A bounded first-in, first-out queue from one thread to another: ``send(_:)`` waits while it is
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
    /// Whether the sender waits for room, and the receiver for an element (each side is one
    /// thread): the other side wakes it only then.
    private var senderWaits = false
    private var receiverWaits = false
    /// The most elements queued at once.
    let capacity: Int
    /// How few elements are left queued when a sender that found the channel full goes on.
    let lowWater: Int

    /// A channel that holds at most `capacity` elements; a sender that found it full waits
    /// until `lowWater` are left (`capacity - 1` by default: as soon as there is room).
    init(capacity: Int, lowWater: Int? = nil) {
        precondition(capacity > 0, "a channel holds at least one element")
        self.capacity = capacity
        self.lowWater = min(max(lowWater ?? capacity - 1, 0), capacity - 1)
    }

    /// Queues `element`. When the channel is full it waits until the receiver has taken all but
    /// ``lowWater`` of what is queued: each side then runs for a while before it wakes the
    /// other, rather than the two trading places at every element.
    /// - Returns: false, without queuing it, once the channel is closed.
    @discardableResult
    func send(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if queued.count >= capacity {
            senderWaits = true
            while queued.count > lowWater, !closed { condition.wait() }
            senderWaits = false
        }
        guard !closed else { return false }
        queued.append(element)
        if receiverWaits { condition.signal() }
        return true
    }

    /// The oldest element, waiting while there is none; `nil` once the channel is closed and empty.
    func receive() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        if queued.isEmpty {
            receiverWaits = true
            while queued.isEmpty, !closed { condition.wait() }
            receiverWaits = false
        }
        return takeFirst()
    }

    /// The oldest element if there is one, without waiting.
    func poll() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        return takeFirst()
    }

    /// With `condition` locked: removes the oldest element, waking a sender waiting for room.
    private func takeFirst() -> Element? {
        guard !queued.isEmpty else { return nil }
        let element = queued.removeFirst()
        if senderWaits, queued.count <= lowWater { condition.signal() }
        return element
    }

    /// Nothing more will be sent, or nothing more is wanted (see the type's description).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
