import Foundation
import NavlogClient
import NavlogTesting
import NavlogWorkload
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("NavlogClient against a real navlogd", .serialized)
struct ClientTests {
    static func lines(_ count: Int, seed: UInt64) -> [String] {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: seed))
        return generator.lines(count).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("events queued while navlogd is away are delivered once it is up, each exactly once")
    func deliversAfterDaemonAppears() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            var configuration = NavlogClient.Configuration(socketPath: dir.appendingPathComponent("navlog.sock").path)
            configuration.reconnectDelay = 0.02...0.2
            let client = NavlogClient(configuration: configuration)
            let events = Self.lines(1000, seed: 21)
            for line in events { client.send(line) }
            let daemon = try DaemonProcess(directory: dir)
            try await client.flush(timeout: 30)
            #expect(client.statistics.acknowledged == 1000)
            await client.close(timeout: 1)
            #expect(daemon.terminate() == 0)
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", daemon.dataDirectory])
            #expect(cat.output.split(separator: "\n").count == 1000)
        }
    }

    @Test("after navlogd is killed and restarted, the client reconnects and resends; nothing is lost or doubled")
    func reconnectsAndResends() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            var daemon = try DaemonProcess(directory: dir)
            var configuration = NavlogClient.Configuration(socketPath: daemon.socket)
            configuration.reconnectDelay = 0.02...0.2
            configuration.whenFull = .wait
            let client = NavlogClient(configuration: configuration)
            let events = Self.lines(6000, seed: 22)
            for line in events.prefix(3000) { client.send(line) }
            try await client.flush(timeout: 30)
            for line in events[3000..<4500] { client.send(line) }
            daemon.crash()
            for line in events[4500...] { client.send(line) }
            daemon = try DaemonProcess(directory: dir)
            try await client.flush(timeout: 60)
            let statistics = client.statistics
            #expect(statistics.reconnects >= 1)
            #expect(statistics.dropped == 0)
            await client.close(timeout: 1)
            #expect(daemon.terminate() == 0)
            let stored = try ProcessRunner.navlog(["cat", "--data-dir", daemon.dataDirectory]).output.split(separator: "\n")
            #expect(stored.count == 6000, "every event exactly once (the resent ones already stored were dropped as duplicates)")
        }
    }

    @Test("a full queue drops the oldest events, counts them, and never blocks the caller")
    func dropsOldestWhenFull() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            var configuration = NavlogClient.Configuration(socketPath: dir.appendingPathComponent("nobody.sock").path)
            configuration.maximumQueuedEvents = 100
            let client = NavlogClient(configuration: configuration)
            let started = Date()
            for line in Self.lines(10_000, seed: 23) { client.send(line) }
            #expect(Date().timeIntervalSince(started) < 5, "send never waits for the daemon")
            #expect(client.statistics.dropped == 9_900)
            await #expect(throws: NavlogClient.FlushError.self) { try await client.flush(timeout: 0.3) }
            await client.close(timeout: 0.1)
        }
    }
}
