/// How `navlog serve` runs: what it reads, where it listens, who may look.
public struct ViewerConfiguration: Sendable {
    /// The data directory of the log (read only).
    public var dataDirectory: String
    /// Where the replay index is kept (default `<data>/replay`).
    public var indexDirectory: String?
    /// The address to listen on.
    public var host: String
    /// The TCP port (0: any free port; the one chosen is announced).
    public var port: Int
    /// The secret a non-loopback listener requires (bearer header, or the cookie the one-time
    /// login link sets). Nil: no check, allowed on loopback only.
    public var token: String?
    /// Storyboard files of the app, for the storyboard page.
    public var storyboards: [String]

    /// A configuration; see the properties.
    public init(dataDirectory: String, indexDirectory: String? = nil, host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, storyboards: [String] = []) {
        self.dataDirectory = dataDirectory
        self.indexDirectory = indexDirectory
        self.host = host
        self.port = port
        self.token = token
        self.storyboards = storyboards
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost): only this machine
    /// can connect.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }

    /// Parses `HOST:PORT` (`[::1]:8080` for IPv6) or a bare port.
    /// - Returns: nil when it is neither.
    public static func parseListen(_ text: String) -> (host: String, port: Int)? {
        if let port = Int(text), (0...65535).contains(port) { return ("127.0.0.1", port) }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }
}
