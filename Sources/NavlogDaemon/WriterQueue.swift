import NavlogEvents

/// The batches connections handed to the writer and not yet taken, with what they hold, taken
/// a round at a time so that every connection gets its turn (issues 18 and 34: fair under
/// floods and bursts).
///
/// Each connection with batches waiting is a flow, and a round gives flows turns: a turn takes
/// the flow's oldest batches up to ``roundBytes`` (at least one), in the order they came. A
/// round ends once it holds ``roundLimitBytes`` (after at least one turn), and the next one
/// goes on where it stopped, so a quiet client waits for at most one bounded round however
/// many connections flood, not for a turn of every one of them.
///
/// A flow whose batch arrives while it has less than ``lightFlowBytes`` waiting is light and
/// served first, as fq_codel serves sparse flows first: a client sending a few events at a
/// time is not queued behind a thousand streams or bursts, and one that sends more becomes
/// one of the backlogged flows, whose turns rotate. A connection's batches keep their order.
/// Measured with `tools/bench/fairness` (docs/BENCHMARKS.md).
struct WriterQueue {
    /// One connection's waiting batches, from ``head`` on.
    private struct Flow {
        var requests: [WriteRequest] = []
        var head = 0
        /// Bytes of its waiting batches.
        var bytes = 0
        /// Whether it is in ``lightFlows``, and in ``backlogged``: a turn from either list.
        var listedLight = false
        var listedBacklogged = false
        var isEmpty: Bool { head == requests.count }

        mutating func append(_ request: WriteRequest) {
            requests.append(request)
            bytes += request.memoryBytes
        }
    }

    /// Flows taking turns in order, from ``head`` on.
    private struct Turns {
        var flows: [ObjectIdentifier] = []
        var head = 0

        /// Flows listed.
        var count: Int { flows.count - head }

        mutating func append(_ flow: ObjectIdentifier) { flows.append(flow) }

        mutating func popFirst() -> ObjectIdentifier? {
            guard head < flows.count else { return nil }
            defer {
                head += 1
                // Compacted once the taken part is the larger, so a list costs O(1) a turn.
                if head > 64 && head * 2 > flows.count {
                    flows.removeSubrange(..<head)
                    head = 0
                }
            }
            return flows[head]
        }
    }

    /// The flows with batches waiting, and those still listed for a turn after their last.
    private var flows: [ObjectIdentifier: Flow] = [:]
    /// Flows whose batch came while they had less than ``lightFlowBytes`` waiting: served first.
    private var lightFlows = Turns()
    /// Flows with more waiting: they rotate.
    private var backlogged = Turns()
    /// Every batch in arrival order, while rounds are off (``roundBytes`` `Int.max`).
    private var arrivals: [WriteRequest] = []
    /// Batches waiting.
    private var waiting = 0

    /// What a flow may have waiting and still be served first: a paced client's last tens of
    /// milliseconds of events, less than what one pass of reads takes from a client streaming
    /// flat out among a thousand (four reads of 4 KiB, with their events' headers).
    static let lightFlowBytes = 16 << 10

    /// Events waiting.
    private(set) var events = 0
    /// Memory the waiting batches hold (``WriteRequest/memoryBytes``): what the daemon-wide
    /// budget counts.
    private(set) var bytes = 0
    /// Bytes of one connection's batches taken per turn at most (one batch at least); `Int.max`
    /// takes the whole queue at once in arrival order (see ``DaemonConfiguration/writerRoundBytes``).
    var roundBytes = 64 << 10
    /// Bytes a round takes at most, after one turn at least (see
    /// ``DaemonConfiguration/writerRoundLimitBytes``); `Int.max`: a turn of every flow.
    var roundLimitBytes = 1 << 20

    /// Whether nothing is waiting.
    var isEmpty: Bool { waiting == 0 }

    /// Adds a connection's batch after its others.
    mutating func append(_ request: WriteRequest) {
        events += request.batch.count
        bytes += request.memoryBytes
        waiting += 1
        if roundBytes == .max {
            arrivals.append(request)
            return
        }
        let id = ObjectIdentifier(request.order)
        // Moved out while it changes, so its array is not copied.
        var flow = flows.removeValue(forKey: id) ?? Flow()
        flow.append(request)
        if flow.bytes < Self.lightFlowBytes && !flow.listedLight {
            flow.listedLight = true
            lightFlows.append(id)
        } else if !flow.listedLight && !flow.listedBacklogged {
            flow.listedBacklogged = true
            backlogged.append(id)
        }
        flows[id] = flow
    }

    /// Takes one round (see the type's description).
    mutating func takeRound() -> [WriteRequest] {
        guard roundBytes < .max else {
            defer {
                arrivals.removeAll(keepingCapacity: true)
                events = 0
                bytes = 0
                waiting = 0
            }
            return arrivals
        }
        var taken: [WriteRequest] = []
        var takenBytes = 0
        // Only the backlogged flows already listed get a turn: one whose turn leaves it
        // backlogged comes again in the next round, not in this one.
        var backloggedTurns = backlogged.count
        // Light flows go first, and leave room for a backlogged turn while any waits: light
        // batches coming without end cannot starve a flow that fell behind. (Giving the
        // backlogged half of each round instead took a paced client's ack p50 beside 1000
        // streams from 7-15 ms to 50-250 ms: light flows queued behind their turns.)
        let lightLimit = backloggedTurns > 0 ? max(0, roundLimitBytes - roundBytes) : roundLimitBytes
        while takenBytes < lightLimit, let light = lightFlows.popFirst() {
            takenBytes += takeTurn(of: light, fromLight: true, into: &taken)
        }
        // One backlogged turn at least, even past the limit.
        var backloggedTaken = false
        while takenBytes < roundLimitBytes || !backloggedTaken, backloggedTurns > 0, let heavy = backlogged.popFirst() {
            backloggedTurns -= 1
            let turn = takeTurn(of: heavy, fromLight: false, into: &taken)
            takenBytes += turn
            backloggedTaken = backloggedTaken || turn > 0
        }
        while takenBytes < roundLimitBytes, let light = lightFlows.popFirst() {
            takenBytes += takeTurn(of: light, fromLight: true, into: &taken)
        }
        waiting -= taken.count
        return taken
    }

    /// Takes the flow's oldest batches up to ``roundBytes``; it is listed with the backlogged
    /// ones while batches are left, and forgotten once empty and listed nowhere. Returns the
    /// bytes taken.
    private mutating func takeTurn(of id: ObjectIdentifier, fromLight: Bool, into taken: inout [WriteRequest]) -> Int {
        guard var flow = flows.removeValue(forKey: id) else { return 0 }
        if fromLight { flow.listedLight = false } else { flow.listedBacklogged = false }
        var turnBytes = 0
        while !flow.isEmpty && turnBytes < roundBytes {
            let request = flow.requests[flow.head]
            flow.head += 1
            flow.bytes -= request.memoryBytes
            turnBytes += request.memoryBytes
            events -= request.batch.count
            bytes -= request.memoryBytes
            taken.append(request)
        }
        if flow.isEmpty {
            flow.requests.removeAll(keepingCapacity: true)
            flow.head = 0
        } else if flow.head > 16 && flow.head * 2 > flow.requests.count {
            // Compacted once the taken part is the larger, so a backlog costs O(1) a batch.
            flow.requests.removeSubrange(..<flow.head)
            flow.head = 0
        }
        if !flow.isEmpty && !flow.listedBacklogged {
            flow.listedBacklogged = true
            backlogged.append(id)
        }
        if !flow.isEmpty || flow.listedLight || flow.listedBacklogged { flows[id] = flow }
        return turnBytes
    }
}
