import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Parses `load` arguments, runs the load, prints one JSON line of results.
func runLoad(_ arguments: [String]) {
    var target: LoadGenerator.Target?
    var clients = 1, events = 100_000, chunk = 64, threads = 2
    var ack = "durable"
    var rate = 0.0
    // A fresh seed per run: the same (session, seq) sent twice is dropped by navlogd as a
    // duplicate, which would make a second run against the same daemon look fast.
    var seed = UInt64(UInt64(monotonic() * 1_000_000) & 0xFFFF_FFFF)
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--socket": target = .navlogd(path: iterator.next() ?? "")
        case "--datagram": target = .unixDatagram(path: iterator.next() ?? "")
        case "--tcp": target = .tcp(port: UInt16(iterator.next() ?? "") ?? 0)
        case "--clients": clients = Int(iterator.next() ?? "") ?? clients
        case "--events": events = Int(iterator.next() ?? "") ?? events
        case "--ack": ack = iterator.next() ?? ack
        case "--chunk": chunk = Int(iterator.next() ?? "") ?? chunk
        case "--threads": threads = Int(iterator.next() ?? "") ?? threads
        case "--rate": rate = Double(iterator.next() ?? "") ?? 0
        case "--seed": seed = UInt64(iterator.next() ?? "") ?? seed
        default:
            FileHandle.standardError.write(Data("navlog-bench load: unknown argument \(argument)\n".utf8))
            exit(2)
        }
    }
    guard let target else {
        FileHandle.standardError.write(Data("navlog-bench load: say where to send: --socket PATH (navlogd), --tcp PORT or --datagram PATH (rsyslog)\n".utf8))
        exit(2)
    }
    var generator = LoadGenerator(target: target, clients: clients, eventsPerClient: max(1, events / clients), ack: ack)
    generator.chunk = chunk
    generator.threads = threads
    generator.rate = rate
    generator.seed = seed
    let connections = generator.prepare()
    var before = 0
    if case .navlogd(let path) = target, ack == "none" { before = acceptedEvents(path) ?? 0 }
    let start = monotonic()
    let cpuBefore = processCPUSeconds()
    var result = generator.run(connections)
    if case .navlogd(let path) = target, ack == "none" {
        // Without acks, done is when navlogd has stored everything.
        let target = before + result.events
        // Each poll is a connection and a stats reply navlogd must make: not too often.
        while (acceptedEvents(path) ?? 0) < target { usleep(5_000) }
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
func acceptedEvents(_ path: String) -> Int? {
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

/// CPU seconds (user + system) this process has used: the load generator's own share of the
/// machine, which the daemon under test does not get.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
