/// What `navlog intake` listens on, where it relays to, and what a request may cost.
public struct IntakeConfiguration: Sendable {
    /// navlogd's socket.
    public var socketPath: String
    /// The address to listen on.
    public var host: String
    /// The port (0: any free one, announced when listening).
    public var port: Int
    /// The key file (`--keys`).
    public var keysPath: String
    /// PEM certificate chain and private key for TLS; nil: plain HTTP (behind a TLS proxy, or
    /// on loopback).
    public var tlsCertificatePath: String?
    /// The private key for ``tlsCertificatePath``.
    public var tlsKeyPath: String?
    /// Peers whose `X-Forwarded-For` is believed (a TLS-terminating proxy in front).
    public var trustedProxies: [String] = []

    /// The most bytes a body may have as sent.
    public var maximumBodyBytes = 8 << 20
    /// The most bytes a body may have once decoded.
    public var maximumDecodedBytes = 32 << 20
    /// The longest line, as navlogd's `maximumLineBytes` (a longer one is refused with 413).
    public var maximumLineBytes = 64 << 10
    /// The highest decoded/encoded ratio once the body passes 1 MiB decoded (gzip and zstd of
    /// navigation JSON Lines reach 10–40×).
    public var maximumCompressionRatio = 200

    /// Events per second per key (a key's `eventsPerSecond` overrides it); 0: no limit.
    public var keyEventsPerSecond: Double = 50_000
    /// Burst per key, in events.
    public var keyBurst: Double = 100_000
    /// Events per second per client address; 0: no limit.
    public var addressEventsPerSecond: Double = 2_000
    /// Burst per client address, in events.
    public var addressBurst: Double = 20_000

    /// Connections to navlogd (each carries one request's body at a time).
    public var relayConnections = 32
    /// Requests that may wait for a navlogd connection before the intake answers 503.
    public var maximumWaitingRequests = 4_096
    /// How long navlogd may take to acknowledge a body durably.
    public var relayTimeoutSeconds: Double = 30

    /// A keep-alive connection with no request for this long is closed.
    public var idleTimeoutSeconds: Double = 75
    /// A request's head must arrive whole within this time of its first byte.
    public var headTimeoutSeconds: Double = 10
    /// A request's body must arrive whole within this time of its head.
    public var bodyTimeoutSeconds: Double = 60

    /// Where `/metrics` (Prometheus's text format) is served; nil: nowhere. Loopback only.
    public var metricsHost: String?
    /// The port of ``metricsHost``.
    public var metricsPort = 9478

    /// `Retry-After` when navlogd cannot be reached or cannot store.
    public var unavailableRetryAfterSeconds = 5

    /// A configuration with the required settings; the rest have their defaults.
    public init(socketPath: String, host: String, port: Int, keysPath: String) {
        self.socketPath = socketPath
        self.host = host
        self.port = port
        self.keysPath = keysPath
    }
}
