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
func raiseDescriptorLimit() -> Int {
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
func besideThisProgram(_ name: String) -> String {
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
}

/// A connection to navlogd's socket, made non-blocking for the poll loops: its descriptor, or
/// -1 and the errno.
func connectUnix(_ path: String) -> (fd: Int32, error: Int32) {
    do {
        let fd = try UnixDomainSocket.connect(path: path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, 0)
    } catch {
        return (-1, error.code)
    }
}

/// The `session` and `seq` at the start of a workload line (`{"type":…,"session":"…","ts":…,"seq":N`).
func sessionAndSeq(_ line: [UInt8]) -> (session: String, seq: Int)? {
    guard let session = stringValue(after: Array(#""session":""#.utf8), in: line[...]),
        let seq = integerValue(after: Array(#""seq":"#.utf8), in: line[...])
    else { return nil }
    return (session, seq)
}

/// The characters up to the next `"` after the first `key` in `bytes`.
func stringValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> String? {
    guard let start = firstRange(of: key, in: bytes)?.upperBound else { return nil }
    guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
    return String(decoding: bytes[start..<end], as: UTF8.self)
}

/// The decimal number right after the first `key` in `bytes`.
func integerValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
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
func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
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
