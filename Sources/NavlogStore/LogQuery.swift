public import NavlogEvents

/// Which events a read wants. Every filter narrows; an empty query reads everything.
public struct LogQuery: Sendable, Hashable {
    /// Only this session.
    public var session: String?
    /// Only events with `ts ≥ since` (µs).
    public var since: Int64?
    /// Only events with `ts ≤ until` (µs).
    public var until: Int64?
    /// Only these types (all when `nil`).
    public var types: Set<EventType>?
    /// Only events with LSN ≥ this.
    public var fromLSN: UInt64?
    /// Whether the visitor reads event bodies (true by default). False for one that reads only
    /// what every event has beside its body (type, times, LSN, `seq`, session: through
    /// ``DecodedBlock/withSession(_:_:)``): the blocks are then decoded without locating their
    /// bodies, which is about a fifth of a full scan, and a body read traps.
    public var readsBodies = true

    /// Creates a query.
    public init(session: String? = nil, since: Int64? = nil, until: Int64? = nil, types: Set<EventType>? = nil, fromLSN: UInt64? = nil) {
        self.session = session
        self.since = since
        self.until = until
        self.types = types
        self.fromLSN = fromLSN
    }
}
