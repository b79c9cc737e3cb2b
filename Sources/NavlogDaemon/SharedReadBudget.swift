import NIOCore
import Synchronization

/// Bounds the bytes all connections read at once: each connection's reads get an equal share
/// of a daemon-wide budget (at most 64 KiB, at least 4 KiB per read). With few connections a
/// read is NIO's usual 64 KiB; with a thousand streaming flat out, each reads 8 KiB at a time,
/// so the data in flight stays near the budget instead of growing with the connection count
/// (1000 connections × 4 reads × 64 KiB per event-loop pass was 256 MiB).
final class SharedReadBudget: Sendable {
    /// Bytes all connections may have read in one pass of their event loops.
    let budget: Int
    /// NIO reads up to this many times per pass before handing the batch on.
    static let readsPerPass = 4
    private let connections = Atomic<Int>(0)

    init(budget: Int) {
        self.budget = budget
    }

    /// A connection opened or closed.
    func opened() { connections.add(1, ordering: .relaxed) }
    func closed() { connections.subtract(1, ordering: .relaxed) }

    /// Connections open now.
    var openConnections: Int { connections.load(ordering: .relaxed) }

    /// The size of one read for each connection now.
    var readSize: Int {
        let open = max(1, connections.load(ordering: .relaxed))
        return min(64 << 10, max(4 << 10, budget / (open * Self.readsPerPass)))
    }

    /// The allocator a connection's channel reads with.
    var allocator: Allocator { Allocator(budget: self) }

    /// NIO's adaptive allocator (its growing and shrinking), capped at the connection's share.
    struct Allocator: RecvByteBufferAllocator {
        let budget: SharedReadBudget
        private var adaptive = AdaptiveRecvByteBufferAllocator()

        init(budget: SharedReadBudget) {
            self.budget = budget
        }

        func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
            allocator.buffer(capacity: nextBufferSize()!)
        }

        func nextBufferSize() -> Int? { min(adaptive.nextBufferSize() ?? 2048, budget.readSize) }

        mutating func record(actualReadBytes: Int) -> Bool { adaptive.record(actualReadBytes: actualReadBytes) }
    }
}
