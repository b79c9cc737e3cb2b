import Dispatch
import Foundation
import NavlogClient
import NavlogClientHTTP
import NavlogTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A clock the test moves: the transport's waits advance it (instantly) only up to `limit`;
/// past that they wait a millisecond of real time, so the test decides how much time passes.
final class VirtualClock: Sendable {
    private let state = Mutex((now: 0.0, limit: 0.0))
    var now: Double { state.withLock { $0.now } }

    /// Lets up to `seconds` more of virtual time pass.
    func allow(_ seconds: Double) { state.withLock { $0.limit = $0.now + seconds } }

    var clock: TransportClock {
        TransportClock(
            now: { self.now },
            sleep: { seconds, wake in
                let advanced = self.state.withLock { state -> Bool in
                    guard state.now < state.limit else { return false }
                    state.now = min(state.now + seconds, state.limit)
                    return true
                }
                if !advanced { _ = wake.wait(timeout: .now() + .milliseconds(1)) }
            })
    }
}

/// navlogd and `navlog intake` in front of it on a loopback port (chosen before it starts, so a
/// client can be offline first).
final class IntakeStack: @unchecked Sendable {
    // `@unchecked`: used by the one test that made it.
    let directory: URL
    let port: Int
    let secret = "swift-client-test-secret-42"
    var daemon: DaemonProcess?
    var intake: RunningProcess?

    init(directory: URL) throws {
        self.directory = directory
        port = try Self.freePort()
        try #"{"relayUIDs":[\#(getuid())]}"#.write(to: directory.appendingPathComponent("navlogd.json"), atomically: true, encoding: .utf8)
        let keys = directory.appendingPathComponent("keys.json")
        try #"{"keys":[{"id":"ios-test","secret":"\#(secret)"}]}"#.write(to: keys, atomically: true, encoding: .utf8)
        chmod(keys.path, 0o600)
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/v1/events")! }

    func start() throws {
        let daemon = try DaemonProcess(directory: directory, arguments: ["--config", directory.appendingPathComponent("navlogd.json").path])
        self.daemon = daemon
        let intake = try RunningProcess(
            TestEnvironment.binaries.appendingPathComponent("navlog"),
            ["intake", "--socket", daemon.socket, "--listen", "127.0.0.1:\(port)", "--keys", directory.appendingPathComponent("keys.json").path, "--address-rate", "0"])
        self.intake = intake
        guard intake.waitForOutput(containing: "listening", timeout: 60) else { throw TestFailure("navlog intake did not start: \(intake.errorOutput)") }
    }

    func stop() {
        _ = intake?.stop()
        daemon?.terminate()
    }

    /// (session, seq) of every stored event, repeats included.
    func stored() throws -> [String] {
        let cat = try ProcessRunner.navlog(["cat", "--data-dir", daemon!.dataDirectory])
        return cat.output.split(separator: "\n").compactMap { line in
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(event["session"] ?? "?")#\(event["seq"] ?? "?")"
        }
    }

    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

@Suite("NavlogClient over HTTP: queue, batching and backoff on an injected clock", .serialized)
struct HTTPClientTests {
    static func event(_ session: String, _ seq: Int) -> String {
        #"{"type":"mark","session":"\#(session)","seq":\#(seq),"ts":\#(1_763_715_600_000_000 + seq),"name":"m\#(seq)"}"#
    }

    static func waitUntil(_ seconds: Double = 60, _ condition: () -> Bool) async {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() && Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("six hours offline: events kept on disk, retries capped at the largest delay, then every event stored once")
    func hoursOffline() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let stack = try IntakeStack(directory: dir)
            defer { stack.stop() }
            let time = VirtualClock()
            var http = NavlogClient.HTTPConfiguration(url: stack.url, key: stack.secret, queueDirectory: dir.appendingPathComponent("queue"))
            http.clock = time.clock
            http.retryDelay = 1...300
            let client = NavlogClient(configuration: .init(http: http))
            var expected = Set<String>()
            // Three bursts an hour apart, while nothing listens on the port.
            for hour in 0..<3 {
                for n in 1...400 {
                    client.send(Self.event("offline-\(n % 8)", hour * 100 + n / 8 + 1))
                    expected.insert("offline-\(n % 8)#\(hour * 100 + n / 8 + 1)")
                }
                time.allow(3600)
                await Self.waitUntil { time.now >= Double(hour + 1) * 3600 }
            }
            time.allow(3 * 3600)
            await Self.waitUntil { time.now >= 6 * 3600 }
            let offline = client.statistics
            #expect(offline.eventsOnDisk == 1200)
            #expect(offline.dropped == 0)
            #expect(offline.stored == 0)
            // Doubling from 1 s reaches the 300 s cap in 9 attempts; after that each wait is
            // 150–300 s: 6 h holds 72–144 attempts more, never a tight loop.
            #expect(offline.retries >= 60 && offline.retries <= 160, "retries: \(offline.retries)")
            #expect(offline.bytesOnDisk < 60_000, "gzip batches of 1,200 events: \(offline.bytesOnDisk) bytes")
            try stack.start()
            time.allow(400)  // the next attempt is at most 300 s away
            try await client.flush(timeout: 60)
            let online = client.statistics
            #expect(online.stored == 1200)
            #expect(online.eventsOnDisk == 0)
            await client.close(timeout: 1)
            let stored = try stack.stored()
            #expect(stored.count == 1200)
            #expect(Set(stored) == expected)
        }
    }

    @Test("a batch waits for its age (or its count), not for a timer of real time")
    func batchingByAgeAndCount() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let stack = try IntakeStack(directory: dir)
            try stack.start()
            defer { stack.stop() }
            let time = VirtualClock()
            var http = NavlogClient.HTTPConfiguration(url: stack.url, key: stack.secret, queueDirectory: dir.appendingPathComponent("queue"))
            http.clock = time.clock
            http.maximumBatchAge = 30
            http.maximumBatchEvents = 100
            let client = NavlogClient(configuration: .init(http: http))
            for n in 1...3 { client.send(Self.event("age", n)) }
            try await Task.sleep(for: .milliseconds(500))
            #expect(client.statistics.stored == 0, "nothing is sent before the batch is 30 s old")
            #expect(client.statistics.eventsOnDisk == 3, "but the events are on disk at once")
            time.allow(29)
            try await Task.sleep(for: .milliseconds(300))
            #expect(client.statistics.stored == 0)
            time.allow(2)
            await Self.waitUntil { client.statistics.stored == 3 }
            #expect(client.statistics.stored == 3)
            // A full batch goes at once, whatever its age.
            for n in 4...103 { client.send(Self.event("age", n)) }
            await Self.waitUntil { client.statistics.stored == 103 }
            #expect(client.statistics.stored == 103)
            await client.close(timeout: 5)
            #expect(try stack.stored().count == 103)
        }
    }

    @Test("the bound: offline past maximumQueuedEvents drops the oldest batches, counted; the newest are stored")
    func boundedQueueDropsOldestCounted() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let stack = try IntakeStack(directory: dir)
            defer { stack.stop() }
            let time = VirtualClock()
            var http = NavlogClient.HTTPConfiguration(url: stack.url, key: stack.secret, queueDirectory: dir.appendingPathComponent("queue"))
            http.clock = time.clock
            http.maximumBatchEvents = 100
            http.maximumQueuedEvents = 1000
            let client = NavlogClient(configuration: .init(http: http))
            var maximumOnDisk: UInt64 = 0
            for n in 1...2500 {
                client.send(Self.event("bounded", n))
                if n % 100 == 0 {
                    await Self.waitUntil { client.statistics.eventsOnDisk + client.statistics.dropped >= UInt64(n) }
                    maximumOnDisk = max(maximumOnDisk, client.statistics.eventsOnDisk)
                }
            }
            time.allow(7200)
            await Self.waitUntil { time.now >= 7200 }
            let offline = client.statistics
            #expect(maximumOnDisk <= 1000)
            #expect(offline.dropped == 1500, "dropped: \(offline.dropped)")
            try stack.start()
            time.allow(400)
            try await client.flush(timeout: 60)
            let online = client.statistics
            #expect(online.stored + online.dropped == 2500)
            await client.close(timeout: 1)
            let stored = try stack.stored()
            #expect(Set(stored) == Set((1501...2500).map { "bounded#\($0)" }), "the newest 1,000 are stored, each once")
            #expect(stored.count == 1000)
        }
    }

    @Test("an app killed before its events were sent: the next client on the same queue sends them, once")
    func nextLaunchSendsWhatTheLastLeft() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let stack = try IntakeStack(directory: dir)
            defer { stack.stop() }
            let queue = dir.appendingPathComponent("queue")
            var http = NavlogClient.HTTPConfiguration(url: stack.url, key: stack.secret, queueDirectory: queue)
            http.retryDelay = 0.05...0.2
            let first = NavlogClient(configuration: .init(http: http))
            // Events without seq: the client numbers them per session, and the numbers survive.
            for n in 1...700 { first.send(#"{"type":"mark","session":"launch-\#(n % 2)","name":"a\#(n)"}"#) }
            await Self.waitUntil { first.statistics.eventsOnDisk == 700 }
            await first.close(timeout: 0)
            try stack.start()
            let second = NavlogClient(configuration: .init(http: http))
            for n in 1...100 { second.send(#"{"type":"mark","session":"launch-\#(n % 2)","name":"b\#(n)"}"#) }
            try await second.flush(timeout: 60)
            let statistics = second.statistics
            #expect(statistics.stored == 800, "the 700 the first left and its own 100")
            #expect(statistics.queued == 100)
            await second.close(timeout: 1)
            let stored = try stack.stored()
            #expect(stored.count == 800)
            #expect(Set(stored) == Set((0..<2).flatMap { s in (1...400).map { "launch-\(s)#\($0)" } }))
        }
    }
}
