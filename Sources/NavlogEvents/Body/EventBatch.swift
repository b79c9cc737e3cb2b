/// Validated events waiting to be appended to the log, in the order they were accepted.
///
/// A batch owns all of its bytes (sessions and bodies in one arena), so it can cross from a
/// connection to the log writer, and it is reused: ``removeAll()`` keeps its capacity, so a
/// steady stream of events causes no per-event allocation.
public struct EventBatch: Sendable {
    /// The fixed fields of one accepted event.
    public struct Header: Sendable, Hashable {
        /// The event type.
        public var type: EventType
        /// Device time in µs since the epoch (the receive time when the client gave none).
        public var timestamp: Int64
        /// Whether `ts` was absent and ``timestamp`` is the receive time.
        public var timestampWasMissing: Bool
        /// The client's per-session sequence number, if it sent one.
        public var sequence: UInt64?
        /// Trusted: when navlog received the event, µs since the epoch.
        public var receivedAt: Int64
        /// Trusted: who sent it.
        public var peer: PeerCredentials
        /// The line number the event came from (connection or file), for reports.
        public var sourceLine: Int
        /// Where the session id's bytes are in ``EventBatch/bytes``.
        public var session: Range<Int>
        /// ``StringHash`` of the session id, computed once when the event is accepted (on the
        /// connection's thread): dedupe, the block's string table and its session filter all
        /// key on it, and the single writer thread need not hash the id again for each.
        public var sessionHash: UInt64
        /// Where the body (one inline-form object token) is in ``EventBatch/bytes``.
        public var body: Range<Int>
    }

    /// One header per event.
    public internal(set) var headers: [Header] = []
    /// Session ids and inline-form bodies of every event.
    public internal(set) var bytes: [UInt8] = []

    /// Creates an empty batch.
    public init() {}

    /// The number of events.
    public var count: Int { headers.count }

    /// Whether the batch holds no event.
    public var isEmpty: Bool { headers.isEmpty }

    /// Reserves room for about `events` events and `bytes` bytes, so filling the batch does
    /// not regrow its storage again and again.
    public mutating func reserveCapacity(events: Int, bytes: Int) {
        headers.reserveCapacity(events)
        self.bytes.reserveCapacity(bytes)
    }

    /// Forgets every event but keeps the storage for reuse.
    public mutating func removeAll() {
        headers.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the session id bytes of event `index`.
    public func withSession<R>(of index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let range = headers[index].session
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// The session id of event `index` as a string (allocates; for tests and reports).
    public func session(of index: Int) -> String {
        withSession(of: index) { String(decoding: $0, as: UTF8.self) }
    }

    /// Drops the newest event (its bytes are the arena's tail).
    public mutating func removeLast() {
        let header = headers.removeLast()
        bytes.removeSubrange(min(header.session.lowerBound, header.body.lowerBound)...)
    }

    mutating func appendHeader(_ header: Header) {
        headers.append(header)
    }

    mutating func appendBytes(_ source: UnsafeRawBufferPointer) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: source)
        return start..<bytes.count
    }
}

extension EventBatch {
    /// Appends an event already stored once (log compaction stores it again): `session` is its
    /// id, `inlineBody` its body in the inline form (``BodyTranscoder/inline(_:strings:appendingTo:)``).
    public mutating func appendStored(
        type: EventType, timestamp: Int64, timestampWasMissing: Bool, sequence: UInt64?, receivedAt: Int64, peer: PeerCredentials,
        session: UnsafeRawBufferPointer, inlineBody: UnsafeRawBufferPointer
    ) {
        let sessionRange = appendBytes(session)
        let bodyRange = appendBytes(inlineBody)
        appendHeader(
            Header(
                type: type, timestamp: timestamp, timestampWasMissing: timestampWasMissing, sequence: sequence, receivedAt: receivedAt, peer: peer,
                sourceLine: 0, session: sessionRange, sessionHash: StringHash.hash(session), body: bodyRange))
    }

    /// Appends event `index` of `other` (header and bytes) to this batch.
    public mutating func append(_ index: Int, of other: EventBatch) {
        var header = other.headers[index]
        other.bytes.withUnsafeBytes { raw in
            header.session = appendBytes(UnsafeRawBufferPointer(rebasing: raw[header.session]))
            header.body = appendBytes(UnsafeRawBufferPointer(rebasing: raw[header.body]))
        }
        headers.append(header)
    }
}
