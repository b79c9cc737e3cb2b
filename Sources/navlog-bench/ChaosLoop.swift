import Foundation
import NavlogClient
import NavlogWorkload

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Misbehaving connections

/// What one chaos connection does.
enum ChaosBehaviour: String, CaseIterable, Codable {
    /// Connects (half of them say hello) and then does nothing, holding a slot.
    case idle
    /// Sends valid durable events one byte at a time, a few milliseconds apart; reads acks.
    case slowBytes
    /// Sends valid durable events one line at a time, a few hundred milliseconds apart; reads acks.
    case slowLines
    /// Asks for batch acks, sends valid events and short bad lines (each one earns a rejection
    /// report) and never reads a byte: its replies pile up in navlogd.
    case neverRead
    /// Like `neverRead`, with `{"control":"stats"}` requests instead of bad lines (replies of
    /// several hundred bytes each, and work for navlogd per request).
    case controlFlood
    /// Sends bad lines of every kind (invalid JSON, unknown types, invalid UTF-8, missing and
    /// mistyped fields, lines over 64 KiB, binary garbage, a late hello, unknown controls) and
    /// now and then a partial line followed by a disconnect; reads the rejections.
    case badInput
    /// Connects, sends nothing, a hello, one event, a partial line or garbage, disconnects,
    /// and again, every few tens of milliseconds.
    case churn
    /// Asks for durable acks and writes 300 valid events at once on each whole second of the
    /// clock, as every other `burst` connection does; reads acks. (Issue 34's fairness loads:
    /// not in the default mix.)
    case burst
    /// Asks for durable acks and streams valid events at `--stream-rate` events/s (0: as fast
    /// as navlogd takes them), in writes of up to 64 lines; reads acks.
    case stream
    /// Like `stream`, and never reads a byte: its acks pile up in navlogd.
    case silentStream

    /// Default shares of the connections, in percent.
    var weight: Int {
        switch self {
        case .idle: 25
        case .slowBytes: 10
        case .slowLines: 10
        case .neverRead: 14
        case .controlFlood: 4
        case .badInput: 20
        case .churn: 17
        case .burst, .stream, .silentStream: 0
        }
    }
}

/// The kinds of bad line `badInput` connections send.
enum BadLineKind: String, CaseIterable, Codable {
    case invalidJSON, unknownType, invalidUTF8, missingField, wrongType, tooLong, binaryGarbage, lateHello, unknownControl, partialThenDisconnect
}

/// What the connections of one behaviour did, summed.
struct BehaviourCounts: Codable {
    /// Connections given this behaviour.
    var connections = 0
    /// Successful connects (the first ones and every reconnect).
    var opened = 0
    /// Connects that failed (listen backlog full, or navlogd gone); retried.
    var connectFailures = 0
    /// Connections navlogd closed (or that failed under us); reopened.
    var closedByDaemon = 0
    /// Bytes written.
    var bytesSent = 0
    /// Complete lines written (events, bad lines, hellos, controls).
    var linesSent = 0
    /// Times a write found the socket full (navlogd not reading this connection: backpressure).
    var writesBlocked = 0
    /// Replies read, by kind.
    var acks = 0
    var rejections = 0
    var refusals = 0
    var controlReplies = 0
    var otherReplies = 0
    /// Connect–disconnect cycles (churn) and partial lines followed by a disconnect.
    var cycles = 0
    var partialDisconnects = 0
    /// Bytes still unsent at the end (never-readers: what navlogd stopped taking).
    var unsentBytesAtEnd = 0
}

/// One misbehaving connection.
private final class ChaosConnection {
    let behaviour: ChaosBehaviour
    var rng: SplitMix64
    /// Valid events, for the behaviours that send some.
    var generator: WorkloadGenerator?
    var fd: Int32 = -1
    /// Bytes to write, from `outboxOffset` on.
    var outbox: [UInt8] = []
    var outboxOffset = 0
    /// Lines a `slowBytes` connection is trickling, from `trickleOffset` on.
    var trickle: [UInt8] = []
    var trickleOffset = 0
    /// When the connection next acts (or reconnects, while closed).
    var nextAction = 0.0
    /// Reply bytes after the last complete line.
    var replies: [UInt8] = []
    /// Lines written on the current connection (`badInput` starts with a hello half the time).
    var linesOnConnection = 0
    /// Whether it has been connected at least once.
    var everOpened = false
    /// When a `stream` connection started sending, and the events it queued since.
    var streamStart = 0.0
    var streamed = 0

    init(behaviour: ChaosBehaviour, seed: UInt64) {
        self.behaviour = behaviour
        rng = SplitMix64(seed: seed)
        switch behaviour {
        case .slowBytes, .slowLines, .neverRead, .controlFlood, .churn, .burst, .stream, .silentStream:
            generator = WorkloadGenerator(WorkloadConfiguration(seed: seed, concurrentSessions: 2))
        case .idle, .badInput:
            generator = nil
        }
    }

    var reads: Bool { behaviour != .neverRead && behaviour != .controlFlood && behaviour != .silentStream }
    var pending: Int { outbox.count - outboxOffset }

    func random(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &rng) }

    /// Appends the next valid workload event, with its newline.
    func appendEvent(to buffer: inout [UInt8]) {
        var line: [UInt8] = []
        generator!.nextLine(into: &line)
        buffer.append(contentsOf: line)
        buffer.append(0x0A)
    }
}

/// Drives every misbehaving connection from one poll() loop.
final class ChaosLoop {
    private let options: ChaosLoadOptions
    private var connections: [ChaosConnection] = []
    /// Per behaviour, in `ChaosBehaviour.allCases` order.
    private(set) var counts: [ChaosBehaviour: BehaviourCounts] = [:]
    /// Bad lines sent by kind.
    private(set) var badLines: [BadLineKind: Int] = [:]
    /// Seconds until every connection had been opened once.
    private(set) var openSeconds = 0.0
    /// The most chaos connections open at the same time.
    private(set) var peakOpen = 0
    /// Connections (of `--connections`) that were open at least once.
    private(set) var slotsOpened = 0
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(options: ChaosLoadOptions) {
        self.options = options
        // Exact shares of N, then shuffled so every navlogd event loop gets a mix.
        var rng = SplitMix64(seed: options.seed ^ 0xC4A0_5000)
        var behaviours: [ChaosBehaviour] = []
        let total = max(1, options.weights.values.reduce(0, +))
        for behaviour in ChaosBehaviour.allCases {
            let share = options.connections * options.weights[behaviour, default: 0] / total
            behaviours += Array(repeating: behaviour, count: share)
        }
        // Rounding leftovers go to the heaviest behaviour.
        let heaviest = ChaosBehaviour.allCases.max { options.weights[$0, default: 0] < options.weights[$1, default: 0] } ?? .idle
        while behaviours.count < options.connections { behaviours.append(heaviest) }
        behaviours.shuffle(using: &rng)
        for behaviour in ChaosBehaviour.allCases { counts[behaviour] = BehaviourCounts() }
        connections = behaviours.enumerated().map { index, behaviour in
            counts[behaviour]!.connections += 1
            return ChaosConnection(behaviour: behaviour, seed: options.seed &+ 0x1_0000 &+ UInt64(index) &* 0x9E37_79B9)
        }
    }

    /// Runs until `deadline`, then closes everything.
    func run(deadline: Double) {
        let started = monotonic()
        var everyoneOpened = false
        var pollers: [pollfd] = []
        var polled: [ChaosConnection] = []
        while true {
            let now = monotonic()
            if now >= deadline { break }
            var nextWake = now + 0.010
            for connection in connections {
                if connection.fd < 0 {
                    if now >= connection.nextAction { open(connection, now) }
                } else if now >= connection.nextAction {
                    act(connection, now)
                }
                if connection.nextAction > now { nextWake = min(nextWake, connection.nextAction) }
            }
            if !everyoneOpened && connections.allSatisfy({ $0.fd >= 0 || $0.behaviour == .churn }) {
                everyoneOpened = true
                openSeconds = monotonic() - started
            }
            pollers.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            for connection in connections where connection.fd >= 0 {
                var events: Int16 = 0
                if connection.reads { events |= Int16(POLLIN) }
                if connection.pending > 0 { events |= Int16(POLLOUT) }
                pollers.append(pollfd(fd: connection.fd, events: events, revents: 0))
                polled.append(connection)
            }
            peakOpen = max(peakOpen, pollers.count)
            let timeout = Int32(max(0, min(10, (nextWake - monotonic()) * 1000)))
            guard poll(&pollers, nfds_t(pollers.count), timeout) > 0 else { continue }
            for (index, connection) in polled.enumerated() where connection.fd >= 0 {
                let revents = pollers[index].revents
                if revents == 0 { continue }
                if revents & Int16(POLLIN) != 0 || (connection.reads && revents & Int16(POLLHUP | POLLERR) != 0) {
                    read(connection, monotonic())
                }
                if connection.fd >= 0 && revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0 && connection.pending > 0 {
                    flush(connection, monotonic())
                }
            }
        }
        for connection in connections where connection.fd >= 0 {
            counts[connection.behaviour]!.unsentBytesAtEnd += connection.pending
            Glibc.close(connection.fd)
            connection.fd = -1
        }
        if !everyoneOpened { openSeconds = monotonic() - started }
    }

    /// Connects and queues what the behaviour says first.
    private func open(_ connection: ChaosConnection, _ now: Double) {
        let (fd, error) = connectUnix(options.socket)
        guard fd >= 0 else {
            counts[connection.behaviour]!.connectFailures += 1
            // Interrupted: again at once; anything else (navlogd gone): a little later.
            connection.nextAction = now + (error == EINTR ? 0 : 0.100)
            return
        }
        connection.fd = fd
        if !connection.everOpened {
            connection.everOpened = true
            slotsOpened += 1
        }
        counts[connection.behaviour]!.opened += 1
        connection.outbox.removeAll(keepingCapacity: true)
        connection.outboxOffset = 0
        connection.replies.removeAll(keepingCapacity: true)
        connection.linesOnConnection = 0
        switch connection.behaviour {
        case .idle:
            if connection.rng.next() & 1 == 0 { queue(connection, #"{"hello":1,"client":"chaos-idle","ack":"batch"}"# + "\n") }
            connection.nextAction = .infinity
        case .slowBytes, .slowLines:
            queue(connection, #"{"hello":1,"client":"chaos-slow","ack":"durable"}"# + "\n")
            connection.nextAction = now + connection.random(0.001...0.050)
        case .neverRead, .controlFlood:
            queue(connection, #"{"hello":1,"client":"chaos-never-reads","ack":"batch"}"# + "\n")
            connection.nextAction = now + connection.random(0.001...0.100)
        case .burst:
            queue(connection, #"{"hello":1,"client":"chaos-burst","ack":"durable"}"# + "\n")
            connection.nextAction = Self.nextWholeSecond(after: now)
        case .stream, .silentStream:
            queue(connection, #"{"hello":1,"client":"chaos-stream","ack":"durable"}"# + "\n")
            connection.nextAction = now + connection.random(0.001...0.010)
        case .badInput:
            if connection.rng.next() & 1 == 0 { queue(connection, #"{"hello":1,"client":"chaos-bad","ack":"batch"}"# + "\n") }
            connection.nextAction = now + connection.random(0.001...0.030)
        case .churn:
            counts[.churn]!.cycles += 1
            var bytes: [UInt8] = []
            switch connection.rng.next() % 5 {
            case 0: break  // connect and go
            case 1: bytes = Array((#"{"hello":1,"ack":"durable"}"# + "\n").utf8)
            case 2: connection.appendEvent(to: &bytes)  // one complete event, then gone
            case 3:
                connection.appendEvent(to: &bytes)
                bytes.removeLast(bytes.count / 2)  // half a line, then gone
                counts[.churn]!.partialDisconnects += 1
            default: bytes = (0..<Int.random(in: 1...512, using: &connection.rng)).map { _ in UInt8.random(in: 0...255, using: &connection.rng) }
            }
            connection.outbox = bytes
            flush(connection, now)
            // Every 20–80 ms: with 170 churners (of 1000) about 3,000 connects a second.
            if connection.fd >= 0 { disconnect(connection, reopenAt: now + connection.random(0.020...0.080)) }
            return
        }
        flush(connection, now)
    }

    /// The behaviour's next step, when it is due.
    private func act(_ connection: ChaosConnection, _ now: Double) {
        switch connection.behaviour {
        case .idle, .churn:
            connection.nextAction = .infinity
        case .slowBytes:
            if connection.trickleOffset >= connection.trickle.count {
                connection.trickle.removeAll(keepingCapacity: true)
                connection.trickleOffset = 0
                connection.appendEvent(to: &connection.trickle)
            }
            if connection.pending == 0 {
                connection.outbox.append(connection.trickle[connection.trickleOffset])
                connection.trickleOffset += 1
                flush(connection, now)
            }
            connection.nextAction = now + connection.random(0.002...0.020)
        case .slowLines:
            if connection.pending == 0 {
                connection.appendEvent(to: &connection.outbox)
                flush(connection, now)
            }
            connection.nextAction = now + connection.random(0.100...0.300)
        case .neverRead, .controlFlood:
            // More only while navlogd takes what was queued: the point is the replies it cannot
            // deliver, not memory in this tool.
            if connection.pending < 16_384 {
                for _ in 0..<8 { connection.appendEvent(to: &connection.outbox) }
                let extra = connection.behaviour == .neverRead ? "x\n" : #"{"control":"stats"}"# + "\n"
                // 100 rejection reports (~100 bytes each) per tick fill the socket and navlogd's
                // 256 KiB write buffer in about 5 s; stats replies are ~700 bytes.
                let count = connection.behaviour == .neverRead ? 100 : 20
                connection.outbox.append(contentsOf: Array(String(repeating: extra, count: count).utf8))
                flush(connection, now)
            } else {
                counts[connection.behaviour]!.writesBlocked += 1
            }
            connection.nextAction = now + connection.random(0.050...0.150)
        case .badInput:
            if connection.pending == 0 { sendBadLine(connection, now) }
            if connection.fd >= 0 { connection.nextAction = now + connection.random(0.020...0.060) }
        case .burst:
            // All at once: a burst still being written when the next is due is not added to.
            if connection.pending == 0 {
                for _ in 0..<300 { connection.appendEvent(to: &connection.outbox) }
                flush(connection, now)
            } else {
                counts[.burst]!.writesBlocked += 1
            }
            connection.nextAction = Self.nextWholeSecond(after: now)
        case .stream, .silentStream:
            // At its rate, or as fast as navlogd takes them; little queued here either way.
            if connection.streamStart == 0 { connection.streamStart = now }
            let due = options.streamRate > 0 ? Int((now - connection.streamStart) * options.streamRate) - connection.streamed : 64
            if due > 0 && connection.pending < 16_384 {
                for _ in 0..<min(due, 64) { connection.appendEvent(to: &connection.outbox) }
                connection.streamed += min(due, 64)
                flush(connection, now)
            }
            connection.nextAction = now + (options.streamRate > 0 ? connection.random(0.005...0.015) : 0.001)
        }
    }

    /// The next whole second of the monotonic clock after `now`, when every `burst`
    /// connection writes its next burst.
    private static func nextWholeSecond(after now: Double) -> Double { (now + 1).rounded(.down) }

    /// Queues (and starts writing) one bad line of a random kind.
    private func sendBadLine(_ connection: ChaosConnection, _ now: Double) {
        let roll = connection.rng.next() % 100
        // Lines over the limit are 70 KB each and partial-then-disconnect costs a reconnect:
        // rarer than the rest.
        let kind: BadLineKind
        switch roll {
        case 0..<1: kind = .tooLong
        case 1..<3: kind = .partialThenDisconnect
        default:
            let common: [BadLineKind] = [.invalidJSON, .unknownType, .invalidUTF8, .missingField, .wrongType, .binaryGarbage, .lateHello, .unknownControl]
            kind = common[Int(roll) % common.count]
        }
        badLines[kind, default: 0] += 1
        let session = "chaos-bad-\(connection.rng.next() % 1_000_000)"
        let ts = 1_763_715_600_000_000 + Int(connection.rng.next() % 1_000_000_000)
        var bytes: [UInt8]
        switch kind {
        case .invalidJSON:
            bytes = Array(#"{"type":"nav.push","session":"\#(session)","ts":\#(ts),"seq":"#.utf8)
        case .unknownType:
            bytes = Array(#"{"type":"nav.teleport","session":"\#(session)","ts":\#(ts),"seq":1}"#.utf8)
        case .invalidUTF8:
            bytes = Array(#"{"type":"mark","session":"\#(session)","ts":\#(ts),"seq":1,"name":""#.utf8) + [0xFF, 0xFE, 0xC0, 0x80, 0xED, 0xA0, 0x80] + Array(#""}"#.utf8)
        case .missingField:
            bytes = Array(#"{"type":"nav.push","session":"\#(session)","ts":\#(ts),"seq":1,"nav":"n"}"#.utf8)
        case .wrongType:
            bytes = Array(#"{"type":"app.foreground","session":"\#(session)","ts":\#(ts),"seq":"one"}"#.utf8)
        case .tooLong:
            bytes = Array(#"{"type":"mark","session":"\#(session)","ts":\#(ts),"seq":1,"name":""#.utf8)
            bytes += [UInt8](repeating: UInt8(ascii: "x"), count: 70_000)
            bytes += Array(#""}"#.utf8)
        case .binaryGarbage:
            bytes = (0..<Int.random(in: 1...2048, using: &connection.rng)).map { _ in UInt8.random(in: 0...255, using: &connection.rng) }
        case .lateHello:
            // A hello is only valid as line 1; make sure this one is not.
            bytes = connection.linesOnConnection == 0 ? Array("{\"x\":\n".utf8) : []
            bytes += Array(#"{"hello":1,"ack":"durable"}"#.utf8)
        case .unknownControl:
            bytes = Array(#"{"control":"reboot"}"#.utf8)
        case .partialThenDisconnect:
            bytes = Array(#"{"type":"app.foreground","session":"\#(session)","ts":\#(ts),"se"#.utf8)
            counts[.badInput]!.partialDisconnects += 1
            connection.outbox.append(contentsOf: bytes)
            flush(connection, now)
            if connection.fd >= 0 { disconnect(connection, reopenAt: now + connection.random(0.010...0.050)) }
            return
        }
        bytes.append(0x0A)
        connection.outbox.append(contentsOf: bytes)
        flush(connection, now)
    }

    private func queue(_ connection: ChaosConnection, _ text: String) {
        connection.outbox.append(contentsOf: Array(text.utf8))
    }

    /// Writes what it can of the outbox without blocking.
    private func flush(_ connection: ChaosConnection, _ now: Double) {
        while connection.pending > 0 {
            let offset = connection.outboxOffset
            let n = connection.outbox.withUnsafeBytes { raw in
                send(connection.fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                let written = connection.outbox[offset..<(offset + n)]
                let lines = written.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                connection.linesOnConnection += lines
                counts[connection.behaviour]!.linesSent += lines
                counts[connection.behaviour]!.bytesSent += n
                connection.outboxOffset += n
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                counts[connection.behaviour]!.writesBlocked += 1
                break
            }
            if n < 0 && errno == EINTR { continue }
            // EPIPE, ECONNRESET: navlogd closed it.
            counts[connection.behaviour]!.closedByDaemon += 1
            disconnect(connection, reopenAt: now + 0.2)
            return
        }
        if connection.pending == 0 {
            connection.outbox.removeAll(keepingCapacity: true)
            connection.outboxOffset = 0
        }
    }

    /// Reads and classifies replies; a closed connection is reopened a little later.
    private func read(_ connection: ChaosConnection, _ now: Double) {
        let n = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
        if n <= 0 {
            counts[connection.behaviour]!.closedByDaemon += 1
            disconnect(connection, reopenAt: now + 0.2)
            return
        }
        connection.replies.append(contentsOf: buffer[..<n])
        var start = 0
        while let newline = connection.replies[start...].firstIndex(of: 0x0A) {
            let line = connection.replies[start..<newline]
            start = newline + 1
            if line.starts(with: Array(#"{"ack":"#.utf8)) {
                counts[connection.behaviour]!.acks += 1
            } else if line.firstRange(of: Array(#""error":"rejected""#.utf8)) != nil {
                counts[connection.behaviour]!.rejections += 1
            } else if line.firstRange(of: Array(#""error":"refused""#.utf8)) != nil {
                counts[connection.behaviour]!.refusals += 1
            } else if line.firstRange(of: Array(#""accepted":"#.utf8)) != nil {
                counts[connection.behaviour]!.controlReplies += 1
            } else {
                counts[connection.behaviour]!.otherReplies += 1
            }
        }
        connection.replies.removeFirst(start)
    }

    private func disconnect(_ connection: ChaosConnection, reopenAt: Double) {
        Glibc.close(connection.fd)
        connection.fd = -1
        connection.outbox.removeAll(keepingCapacity: true)
        connection.outboxOffset = 0
        connection.nextAction = reopenAt
    }
}
