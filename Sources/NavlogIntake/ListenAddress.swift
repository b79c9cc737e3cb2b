/// An address to listen on: `HOST:PORT`, `[::1]:PORT` for IPv6, or a bare port (on 127.0.0.1).
public struct ListenAddress: Sendable, Equatable {
    /// The host, without brackets.
    public var host: String
    /// The port (0: any free one).
    public var port: Int

    /// Parses `text`; nil when it is none of the accepted forms.
    public init?(_ text: String) {
        if let port = Int(text) {
            guard (0...65_535).contains(port) else { return nil }
            self.host = "127.0.0.1"
            self.port = port
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { return nil }
        var host = Substring(text[..<colon])
        if host.first == "[" && host.last == "]" { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// Whether only this machine can reach it (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        return octets.count == 4 && octets[0] == 127 && host.split(separator: ".", omittingEmptySubsequences: false).count == 4
    }
}
