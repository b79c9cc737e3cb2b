/// What a ``ConnectionHandler`` asks of the writer: take a batch, say how many bytes wait in its
/// queue (all connections'), and wake a paused connection when the queue is under a budget.
/// navlogd's writer is ``LogWriter``; the handler's tests play the writer themselves, on the
/// test's thread, since `EmbeddedChannel` may be used from one thread only and ``LogWriter``
/// completes batches on its own.
protocol BatchWriter {
    /// Queues a request; `false` once the writer is stopping. Its completion is called later,
    /// on another thread.
    func submit(_ request: WriteRequest) -> Bool
    /// Bytes of batches queued and not yet taken (``WriteRequest/memoryBytes``).
    var queuedBytes: Int { get }
    /// Calls `resume` once the queue holds fewer than `budget` bytes, now or later.
    func whenRoom(below budget: Int, _ resume: @escaping @Sendable () -> Void)
}

extension LogWriter: BatchWriter {}
