import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `navlog-bench load`: drives navlogd (or rsyslog) with ``LoadGenerator`` and prints one JSON
/// line of results: events, seconds, events/s, ack p50 and p99, the loader's own CPU seconds.
struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Drive navlogd (or rsyslog) and print one JSON line: events/s, ack p50/p99, CPU.",
        discussion: """
            Each client is a connection sending its own workload in chunks of --chunk lines; \
            with acks (navlogd only) every chunk is timed from its write to the ack that covers \
            it. With --ack none against navlogd the run ends when navlogd has stored every event \
            (its stats counter). Prints {"events":…,"seconds":…,"eventsPerSecond":…,\
            "ackP50Milliseconds":…,"ackP99Milliseconds":…,"loaderCpuSeconds":…}.
            """
    )

    /// What navlogd is asked to acknowledge (the hello's `ack`).
    enum Acknowledgement: String, ExpressibleByArgument, CaseIterable {
        case none, batch, durable
    }

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("A TCP port on 127.0.0.1 taking raw lines (rsyslog imtcp).", valueName: "port"))
    var tcp: UInt16?

    @Option(help: ArgumentHelp("A Unix datagram socket taking raw lines (rsyslog imuxsock).", valueName: "path"))
    var datagram: String?

    @Option(help: ArgumentHelp("Connections, each its own client.", valueName: "n"))
    var clients = 1

    @Option(help: ArgumentHelp("Events in all, shared among the clients.", valueName: "n"))
    var events = 100_000

    @Option(help: ArgumentHelp("What navlogd acknowledges: none, batch or durable.", valueName: "mode"))
    var ack = Acknowledgement.durable

    @Option(help: ArgumentHelp("Events per second across all clients (0: as fast as possible).", valueName: "rate"))
    var rate = 0.0

    @Option(help: ArgumentHelp("Lines per write.", valueName: "lines"))
    var chunk = 64

    @Option(help: ArgumentHelp("Threads driving the connections.", valueName: "n"))
    var threads = 2

    @Option(
        help: ArgumentHelp(
            "Seeds the clients' workloads (default: a fresh one, since navlogd drops a (session, seq) sent twice as a duplicate, which would make a second run against the same daemon look fast).",
            valueName: "n"))
    var seed: UInt64?

    @Flag(help: "Send workload.md's production shape: 560 live sessions shared among the clients, mixed recording styles (default: 20 sessions a client, recorded in full).")
    var production = false

    func validate() throws {
        let targets = [socket != nil, tcp != nil, datagram != nil].filter { $0 }.count
        guard targets == 1 else {
            throw ValidationError("Say where to send, once: --socket PATH (navlogd), --tcp PORT or --datagram PATH (rsyslog).")
        }
        if socket?.isEmpty == true || datagram?.isEmpty == true { throw ValidationError("--socket and --datagram need a path.") }
        if tcp == 0 { throw ValidationError("--tcp needs a port from 1 to 65535.") }
        guard clients > 0 else { throw ValidationError("--clients must be at least 1 (got \(clients)).") }
        guard events > 0 else { throw ValidationError("--events must be a positive number of events (got \(events)).") }
        guard chunk > 0 else { throw ValidationError("--chunk must be at least 1 line (got \(chunk)).") }
        guard threads > 0 else { throw ValidationError("--threads must be at least 1 (got \(threads)).") }
        guard rate >= 0 && rate.isFinite else { throw ValidationError("--rate must be 0 (as fast as possible) or a positive number of events per second (got \(rate)).") }
    }

    /// Where the events go (``validate()`` made sure exactly one was given).
    var target: LoadGenerator.Target {
        if let socket { return .navlogd(path: socket) }
        if let tcp { return .tcp(port: tcp) }
        return .unixDatagram(path: datagram ?? "")
    }

    func run() {
        let target = target
        var generator = LoadGenerator(target: target, clients: clients, eventsPerClient: max(1, events / clients), ack: ack.rawValue)
        generator.chunk = chunk
        generator.threads = threads
        generator.rate = rate
        generator.production = production
        generator.seed = seed ?? UInt64(UInt64(monotonic() * 1_000_000) & 0xFFFF_FFFF)
        let connections = generator.prepare()
        var before = 0
        if case .navlogd(let path) = target, ack == .none { before = Self.acceptedEvents(path) ?? 0 }
        let start = monotonic()
        let cpuBefore = processCPUSeconds()
        var result = generator.run(connections)
        if case .navlogd(let path) = target, ack == .none {
            // Without acks, done is when navlogd has stored everything.
            let target = before + result.events
            // Each poll is a connection and a stats reply navlogd must make: not too often.
            while (Self.acceptedEvents(path) ?? 0) < target { usleep(5_000) }
            result.seconds = monotonic() - start
        }
        generator.close(connections)
        let loaderCPU = processCPUSeconds() - cpuBefore
        let line = String(
            format: #"{"events":%d,"seconds":%.3f,"eventsPerSecond":%.0f,"ackP50Milliseconds":%.3f,"ackP99Milliseconds":%.3f,"loaderCpuSeconds":%.3f}"#,
            result.events, result.seconds, Double(result.events) / result.seconds,
            percentile(result.latencies, 0.5), percentile(result.latencies, 0.99), loaderCPU
        )
        print(line)
    }

    /// navlogd's `accepted` counter, through a control line.
    static func acceptedEvents(_ path: String) -> Int? {
        let connection = LoadGenerator.Connection()
        let generator = LoadGenerator(target: .navlogd(path: path), clients: 0, eventsPerClient: 0, ack: "none")
        guard generator.connect(connection) else { return nil }
        defer { close(connection.fd) }
        _ = fcntl(connection.fd, F_SETFL, fcntl(connection.fd, F_GETFL) & ~O_NONBLOCK)
        let request = Array("{\"control\":\"stats\"}\n".utf8)
        _ = request.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !reply.contains(0x0A) {
            let n = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply.append(contentsOf: buffer[..<n])
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.prefix { $0 != 0x0A })) as? [String: Any] else { return nil }
        return object["accepted"] as? Int
    }
}
