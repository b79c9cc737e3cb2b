#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens client connections to Unix-domain sockets: the one place navlog's programs (the
/// client, the CLI, the test support and the load generator) fill in a `sockaddr_un`.
public enum UnixDomainSocket {
    /// Why a connection could not be made, as a sentence, with the `errno` behind it.
    public struct ConnectError: Error, CustomStringConvertible, Sendable {
        /// What went wrong, for people.
        public var description: String
        /// The system error number (0 for a path that is too long).
        public var code: Int32
    }

    /// Creates a socket (close-on-exec) and connects it to `path`.
    /// - Parameter datagram: a `SOCK_DGRAM` socket instead of a stream (rsyslog's imuxsock).
    /// - Returns: the connected descriptor; the caller closes it.
    public static func connect(path: String, datagram: Bool = false) throws(ConnectError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ConnectError(
                description:
                    "the socket path \(path) is \(bytes.count) bytes long, more than a Unix socket address holds (\(MemoryLayout.size(ofValue: address.sun_path) - 1)); use a shorter path",
                code: 0)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        #if canImport(Glibc)
            let kind = Int32(datagram ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let kind = datagram ? SOCK_DGRAM : SOCK_STREAM
        #endif
        let descriptor = socket(AF_UNIX, kind, 0)
        guard descriptor >= 0 else {
            throw ConnectError(description: "cannot create a socket: \(String(cString: strerror(errno)))", code: errno)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            _ = close(descriptor)
            throw ConnectError(description: "cannot connect to \(path): \(String(cString: strerror(code)))", code: code)
        }
        return descriptor
    }
}

// A free function, so the C call is not shadowed by `UnixDomainSocket.connect`.
private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
