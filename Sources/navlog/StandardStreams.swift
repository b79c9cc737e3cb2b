#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Buffered writes to a file descriptor, flushed in large chunks (stdout of `cat` can be GBs).
struct OutputBuffer: ~Copyable {
    let descriptor: Int32
    var bytes: [UInt8] = []
    let threshold = 1 << 20

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        bytes.reserveCapacity(threshold + 65_536)
    }

    /// Writes the buffer out if it is large.
    mutating func flushIfNeeded() {
        if bytes.count >= threshold { flush() }
    }

    /// Writes everything buffered. A closed pipe (`navlog cat | head`) ends the program quietly.
    mutating func flush() {
        var written = 0
        bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let n = write(descriptor, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE { exit(0) }
                    return
                }
                written += n
            }
        }
        bytes.removeAll(keepingCapacity: true)
    }

    deinit {
        if !bytes.isEmpty {
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
    }
}

/// Prints a line to standard error.
func printError(_ text: String) {
    // write(2) on fd 2 directly: unbuffered, and no shared C `FILE *` state.
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
