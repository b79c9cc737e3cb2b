/// The optional first line of a connection: `{"hello":1,"client":"...","ack":"none|batch|durable"}`.
public struct HelloLine: Sendable, Hashable {
    /// When the daemon acknowledges a client's events.
    public enum AckMode: String, Sendable, CaseIterable {
        /// No acknowledgements; only rejections are reported.
        case none
        /// Acknowledged once the events are in the log.
        case batch
        /// Acknowledged once the events are fsynced.
        case durable
    }

    /// The hello's protocol number (the value of `hello`).
    public var version: Int64
    /// The client's self-description, if given.
    public var client: String?
    /// The requested acknowledgement mode (`none` when absent).
    public var ack: AckMode

    /// Creates a hello.
    public init(version: Int64 = 1, client: String? = nil, ack: AckMode = .none) {
        self.version = version
        self.client = client
        self.ack = ack
    }
}
