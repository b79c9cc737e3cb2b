#if canImport(Glibc)
    import Glibc
#endif

/// systemd's readiness protocol (`sd_notify`) and socket activation (`LISTEN_FDS`), spoken
/// directly so navlogd needs no libsystemd.
public struct SystemdNotifier: Sendable {
    private let socketPath: String?

    /// Reads `NOTIFY_SOCKET`; without it every notification is a no-op.
    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether systemd asked for notifications.
    public var isEnabled: Bool { socketPath != nil }

    /// Sends one notification such as `READY=1` or `STATUS=...`; errors are ignored, as sd_notify does.
    public func notify(_ message: String) {
        guard let path = socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let payload = Array(message.utf8)
        _ = payload.withUnsafeBytes { data in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, data.baseAddress, data.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
    }

    /// The watchdog ping interval systemd asked for (half of `WATCHDOG_USEC`), if any.
    public static func watchdogInterval(environment: [String: String]) -> Double? {
        guard let usec = environment["WATCHDOG_USEC"].flatMap(Double.init), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return usec / 2 / 1_000_000
    }
}

/// Socket activation: the listening socket systemd passed, if it passed one to this process.
public enum SocketActivation {
    /// The first inherited descriptor (3) when `LISTEN_PID` is this process and `LISTEN_FDS ≥ 1`.
    public static func inheritedSocket(environment: [String: String]) -> Int32? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1
        else { return nil }
        return 3
    }
}
