import Foundation
import NavlogClient
import NavlogWorkload

#if canImport(Glibc)
    import Glibc
#endif

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
