import Foundation
import NavlogClient
import NavlogWorkload

#if canImport(Glibc)
    import Glibc
#endif

/// `navlog-bench load`: drives a navlogd (or rsyslog, with `--raw`) with many connections and
/// measures events/s and acknowledgement latency.
///
/// Each connection sends its own workload (its own sessions) in chunks of `chunk` lines; with
/// acknowledgements it times every chunk from its write to the ack that covers it.
struct LoadGenerator {
    enum Target {
        /// navlogd's Unix socket.
        case navlogd(path: String)
        /// A Unix stream socket taking raw lines (rsyslog imuxsock is datagram; see `unixDatagram`).
        case unixDatagram(path: String)
        /// TCP on 127.0.0.1 (rsyslog imtcp).
        case tcp(port: UInt16)
    }

    var target: Target
    var clients: Int
    var eventsPerClient: Int
    var ack: String  // none, batch, durable (navlogd only)
    var chunk = 64
    var threads = 2
    var seed: UInt64 = 7
    /// Whether the clients together send workload.md's production shape (560 live sessions
    /// shared among them, mixed recording styles) instead of 20 sessions each, all recorded
    /// in full (what the ingest benchmarks have always measured).
    var production = false
    /// Events per second across all connections (0 = as fast as possible).
    var rate: Double = 0

    struct Result {
        var events: Int
        var seconds: Double
        var latencies: [Double]  // ms per chunk
    }

    /// Per-connection data, prepared before the clock starts.
    ///
    /// `@unchecked Sendable`: each connection is handed to exactly one driving thread and
    /// touched by no other until that thread has finished.
    final class Connection: @unchecked Sendable {
        var fd: Int32 = -1
        var payload: [UInt8] = []
        var lineEnds: [Int] = []  // byte offset after each line
        var sentBytes = 0
        var sentLines = 0
        var chunkTimes: [(lastLine: Int, time: Double)] = []
        var acked = 0
        var replies: [UInt8] = []
        var done = false
        var lineOffset = 0  // the hello line counts as line 1
    }

    func prepare() -> [Connection] {
        (0..<clients).map { index in
            let connection = Connection()
            let clientSeed = seed &+ UInt64(index) &* 7919
            var configuration = WorkloadConfiguration(seed: clientSeed, concurrentSessions: 20)
            if production {
                configuration = .production(seed: clientSeed)
                configuration.concurrentSessions = max(1, configuration.concurrentSessions / clients)
            }
            var generator = WorkloadGenerator(configuration)
            var bytes: [UInt8] = []
            if case .navlogd = target {
                bytes.append(contentsOf: Array("{\"hello\":1,\"client\":\"bench\",\"ack\":\"\(ack)\"}\n".utf8))
                connection.lineOffset = 1
            }
            var line: [UInt8] = []
            var ends: [Int] = []
            for _ in 0..<eventsPerClient {
                generator.nextLine(into: &line)
                bytes.append(contentsOf: line)
                bytes.append(0x0A)
                ends.append(bytes.count)
            }
            connection.payload = bytes
            connection.lineEnds = ends
            return connection
        }
    }

    func connect(_ connection: Connection) -> Bool {
        switch target {
        case .navlogd(let path), .unixDatagram(let path):
            let datagram: Bool
            if case .unixDatagram = target { datagram = true } else { datagram = false }
            guard let fd = try? UnixDomainSocket.connect(path: path, datagram: datagram) else { return false }
            connection.fd = fd
        case .tcp(let port):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else { Glibc.close(fd); return false }
            connection.fd = fd
        }
        _ = fcntl(connection.fd, F_SETFL, fcntl(connection.fd, F_GETFL) | O_NONBLOCK)
        return true
    }

    /// Sends everything; returns when every connection finished (acked, or all written).
    func run(_ connections: [Connection]) -> Result {
        for connection in connections where !connect(connection) {
            fatalError("navlog-bench load: cannot connect to the target (is it running?)")
        }
        let waitsForAcks: Bool
        if case .navlogd = target { waitsForAcks = ack != "none" } else { waitsForAcks = false }
        let datagram: Bool
        if case .unixDatagram = target { datagram = true } else { datagram = false }
        let start = monotonic()
        let groups = stride(from: 0, to: connections.count, by: max(1, (connections.count + threads - 1) / threads)).map {
            Array(connections[$0..<min($0 + max(1, (connections.count + threads - 1) / threads), connections.count)])
        }
        let latencies = LatencyBox()
        let finished = DispatchGroup()
        for group in groups {
            finished.enter()
            Thread.detachNewThread { [chunk] in
                let share = rate > 0 ? rate * Double(group.count) / Double(max(1, clients)) : 0
                let measured = Self.drive(group, chunk: chunk, waitsForAcks: waitsForAcks, datagram: datagram, rate: share)
                latencies.append(measured)
                finished.leave()
            }
        }
        finished.wait()
        let seconds = monotonic() - start
        return Result(events: clients * eventsPerClient, seconds: seconds, latencies: latencies.values)
    }

    static func drive(_ connections: [Connection], chunk: Int, waitsForAcks: Bool, datagram: Bool, rate: Double = 0) -> [Double] {
        var latencies: [Double] = []
        let started = monotonic()
        var linesSent = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var remaining = connections.count
        while remaining > 0 {
            // At a fixed rate, ask to write only once the schedule has reached the next line,
            // and sleep in poll until then: a writable socket would otherwise wake poll at once
            // and the generator would spin, taking CPU from the daemon it measures.
            var wait: Int32 = 100
            var writeWanted = true
            if rate > 0 {
                let due = started + Double(linesSent) / rate
                let now = monotonic()
                writeWanted = now >= due
                if !writeWanted { wait = Int32(min(100, max(1, ((due - now) * 1000).rounded(.up)))) }
            }
            var pollers = connections.map { connection -> pollfd in
                var events = Int16(POLLIN)
                if writeWanted && connection.sentBytes < connection.payload.count { events |= Int16(POLLOUT) }
                return pollfd(fd: connection.done ? -1 : connection.fd, events: events, revents: 0)
            }
            _ = poll(&pollers, nfds_t(pollers.count), wait)
            for (index, connection) in connections.enumerated() where !connection.done {
                let revents = pollers[index].revents
                // At a fixed rate, write only once the schedule has reached this line.
                let onSchedule = rate <= 0 || Double(linesSent) <= (monotonic() - started) * rate
                if revents & Int16(POLLOUT) != 0 && connection.sentBytes < connection.payload.count && onSchedule {
                    // Write up to `chunk` lines (datagram: one line per send).
                    let firstLine = connection.sentLines
                    let lastLine = min(firstLine + (datagram ? 1 : chunk), connection.lineEnds.count)
                    let start = connection.sentBytes
                    let end = lastLine > 0 ? connection.lineEnds[lastLine - 1] : start
                    let n = connection.payload.withUnsafeBytes { raw in
                        send(connection.fd, raw.baseAddress! + start, end - start - (datagram ? 1 : 0), Int32(MSG_NOSIGNAL))
                    }
                    if n > 0 {
                        connection.sentBytes += datagram ? n + 1 : n
                        while connection.sentLines < connection.lineEnds.count && connection.lineEnds[connection.sentLines] <= connection.sentBytes {
                            connection.sentLines += 1
                            linesSent += 1
                        }
                        if waitsForAcks { connection.chunkTimes.append((connection.sentLines + connection.lineOffset, monotonic())) }
                    }
                }
                if revents & Int16(POLLIN) != 0 {
                    let n = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
                    if n > 0 {
                        connection.replies.append(contentsOf: buffer[..<n])
                        while let newline = connection.replies.firstIndex(of: 0x0A) {
                            let line = String(decoding: connection.replies[..<newline], as: UTF8.self)
                            connection.replies.removeSubrange(...newline)
                            if let range = line.range(of: "\"ack\":"), let acked = Int(line[range.upperBound...].prefix(while: \.isNumber)) {
                                connection.acked = max(connection.acked, acked)
                                let now = monotonic()
                                while let first = connection.chunkTimes.first, first.lastLine <= acked {
                                    latencies.append((now - first.time) * 1000)
                                    connection.chunkTimes.removeFirst()
                                }
                            }
                        }
                    }
                }
                let allSent = connection.sentBytes >= connection.payload.count
                if allSent && (!waitsForAcks || connection.acked >= connection.lineEnds.count + connection.lineOffset) {
                    connection.done = true
                    remaining -= 1
                }
            }
        }
        return latencies
    }

    func close(_ connections: [Connection]) {
        for connection in connections where connection.fd >= 0 { Glibc.close(connection.fd) }
    }
}

/// Latencies collected from every driving thread.
final class LatencyBox: @unchecked Sendable {
    // `@unchecked`: `values` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: [Double] = []
    func append(_ more: [Double]) { lock.withLock { stored.append(contentsOf: more) } }
    var values: [Double] { lock.withLock { stored } }
}

func monotonic() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// CPU seconds (user + system) this process has used: the load generator's own share of the
/// machine, which the daemon under test does not get.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
