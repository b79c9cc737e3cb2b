import Foundation
import NavlogTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// navlogd under systemd's protocols: unit files, socket activation, readiness notification.
@Suite("navlogd and systemd", .serialized)
struct SystemdTests {
    static let systemdAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")

    @Test("systemd-analyze verify accepts the units (navlogd's, the index follower's, the web viewer's, the incremental export's and its timer)", .enabled(if: systemdAvailable))
    func unitsVerify() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let units = TestEnvironment.packageRoot.appendingPathComponent("systemd")
            let service = try String(contentsOf: units.appendingPathComponent("navlogd.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/navlogd", with: TestEnvironment.binaries.appendingPathComponent("navlogd").path)
            try service.write(to: dir.appendingPathComponent("navlogd.service"), atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(at: units.appendingPathComponent("navlogd.socket"), to: dir.appendingPathComponent("navlogd.socket"))
            let follower = try String(contentsOf: units.appendingPathComponent("navlog-index.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/navlog ", with: TestEnvironment.binaries.appendingPathComponent("navlog").path + " ")
            try follower.write(to: dir.appendingPathComponent("navlog-index.service"), atomically: true, encoding: .utf8)
            let viewer = try String(contentsOf: units.appendingPathComponent("navlog-serve.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/navlog ", with: TestEnvironment.binaries.appendingPathComponent("navlog").path + " ")
            try viewer.write(to: dir.appendingPathComponent("navlog-serve.service"), atomically: true, encoding: .utf8)
            let exporter = try String(contentsOf: units.appendingPathComponent("navlog-export.service"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/navlog ", with: TestEnvironment.binaries.appendingPathComponent("navlog").path + " ")
            try exporter.write(to: dir.appendingPathComponent("navlog-export.service"), atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(at: units.appendingPathComponent("navlog-export.timer"), to: dir.appendingPathComponent("navlog-export.timer"))
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/systemd-analyze"),
                [
                    "verify", dir.appendingPathComponent("navlogd.service").path, dir.appendingPathComponent("navlogd.socket").path,
                    dir.appendingPathComponent("navlog-index.service").path, dir.appendingPathComponent("navlog-serve.service").path,
                    dir.appendingPathComponent("navlog-export.service").path, dir.appendingPathComponent("navlog-export.timer").path,
                ])
            #expect(result.status == 0, "\(result.errorOutput)")
            #expect(!result.errorOutput.contains("Unknown"), "\(result.errorOutput)")
            #expect(service.contains("Type=notify") && service.contains("WatchdogSec=") && service.contains("RestrictAddressFamilies=AF_UNIX"))
            // The viewer listens on loopback unless given a token.
            #expect(viewer.contains("--listen 127.0.0.1:") && !viewer.contains("0.0.0.0"))
            // The export is incremental, with its state, under this host's partition, and the timer starts it.
            #expect(exporter.contains("--incremental --state ") && exporter.contains("--host %H") && exporter.contains("Type=oneshot"))
        }
    }

    @Test("events sent through a socket passed by systemd-socket-activate land in the log", .enabled(if: systemdAvailable))
    func socketActivation() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let socket = dir.appendingPathComponent("activated.sock").path
            let data = dir.appendingPathComponent("data").path
            // Spawned and reaped with POSIX calls: systemd-socket-activate execs navlogd in place.
            let logFile = dir.appendingPathComponent("activate.log").path
            let pid = try Self.spawn(
                ["/usr/bin/systemd-socket-activate", "-l", socket, TestEnvironment.binaries.appendingPathComponent("navlogd").path, "--data-dir", data], standardError: logFile)
            defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, WNOHANG) }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
            let file = dir.appendingPathComponent("events.jsonl")
            try Data((1...50).map { #"{"type":"mark","session":"activated","seq":\#($0),"name":"n"}"# + "\n" }.joined().utf8).write(to: file)
            let send = try ProcessRunner.navlog(["send", "--socket", socket, file.path], timeout: 60)
            #expect(send.status == 0, "\(send.errorOutput)")
            #expect(send.output.contains("50 events stored"))
            kill(pid, SIGTERM)  // navlogd, exec'd in place by systemd-socket-activate
            var status: Int32 = 0
            let stopDeadline = Date().addingTimeInterval(20)
            var exited = false
            while Date() < stopDeadline {
                if waitpid(pid, &status, WNOHANG) == pid { exited = true; break }
                usleep(20_000)
            }
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            #expect(exited, "navlogd stops on SIGTERM: \(log)")
            #expect(exited && (status & 0x7F) == 0 && ((status >> 8) & 0xFF) == 0, "exit status \(status): \(log)")
            #expect(log.contains("Serving the socket systemd passed"))
            #expect(try ProcessRunner.navlog(["cat", "--data-dir", data]).output.split(separator: "\n").count == 50)
        }
    }

    /// Starts `arguments` with posix_spawn, standard error to `standardError`; returns its pid.
    static func spawn(_ arguments: [String], standardError: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard result == 0 else { throw TestFailure("cannot start \(arguments[0]): \(String(cString: strerror(result)))") }
        return pid
    }

    @Test("navlogd tells NOTIFY_SOCKET READY, STATUS, WATCHDOG at half of WATCHDOG_USEC, and STOPPING")
    func notifications() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("notify.sock").path
            let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(receiver) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0)
            func receive(timeout: Double) -> [String] {
                var messages: [String] = []
                let deadline = Date().addingTimeInterval(timeout)
                while Date() < deadline {
                    var poller = pollfd(fd: receiver, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 100) > 0 else { continue }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let n = buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) }
                    if n > 0 { messages.append(String(decoding: buffer[..<n], as: UTF8.self)) }
                }
                return messages
            }
            let daemon = try DaemonProcess(directory: dir, environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"])
            let running = receive(timeout: 1.5)
            #expect(running.contains { $0.contains("READY=1") && $0.contains("STATUS=") })
            #expect(running.filter { $0.contains("WATCHDOG=1") }.count >= 4, "a ping every 0.2 s: \(running)")
            #expect(daemon.terminate() == 0)
            #expect(receive(timeout: 0.5).contains { $0.contains("STOPPING=1") })
        }
    }
}
