import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking client connection to navlogd's Unix socket, for the CLI.
final class UnixSocket: @unchecked Sendable {
    // `@unchecked`: the descriptor is an immutable Int32; concurrent use is one writer thread
    // and one reader thread, which the kernel allows on a stream socket.
    let descriptor: Int32

    /// Connects to `path`.
    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw CLIError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            throw CLIError("the socket path \(path) is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw CLIError("cannot connect to navlogd at \(path): \(reason). Is navlogd running? Pass its socket with --socket.")
        }
    }

    deinit { close(descriptor) }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = send(descriptor, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("navlogd closed the connection: \(String(cString: strerror(errno)))")
            }
            done += n
        }
    }

    /// Reads what is available (blocking); empty at end of stream.
    func read(into buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { raw in
            while true {
                let n = recv(descriptor, raw.baseAddress, raw.count, 0)
                if n < 0 && errno == EINTR { continue }
                return max(n, 0)
            }
        }
    }
}

/// A command-line failure, said as a sentence.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The socket navlogd listens on by default, as navlogd chooses it.
func defaultSocketPath() -> String {
    let environment = ProcessInfo.processInfo.environment
    if FileManager.default.fileExists(atPath: "/run/navlog/navlog.sock") { return "/run/navlog/navlog.sock" }
    if let runtime = environment["XDG_RUNTIME_DIR"] { return runtime + "/navlog.sock" }
    return "navlog.sock"
}
