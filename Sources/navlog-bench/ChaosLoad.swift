import Foundation
import NavlogClient
import NavlogWorkload

#if canImport(Glibc)
    import Glibc
#endif

// `navlog-bench chaos-load`: issue 7's "Load" item. Opens many connections to a navlogd at once
// and makes most of them misbehave (idle, trickling, never reading, bad input, churning) while a
// few well-behaved clients stream durable events and time their acknowledgements. It passes when
// every well-behaved client kept being served: every event acknowledged, no ack wait longer than
// `--max-wait`, and (with `--data-dir`) every one of their events in the log exactly once, in
// order, the log verified and the bad input counted by navlogd.
//
// The misbehaving connections are driven by one poll() loop on the main thread, the good clients
// by another on their own thread, so a busy chaos loop never delays a good client's reads (it
// would show up as ack latency that is not navlogd's).

/// The settings of a chaos run (`navlog-bench chaos-load --help` lists them).
struct ChaosLoadOptions {
    /// navlogd's socket.
    var socket = ""
    /// Misbehaving connections opened at once.
    var connections = 1000
    /// How long the chaos lasts; good clients stop sending then and wait for their last acks.
    var seconds = 20.0
    /// Well-behaved durable clients.
    var good = 8
    /// Events per second each good client sends (0: as fast as its window of unacknowledged
    /// lines allows).
    var goodRate = 500.0
    /// Unacknowledged lines a good client may have in flight.
    var goodWindow = 512
    /// The longest a good client may wait for an ack before it counts as stalled.
    var maximumWait = 5.0
    /// Seeds every choice and every session; a fresh one per run by default, because navlogd
    /// drops a resent `(session, seq)` as a duplicate across runs against the same data.
    var seed = UInt64(UInt64(monotonic() * 1_000_000) & 0xFFFF_FFFF)
    /// When set, the log is checked after the run (`navlog cat`, `navlog verify`, `navlog stats`).
    var dataDirectory: String?
    /// The `navlog` executable for those checks (default: beside this program).
    var navlog: String?
    /// When set, the good clients' sessions and the seqs sent in each are written here as JSON
    /// Lines (`{"session":…,"seqs":[…]}`), so a test can check the log independently.
    var goodEventsFile: String?
    /// Shares of the behaviours (`--mix neverRead=30,controlFlood=0`; unnamed ones keep their
    /// default weight).
    var weights = Dictionary(uniqueKeysWithValues: ChaosBehaviour.allCases.map { ($0, $0.weight) })

    static let usage = """
        navlog-bench chaos-load --socket PATH [--connections N] [--seconds S] [--good K] [--seed N]
                                [--good-rate EVENTS/S] [--good-window LINES] [--max-wait S]
                                [--data-dir DIR] [--navlog PATH] [--good-events FILE]
                                [--mix BEHAVIOUR=WEIGHT,…]   behaviours: \(ChaosBehaviour.allCases.map(\.rawValue).joined(separator: " "))
        """

    /// Parses the arguments after `chaos-load`; nil (after a message) when they are wrong.
    init?(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        func value<T: LosslessStringConvertible>(_ name: String, _ type: T.Type) -> T? {
            guard let text = iterator.next(), let parsed = T(text) else {
                FileHandle.standardError.write(Data("navlog-bench chaos-load: \(name) needs a \(T.self) value\n".utf8))
                return nil
            }
            return parsed
        }
        while let argument = iterator.next() {
            switch argument {
            case "--socket": guard let v = value(argument, String.self) else { return nil }; socket = v
            case "--connections": guard let v = value(argument, Int.self) else { return nil }; connections = max(0, v)
            case "--seconds": guard let v = value(argument, Double.self) else { return nil }; seconds = max(0.1, v)
            case "--good": guard let v = value(argument, Int.self) else { return nil }; good = max(1, v)
            case "--good-rate": guard let v = value(argument, Double.self) else { return nil }; goodRate = max(0, v)
            case "--good-window": guard let v = value(argument, Int.self) else { return nil }; goodWindow = max(1, v)
            case "--max-wait": guard let v = value(argument, Double.self) else { return nil }; maximumWait = max(0.01, v)
            case "--seed": guard let v = value(argument, UInt64.self) else { return nil }; seed = v
            case "--data-dir": guard let v = value(argument, String.self) else { return nil }; dataDirectory = v
            case "--navlog": guard let v = value(argument, String.self) else { return nil }; navlog = v
            case "--good-events": guard let v = value(argument, String.self) else { return nil }; goodEventsFile = v
            case "--mix":
                guard let v = value(argument, String.self) else { return nil }
                for item in v.split(separator: ",") {
                    let parts = item.split(separator: "=")
                    guard parts.count == 2, let behaviour = ChaosBehaviour(rawValue: String(parts[0])), let weight = Int(parts[1]), weight >= 0 else {
                        FileHandle.standardError.write(Data("navlog-bench chaos-load: --mix takes BEHAVIOUR=WEIGHT,… (not \(item))\n\(Self.usage)\n".utf8))
                        return nil
                    }
                    weights[behaviour] = weight
                }
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default:
                FileHandle.standardError.write(Data("navlog-bench chaos-load: unknown argument \(argument)\n\(Self.usage)\n".utf8))
                return nil
            }
        }
        if socket.isEmpty {
            FileHandle.standardError.write(Data("navlog-bench chaos-load: say which navlogd: --socket PATH\n".utf8))
            return nil
        }
    }
}

/// Runs `chaos-load`, prints one JSON line, returns the exit status (0: every good client was
/// served and the log checks passed; 1: a good client stalled, lost an ack or the log is wrong;
/// 2: bad arguments or navlogd unreachable).
func runChaosLoad(_ arguments: [String]) -> Int32 {
    guard let options = ChaosLoadOptions(arguments) else { return 2 }
    // A peer that closes while we write must give EPIPE, not kill the tool.
    signal(SIGPIPE, SIG_IGN)
    let descriptorLimit = raiseDescriptorLimit()
    if descriptorLimit < options.connections + options.good + 64 {
        FileHandle.standardError.write(
            Data("navlog-bench chaos-load: only \(descriptorLimit) file descriptors allowed (hard limit); \(options.connections + options.good) connections need more\n".utf8))
        return 2
    }

    // Prepared before the clock starts (hundreds of workload generators).
    let chaos = ChaosLoop(options: options)
    // Good clients connect first: navlogd refuses connections over its limit, and the clients
    // whose service is measured must not be the ones refused.
    let good = GoodClients(options: options)
    guard good.connect() else {
        FileHandle.standardError.write(Data("navlog-bench chaos-load: cannot connect to \(options.socket) (is navlogd running?)\n".utf8))
        return 2
    }
    let start = monotonic()
    let deadline = start + options.seconds
    let goodDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        good.run(start: start, deadline: deadline)
        goodDone.signal()
    }
    chaos.run(deadline: deadline)
    goodDone.wait()

    var report = ChaosReport(options: options, chaos: chaos, good: good)
    if let directory = options.dataDirectory {
        report.log = LogCheck.run(dataDirectory: directory, socket: options.socket, navlog: options.navlog ?? besideThisProgram("navlog"), expected: good.sentSessions())
    }
    if let path = options.goodEventsFile {
        var text = ""
        for (session, seqs) in good.sentSessions().sorted(by: { $0.key < $1.key }) {
            text += "{\"session\":\"\(session)\",\"seqs\":[\(seqs.map(String.init).joined(separator: ","))]}\n"
        }
        if !FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) {
            FileHandle.standardError.write(Data("navlog-bench chaos-load: cannot write \(path)\n".utf8))
        }
    }
    report.ok = report.goodServed && (report.log?.ok ?? true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self))
    return report.ok ? 0 : 1
}

/// Raises the soft limit on open files to the hard limit; returns the limit now in force.
private func raiseDescriptorLimit() -> Int {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(resource, &raised) == 0 { limit = raised }
    }
    return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
}

/// A program in the same directory as this one (the build products directory).
private func besideThisProgram(_ name: String) -> String {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
}

/// A connection to navlogd's socket, made non-blocking for the poll loops: its descriptor, or
/// -1 and the errno.
private func connectUnix(_ path: String) -> (fd: Int32, error: Int32) {
    do {
        let fd = try UnixDomainSocket.connect(path: path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, 0)
    } catch {
        return (-1, error.code)
    }
}

/// The `session` and `seq` at the start of a workload line (`{"type":…,"session":"…","ts":…,"seq":N`).
private func sessionAndSeq(_ line: [UInt8]) -> (session: String, seq: Int)? {
    guard let session = stringValue(after: Array(#""session":""#.utf8), in: line[...]),
        let seq = integerValue(after: Array(#""seq":"#.utf8), in: line[...])
    else { return nil }
    return (session, seq)
}

/// The characters up to the next `"` after the first `key` in `bytes`.
private func stringValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> String? {
    guard let start = firstRange(of: key, in: bytes)?.upperBound else { return nil }
    guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
    return String(decoding: bytes[start..<end], as: UTF8.self)
}

/// The decimal number right after the first `key` in `bytes`.
private func integerValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
    guard let start = firstRange(of: key, in: bytes)?.upperBound else { return nil }
    var value = 0
    var index = start
    while index < bytes.endIndex, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        value = value &* 10 &+ Int(bytes[index] - 0x30)
        index += 1
    }
    return index > start ? value : nil
}

/// Where `needle` first occurs in `haystack`.
private func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    var index = haystack.startIndex
    let last = haystack.endIndex - needle.count
    while index <= last {
        guard let found = haystack[index...last].firstIndex(of: first) else { return nil }
        if haystack[found..<(found + needle.count)].elementsEqual(needle) { return found..<(found + needle.count) }
        index = found + 1
    }
    return nil
}

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

    init(behaviour: ChaosBehaviour, seed: UInt64) {
        self.behaviour = behaviour
        rng = SplitMix64(seed: seed)
        switch behaviour {
        case .slowBytes, .slowLines, .neverRead, .controlFlood, .churn:
            generator = WorkloadGenerator(WorkloadConfiguration(seed: seed, concurrentSessions: 2))
        case .idle, .badInput:
            generator = nil
        }
    }

    var reads: Bool { behaviour != .neverRead && behaviour != .controlFlood }
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
        }
    }

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
            } else if firstRange(of: Array(#""error":"rejected""#.utf8), in: line) != nil {
                counts[connection.behaviour]!.rejections += 1
            } else if firstRange(of: Array(#""error":"refused""#.utf8), in: line) != nil {
                counts[connection.behaviour]!.refusals += 1
            } else if firstRange(of: Array(#""accepted":"#.utf8), in: line) != nil {
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

// MARK: - Well-behaved clients

/// The good clients: durable acks, numbered events, every ack timed.
///
/// `@unchecked Sendable`: created and connected on the main thread, then used only by the one
/// thread `run` runs on until it returns (the main thread waits for it before reading results).
final class GoodClients: @unchecked Sendable {
    /// One good client's connection and what it has seen.
    final class Client {
        var fd: Int32 = -1
        var generator: WorkloadGenerator
        var outbox: [UInt8] = []
        var outboxOffset = 0
        /// Events queued so far; event k is line k + 1 of the connection (the hello is line 1).
        var eventsQueued = 0
        /// Writes not yet acknowledged: the last line each covers and when it was queued.
        var chunks: [(lastLine: Int, time: Double)] = []
        var chunkHead = 0
        /// The highest line an ack has covered.
        var ackedLine = 1
        var stored = 0
        var duplicates = 0
        var replies: [UInt8] = []
        var problems: [String] = []
        var closed = false
        /// Seqs queued per session, in order.
        var sessions: [String: [Int]] = [:]
        /// This client's longest ack latency (ms) and when (s into the run) that write was queued.
        var worstLatency = 0.0
        var worstQueuedAt = 0.0
        /// Since when a write has found the socket full (navlogd not reading), and the longest
        /// such wait: tells a daemon that stopped reading from one that stopped answering.
        var writeBlockedSince: Double?
        var longestWriteBlocked = 0.0

        init(seed: UInt64) {
            generator = WorkloadGenerator(WorkloadConfiguration(seed: seed, concurrentSessions: 4))
        }

        var eventsAcked: Int { ackedLine - 1 }
    }

    private let options: ChaosLoadOptions
    private(set) var clients: [Client]
    /// Milliseconds from a write to the ack covering it, every write of every client.
    private(set) var latencies: [Double] = []
    /// The longest any client waited with an unacknowledged write, in seconds.
    private(set) var longestWait = 0.0
    /// The longest ack latency of each second of the run (ms, by the second the ack came in):
    /// shows when a stall happened.
    private(set) var worstBySecond: [Double] = []
    private var startTime = 0.0

    init(options: ChaosLoadOptions) {
        self.options = options
        clients = (0..<options.good).map { Client(seed: options.seed &+ 0x6000_0000 &+ UInt64($0) &* 7919) }
    }

    /// Connects every client and sends its hello; false if navlogd cannot be reached.
    func connect() -> Bool {
        for client in clients {
            client.fd = connectUnix(options.socket).fd
            guard client.fd >= 0 else { return false }
            client.outbox = Array((#"{"hello":1,"client":"chaos-good","ack":"durable"}"# + "\n").utf8)
        }
        return true
    }

    /// Sends on schedule until `deadline`, then waits up to `--max-wait` for the last acks.
    func run(start: Double, deadline: Double) {
        startTime = start
        var pollers: [pollfd] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var line: [UInt8] = []
        while true {
            let now = monotonic()
            let sending = now < deadline
            if sending {
                for client in clients where !client.closed {
                    let unacked = client.eventsQueued - client.eventsAcked
                    let room = options.goodWindow - unacked
                    let due = options.goodRate > 0 ? Int((now - start) * options.goodRate) - client.eventsQueued : room
                    let count = min(due, room, 256)
                    guard count > 0 else { continue }
                    for _ in 0..<count {
                        client.generator.nextLine(into: &line)
                        if let (session, seq) = sessionAndSeq(line) { client.sessions[session, default: []].append(seq) }
                        client.outbox.append(contentsOf: line)
                        client.outbox.append(0x0A)
                    }
                    client.eventsQueued += count
                    client.chunks.append((client.eventsQueued + 1, now))
                    write(client)
                }
            }
            // How long has each client waited for its oldest unacknowledged write?
            var everythingAcked = true
            for client in clients where !client.closed && client.chunkHead < client.chunks.count {
                everythingAcked = false
                longestWait = max(longestWait, now - client.chunks[client.chunkHead].time)
            }
            if !sending && (everythingAcked || now - deadline > options.maximumWait) { break }
            pollers = clients.map { client in
                var events = Int16(POLLIN)
                if client.outboxOffset < client.outbox.count { events |= Int16(POLLOUT) }
                return pollfd(fd: client.closed ? -1 : client.fd, events: events, revents: 0)
            }
            _ = poll(&pollers, nfds_t(pollers.count), 2)
            for (index, client) in clients.enumerated() where !client.closed {
                let revents = pollers[index].revents
                if revents & Int16(POLLOUT) != 0 { write(client) }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(client, &buffer) }
            }
        }
        for client in clients where client.fd >= 0 {
            Glibc.close(client.fd)
            client.fd = -1
        }
    }

    private func write(_ client: Client) {
        while client.outboxOffset < client.outbox.count {
            let offset = client.outboxOffset
            let n = client.outbox.withUnsafeBytes { send(client.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                client.outboxOffset += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                if client.writeBlockedSince == nil { client.writeBlockedSince = monotonic() }
                return
            } else {
                client.problems.append("write failed: \(String(cString: strerror(errno)))")
                client.closed = true
                return
            }
        }
        client.outbox.removeAll(keepingCapacity: true)
        client.outboxOffset = 0
        if let since = client.writeBlockedSince {
            client.longestWriteBlocked = max(client.longestWriteBlocked, monotonic() - since)
            client.writeBlockedSince = nil
        }
    }

    private func read(_ client: Client, _ buffer: inout [UInt8]) {
        let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
        if n <= 0 {
            client.problems.append("navlogd closed the connection after line \(client.ackedLine) was acknowledged")
            client.closed = true
            return
        }
        let now = monotonic()
        client.replies.append(contentsOf: buffer[..<n])
        var start = 0
        while let newline = client.replies[start...].firstIndex(of: 0x0A) {
            let reply = client.replies[start..<newline]
            start = newline + 1
            guard reply.starts(with: Array(#"{"ack":"#.utf8)), let line = integerValue(after: Array(#""ack":"#.utf8), in: reply) else {
                if client.problems.count < 5 { client.problems.append("unexpected reply: \(String(decoding: reply.prefix(300), as: UTF8.self))") }
                continue
            }
            client.stored += integerValue(after: Array(#""stored":"#.utf8), in: reply) ?? 0
            client.duplicates += integerValue(after: Array(#""duplicates":"#.utf8), in: reply) ?? 0
            client.ackedLine = max(client.ackedLine, line)
            while client.chunkHead < client.chunks.count && client.chunks[client.chunkHead].lastLine <= client.ackedLine {
                let latency = (now - client.chunks[client.chunkHead].time) * 1000
                latencies.append(latency)
                if latency > client.worstLatency {
                    client.worstLatency = latency
                    client.worstQueuedAt = client.chunks[client.chunkHead].time - startTime
                }
                let second = max(0, Int(now - startTime))
                if worstBySecond.count <= second { worstBySecond += Array(repeating: 0, count: second + 1 - worstBySecond.count) }
                worstBySecond[second] = max(worstBySecond[second], latency)
                client.chunkHead += 1
            }
        }
        client.replies.removeFirst(start)
    }

    /// Every good client's sessions and the seqs queued in each, in order.
    func sentSessions() -> [String: [Int]] {
        var all: [String: [Int]] = [:]
        for client in clients { all.merge(client.sessions) { $0 + $1 } }
        return all
    }
}

// MARK: - Checking the log

/// What the log holds of the good clients' events, and what navlog verify and stats say.
struct LogCheck: Codable {
    /// Good events found in `navlog cat`'s output.
    var goodEventsFound = 0
    /// Good events sent but not in the log.
    var missing = 0
    /// Good events in the log more than once.
    var duplicated = 0
    /// Good sessions whose seqs in the log are not the seqs sent, in order.
    var sessionsOutOfOrder = 0
    /// Events in the log in all (every client's).
    var eventsInLog = 0
    /// `navlog cat` and `navlog verify` exit statuses.
    var catStatus: Int32 = -1
    var verifyStatus: Int32 = -1
    /// navlogd's rejection counters by reason, and their sum.
    var rejected: [String: Int] = [:]
    var rejectedTotal = 0
    /// navlogd's counters of rejection reports dropped (client not reading), connections over
    /// the limit and connections since start.
    var reportsDropped = 0
    var overLimit = 0
    var connectionsTotal = 0
    /// navlogd's count of open connections once every chaos and good connection was closed
    /// (the stats request's own included): more than a few means its count is off.
    var connectionsAfter = 0
    /// navlogd's fsync latencies, and its own ack latencies (batch handed to the writer → ack ready).
    var fsyncP50Milliseconds = 0.0
    var fsyncP99Milliseconds = 0.0
    var ackP50Milliseconds = 0.0
    var ackP99Milliseconds = 0.0
    /// Problems found, said as sentences.
    var problems: [String] = []

    var ok: Bool { problems.isEmpty }

    /// Runs `navlog cat`, `navlog verify` and `navlog stats` and compares with what was sent.
    static func run(dataDirectory: String, socket: String, navlog: String, expected: [String: [Int]]) -> LogCheck {
        var check = LogCheck()
        let cat = runProgram(navlog, ["cat", "--data-dir", dataDirectory])
        check.catStatus = cat.status
        if cat.status != 0 { check.problems.append("navlog cat exited \(cat.status): \(String(decoding: cat.error.prefix(500), as: UTF8.self))") }
        var found: [String: [Int]] = [:]
        let key = Array(#""session":""#.utf8)
        for line in [UInt8](cat.output).split(separator: 0x0A) {
            check.eventsInLog += 1
            // Only good sessions need a full parse; the byte search finds the session cheaply.
            guard let session = stringValue(after: key, in: line), expected[session] != nil else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let seq = object["seq"] as? Int else {
                check.problems.append("a stored event of good session \(session) has no seq: \(String(decoding: line.prefix(200), as: UTF8.self))")
                continue
            }
            found[session, default: []].append(seq)
        }
        for (session, sent) in expected {
            let stored = found[session] ?? []
            check.goodEventsFound += stored.count
            let sentSet = Set(sent)
            let storedSet = Set(stored)
            check.missing += sentSet.subtracting(storedSet).count
            check.duplicated += stored.count - storedSet.count
            if stored != sent { check.sessionsOutOfOrder += 1 }
        }
        if check.missing > 0 { check.problems.append("\(check.missing) good events are not in the log") }
        if check.duplicated > 0 { check.problems.append("\(check.duplicated) good events are in the log more than once") }
        if check.sessionsOutOfOrder > 0 { check.problems.append("\(check.sessionsOutOfOrder) good sessions do not hold exactly the seqs sent, in order") }
        let verify = runProgram(navlog, ["verify", "--data-dir", dataDirectory])
        check.verifyStatus = verify.status
        if verify.status != 0 { check.problems.append("navlog verify exited \(verify.status): \(String(decoding: (verify.output + verify.error).prefix(500), as: UTF8.self))") }
        let stats = runProgram(navlog, ["stats", "--socket", socket, "--format", "json"])
        if stats.status == 0, let object = try? JSONSerialization.jsonObject(with: stats.output) as? [String: Any], object["accepted"] != nil {
            check.rejected = object["rejected"] as? [String: Int] ?? [:]
            check.rejectedTotal = check.rejected.values.reduce(0, +)
            check.reportsDropped = object["reportsDropped"] as? Int ?? 0
            check.overLimit = object["overLimit"] as? Int ?? 0
            check.connectionsTotal = object["connectionsTotal"] as? Int ?? 0
            check.connectionsAfter = object["connections"] as? Int ?? 0
            check.fsyncP50Milliseconds = object["fsyncP50Milliseconds"] as? Double ?? 0
            check.fsyncP99Milliseconds = object["fsyncP99Milliseconds"] as? Double ?? 0
            check.ackP50Milliseconds = object["ackP50Milliseconds"] as? Double ?? 0
            check.ackP99Milliseconds = object["ackP99Milliseconds"] as? Double ?? 0
            if check.rejectedTotal == 0 { check.problems.append("navlogd counted no rejected lines") }
        } else {
            // Exit status 0 without counters: navlogd answered with something else (a refusal).
            check.problems.append(
                "navlog stats exited \(stats.status): \(String(decoding: (stats.output + stats.error).prefix(500), as: UTF8.self))")
        }
        return check
    }

    /// Runs a program to completion; its status, standard output and standard error.
    private static func runProgram(_ path: String, _ arguments: [String]) -> (status: Int32, output: Data, error: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        do { try process.run() } catch { return (-1, Data(), Data("cannot run \(path): \(error)".utf8)) }
        // Standard error on its own thread: a full pipe must not block the program while we
        // read standard output to its end.
        let errorBox = DataBox()
        let errorDone = DispatchSemaphore(value: 0)
        let errorHandle = error.fileHandleForReading
        Thread.detachNewThread {
            errorBox.data = errorHandle.readDataToEndOfFile()
            errorDone.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorDone.wait()
        process.waitUntilExit()
        return (process.terminationStatus, outputData, errorBox.data)
    }
}

/// Bytes read on another thread.
///
/// `@unchecked Sendable`: written once by the reading thread before it signals, read after the wait.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}

// MARK: - The report

/// The one JSON line `chaos-load` prints.
struct ChaosReport: Codable {
    /// Chaos connections asked for; connections opened (chaos ones that connected at least
    /// once, plus the good ones); the most open at the same time.
    var connectionsRequested: Int
    var connections: Int
    var connectionsPeak: Int
    /// Every successful connect, churn and reconnects included.
    var connectionsOpenedTotal: Int
    /// Seconds until every chaos connection had been opened once.
    var openSeconds: Double
    var seconds: Double
    var seed: UInt64
    /// Per behaviour, what its connections did.
    var behaviours: [String: BehaviourCounts]
    /// Bad lines sent, by kind.
    var badLines: [String: Int]
    /// Rejection reports and refusals read by the chaos connections.
    var errorsSeen: Int
    var refusalsSeen: Int
    /// The good clients.
    var goodClients: Int
    var goodEventsSent: Int
    var goodEventsAcked: Int
    var goodEventsStored: Int
    var goodDuplicates: Int
    var goodAckP50Milliseconds: Double
    var goodAckP99Milliseconds: Double
    var goodAckMaxMilliseconds: Double
    /// The longest a good client waited with an unacknowledged write.
    var goodLongestWaitSeconds: Double
    /// The longest ack latency in each second of the run, in ms.
    var goodWorstAckMillisecondsBySecond: [Double]
    /// Each good client's longest ack latency (ms) and when that write was queued (s into the run).
    var goodWorstAckMillisecondsByClient: [Double]
    var goodWorstAckQueuedAtSecondsByClient: [Double]
    /// Each good client's longest wait for navlogd to take its bytes (socket full), in ms.
    var goodLongestWriteBlockedMillisecondsByClient: [Double]
    var maximumWaitSeconds: Double
    /// Every good client got every ack, none waited longer than `maximumWaitSeconds`, none got
    /// an error or was disconnected.
    var goodServed: Bool
    var goodProblems: [String]
    /// CPU seconds this tool used (user + system) during the run: on a small machine it
    /// competes with navlogd for the same cores.
    var toolCPUSeconds: Double
    /// The log checks (with `--data-dir`).
    var log: LogCheck?
    /// Everything passed.
    var ok = false

    init(options: ChaosLoadOptions, chaos: ChaosLoop, good: GoodClients) {
        connectionsRequested = options.connections
        connections = chaos.slotsOpened + good.clients.count
        connectionsPeak = chaos.peakOpen + good.clients.count
        connectionsOpenedTotal = chaos.counts.values.reduce(0) { $0 + $1.opened } + good.clients.count
        openSeconds = (chaos.openSeconds * 1000).rounded() / 1000
        seconds = options.seconds
        seed = options.seed
        behaviours = Dictionary(uniqueKeysWithValues: chaos.counts.map { ($0.key.rawValue, $0.value) })
        badLines = Dictionary(uniqueKeysWithValues: chaos.badLines.map { ($0.key.rawValue, $0.value) })
        errorsSeen = chaos.counts.values.reduce(0) { $0 + $1.rejections }
        refusalsSeen = chaos.counts.values.reduce(0) { $0 + $1.refusals }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        toolCPUSeconds = (cpu * 100).rounded() / 100
        goodClients = good.clients.count
        goodEventsSent = good.clients.reduce(0) { $0 + $1.eventsQueued }
        goodEventsAcked = good.clients.reduce(0) { $0 + $1.eventsAcked }
        goodEventsStored = good.clients.reduce(0) { $0 + $1.stored }
        goodDuplicates = good.clients.reduce(0) { $0 + $1.duplicates }
        let rounded = { (value: Double) in (value * 1000).rounded() / 1000 }
        goodAckP50Milliseconds = rounded(percentile(good.latencies, 0.5))
        goodAckP99Milliseconds = rounded(percentile(good.latencies, 0.99))
        goodAckMaxMilliseconds = rounded(good.latencies.max() ?? 0)
        goodLongestWaitSeconds = rounded(good.longestWait)
        goodWorstAckMillisecondsBySecond = good.worstBySecond.map { $0.rounded() }
        goodWorstAckMillisecondsByClient = good.clients.map { $0.worstLatency.rounded() }
        goodWorstAckQueuedAtSecondsByClient = good.clients.map { ($0.worstQueuedAt * 10).rounded() / 10 }
        goodLongestWriteBlockedMillisecondsByClient = good.clients.map { ($0.longestWriteBlocked * 1000).rounded() }
        maximumWaitSeconds = options.maximumWait
        var problems: [String] = []
        for (index, client) in good.clients.enumerated() {
            for problem in client.problems { problems.append("good client \(index): \(problem)") }
            if client.eventsAcked < client.eventsQueued {
                problems.append("good client \(index): \(client.eventsQueued - client.eventsAcked) of \(client.eventsQueued) events never acknowledged")
            }
        }
        if good.longestWait > options.maximumWait {
            problems.append(String(format: "a good client waited %.2f s for an ack (limit %.2f s)", good.longestWait, options.maximumWait))
        }
        if goodEventsSent == 0 { problems.append("the good clients sent nothing") }
        goodProblems = problems
        goodServed = problems.isEmpty
    }
}
