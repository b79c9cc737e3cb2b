import NavlogEvents

/// The batches connections handed to the writer and not yet taken, with what they hold, taken
/// a round at a time so that every connection gets its turn (issue 18: fair under floods).
///
/// A round takes, from each connection with batches waiting, its oldest ones up to
/// ``roundBytes`` (at least one), in the order they came. A connection's batches keep their
/// order; a client that floods the socket gets one turn per round like a client that sends a
/// batch a second, so the latter's batch waits for one round of everyone's, not for the flood's
/// backlog. Measured with `tools/bench/fairness` (docs/BENCHMARKS.md).
struct WriterQueue {
    private var requests: [WriteRequest] = []
    /// Events waiting.
    private(set) var events = 0
    /// Memory the waiting batches hold (``WriteRequest/memoryBytes``): what the daemon-wide
    /// budget counts.
    private(set) var bytes = 0
    /// Bytes of one connection's batches taken per round at most; `Int.max` takes the whole
    /// queue at once (see ``DaemonConfiguration/writerRoundBytes``).
    var roundBytes = 64 << 10

    /// Whether nothing is waiting.
    var isEmpty: Bool { requests.isEmpty }

    /// Adds a connection's batch at the end.
    mutating func append(_ request: WriteRequest) {
        requests.append(request)
        events += request.batch.count
        bytes += request.memoryBytes
    }

    /// Takes one round (see the type's description).
    mutating func takeRound() -> [WriteRequest] {
        guard requests.count > 1, roundBytes < Int.max else {
            defer {
                requests.removeAll(keepingCapacity: true)
                events = 0
                bytes = 0
            }
            return requests
        }
        var takenBytes: [ObjectIdentifier: Int] = [:]
        var taken: [WriteRequest] = []
        var left: [WriteRequest] = []
        // Once one of a connection's batches is left, its later ones are left too (order).
        var closed = Set<ObjectIdentifier>()
        for request in requests {
            let connection = ObjectIdentifier(request.order)
            let sofar = takenBytes[connection]
            if !closed.contains(connection), sofar.map({ $0 < roundBytes }) ?? true {
                takenBytes[connection] = (sofar ?? 0) + request.memoryBytes
                events -= request.batch.count
                bytes -= request.memoryBytes
                taken.append(request)
            } else {
                closed.insert(connection)
                left.append(request)
            }
        }
        requests = left
        return taken
    }
}
