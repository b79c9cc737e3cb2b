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

    @Test(
        "the intake's unit: systemd-analyze verify accepts it, it is hardened as navlogd is (TCP besides), and navlog intake has every option it uses",
        .enabled(if: systemdAvailable))
    func intakeUnit() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let units = TestEnvironment.packageRoot.appendingPathComponent("systemd")
            let navlog = TestEnvironment.binaries.appendingPathComponent("navlog").path
            let daemonUnit = try String(contentsOf: units.appendingPathComponent("navlogd.service"), encoding: .utf8)
            try daemonUnit.replacingOccurrences(of: "/usr/local/bin/navlogd", with: TestEnvironment.binaries.appendingPathComponent("navlogd").path)
                .write(to: dir.appendingPathComponent("navlogd.service"), atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(at: units.appendingPathComponent("navlogd.socket"), to: dir.appendingPathComponent("navlogd.socket"))
            let unit = try String(contentsOf: units.appendingPathComponent("navlog-intake.service"), encoding: .utf8)
            let intake = dir.appendingPathComponent("navlog-intake.service")
            try unit.replacingOccurrences(of: "/usr/local/bin/navlog ", with: navlog + " ").write(to: intake, atomically: true, encoding: .utf8)
            let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
            let verify = try ProcessRunner.run(
                analyze, ["verify", intake.path, dir.appendingPathComponent("navlogd.service").path, dir.appendingPathComponent("navlogd.socket").path])
            #expect(verify.status == 0, "\(verify.errorOutput)")
            #expect(!verify.errorOutput.contains("Unknown"), "\(verify.errorOutput)")

            func settings(_ text: String) -> [String: [String]] {
                var result: [String: [String]] = [:]
                for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                    guard let equals = line.firstIndex(of: "=") else { continue }
                    result[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
                }
                return result
            }
            let own = settings(unit)
            // Its own user, in group navlog (navlogd.socket is 0660 root:navlog), started after navlogd's socket.
            #expect(own["User"] == ["navlog-intake"] && own["Group"] == ["navlog-intake"])
            #expect(own["SupplementaryGroups"] == ["navlog"])
            #expect(own["Wants"]?.contains { $0.split(separator: " ").contains("navlogd.socket") } == true)
            #expect(own["After"]?.contains { $0.split(separator: " ").contains("navlogd.socket") } == true)
            #expect(own["ExecReload"] == ["kill -HUP $MAINPID"])
            #expect(own["Restart"] == ["on-failure"])
            let start = own["ExecStart"]?.first ?? ""
            for part in [
                "/usr/local/bin/navlog intake ", "--socket /run/navlog/navlog.sock", "--listen 0.0.0.0:8443", "--keys /etc/navlog/intake-keys.json",
                "--tls-cert /etc/navlog/", "--tls-key /etc/navlog/",
            ] {
                #expect(start.contains(part), "ExecStart has \(part): \(start)")
            }
            // Every hardening setting of navlogd.service, with navlogd's value; only the address
            // families differ (the intake listens on TCP).
            let daemon = settings(String(daemonUnit[daemonUnit.range(of: "# Hardening")!.lowerBound...]))
            for (key, values) in daemon where !["WantedBy", "Also"].contains(key) {
                if key == "RestrictAddressFamilies" {
                    #expect(own[key] == ["AF_UNIX AF_INET AF_INET6"])
                } else {
                    #expect(own[key] == values, "\(key)= is \(own[key] ?? []) in navlog-intake.service, \(values) in navlogd.service")
                }
            }
            // systemd's own score: no more exposed than navlogd's plus what TCP costs (navlog-serve's is 1.4).
            let security = try ProcessRunner.run(analyze, ["security", "--offline=yes", "--no-pager", intake.path])
            let overall = (security.output + security.errorOutput).split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
            let exposure = overall.split(separator: ":").last.flatMap { Double($0.split(separator: " ").first ?? "") }
            #expect(exposure != nil && exposure! <= 1.4, "systemd-analyze security: \(overall)")

            // Each option the unit gives is one navlog intake knows.
            let help = try ProcessRunner.navlog(["intake", "--help"])
            #expect(help.status == 0, "\(help.errorOutput)")
            for option in start.split(separator: " ").filter({ $0.hasPrefix("--") }) {
                #expect(help.output.contains(option), "navlog intake --help lists \(option)")
            }
            // The example keys file the install puts in /etc/navlog is what the intake reads.
            let example = try Data(contentsOf: units.appendingPathComponent("intake-keys.example.json"))
            let keys = (try JSONSerialization.jsonObject(with: example) as? [String: Any])?["keys"] as? [[String: Any]]
            #expect(keys?.first?["id"] as? String == "ios-prod" && keys?.first?["secret"] as? String == "REPLACE-WITH-A-RANDOM-SECRET")
            #expect((keys?.first?["eventsPerSecond"] as? Int) != nil && (keys?.first?["burst"] as? Int) != nil)
        }
    }

    @Test(
        "systemd-sysusers makes navlog, navlog-intake and navlog-intake a member of navlog", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-sysusers"))
    )
    func sysusers() throws {
        try TestEnvironment.withTemporaryDirectory { root in
            // An empty root of its own: nothing of this machine's is changed.
            let snippets = root.appendingPathComponent("etc/sysusers.d")
            try FileManager.default.createDirectory(at: snippets, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: TestEnvironment.packageRoot.appendingPathComponent("systemd/navlog.sysusers.conf"), to: snippets.appendingPathComponent("navlog.conf"))
            let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/systemd-sysusers"), ["--root=\(root.path)"])
            #expect(result.status == 0, "\(result.errorOutput)")
            let groups = try String(contentsOf: root.appendingPathComponent("etc/group"), encoding: .utf8).split(separator: "\n")
            let users = try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8).split(separator: "\n")
            let navlog = groups.first { $0.hasPrefix("navlog:") }?.split(separator: ":", omittingEmptySubsequences: false)
            #expect(navlog?.count == 4 && navlog?[3].split(separator: ",").contains("navlog-intake") == true, "\(groups)")
            #expect(groups.contains { $0.hasPrefix("navlog-intake:") })
            let user = users.first { $0.hasPrefix("navlog-intake:") }?.split(separator: ":", omittingEmptySubsequences: false)
            #expect(user?.last == "/usr/sbin/nologin", "\(users)")
            let intakeGroup = groups.first { $0.hasPrefix("navlog-intake:") }?.split(separator: ":", omittingEmptySubsequences: false)
            #expect(user != nil && intakeGroup != nil && user![3] == intakeGroup![2], "its primary group is navlog-intake")
        }
    }

    @Test("events sent through a socket passed by systemd-socket-activate land in the log", .enabled(if: systemdAvailable))
    func socketActivation() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let socket = dir.appendingPathComponent("activated.sock").path
            let data = dir.appendingPathComponent("data").path
            // Spawned (dying with the test process) and reaped with POSIX calls: systemd-socket-activate
            // execs navlogd in place.
            let logFile = dir.appendingPathComponent("activate.log").path
            let pid = try TestChildProcesses.spawn(
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
