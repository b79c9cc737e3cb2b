import NavlogClient

#if canImport(Glibc)
    import Glibc
#endif

// What the chaos loops (ChaosLoop, GoodClients, ChaosReport) share: connecting to navlogd's
// socket, and finding fields in its replies and in workload lines without a JSON parser.

/// A connection to navlogd's socket, made non-blocking for the poll loops: its descriptor, or
/// -1 and the errno.
func connectUnix(_ path: String) -> (fd: Int32, error: Int32) {
    do {
        let fd = try UnixDomainSocket.connect(path: path)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, 0)
    } catch {
        return (-1, error.code)
    }
}

/// The `session` and `seq` at the start of a workload line (`{"type":…,"session":"…","ts":…,"seq":N`).
func sessionAndSeq(_ line: [UInt8]) -> (session: String, seq: Int)? {
    guard let session = stringValue(after: Array(#""session":""#.utf8), in: line[...]),
        let seq = integerValue(after: Array(#""seq":"#.utf8), in: line[...])
    else { return nil }
    return (session, seq)
}

/// The characters up to the next `"` after the first `key` in `bytes`.
func stringValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> String? {
    guard let start = bytes.firstRange(of: key)?.upperBound else { return nil }
    guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
    return String(decoding: bytes[start..<end], as: UTF8.self)
}

/// The decimal number right after the first `key` in `bytes`.
func integerValue(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
    guard let start = bytes.firstRange(of: key)?.upperBound else { return nil }
    var value = 0
    var index = start
    while index < bytes.endIndex, bytes[index] >= 0x30, bytes[index] <= 0x39 {
        value = value &* 10 &+ Int(bytes[index] - 0x30)
        index += 1
    }
    return index > start ? value : nil
}
