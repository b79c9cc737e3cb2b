import Foundation
import NavlogClient

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
        do {
            descriptor = try UnixDomainSocket.connect(path: path)
        } catch  where error.code == 0 {
            throw CLIError(error.description)
        } catch {
            throw CLIError("\(error.description). Is navlogd running? Pass its socket with --socket.")
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
