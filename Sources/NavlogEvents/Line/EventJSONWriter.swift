import NavlogJSON

/// How a stored event reads as JSON: the lines `navlog cat` prints, written with NavlogJSON's
/// ``JSONWriter``.
///
/// Field order: `type`, `session`, `ts`, `seq`, then the event's own fields as they were
/// received, then the trusted fields `_lsn`, `_recv`, `_uid`, `_gid`, `_pid`, and `_key` when a
/// trusted relay passed the event on with a key id.
public enum EventJSONWriter {
    /// The fixed and trusted fields of a stored event.
    public struct Envelope {
        /// The event type.
        public var type: EventType
        /// The session id bytes.
        public var session: UnsafeRawBufferPointer
        /// Event time, µs since the epoch.
        public var timestamp: Int64
        /// The client's sequence number, if any.
        public var sequence: UInt64?
        /// Log sequence number.
        public var lsn: UInt64
        /// Receive time, µs since the epoch.
        public var receivedAt: Int64
        /// Sender credentials.
        public var peer: PeerCredentials

        /// Creates an envelope.
        public init(type: EventType, session: UnsafeRawBufferPointer, timestamp: Int64, sequence: UInt64?, lsn: UInt64, receivedAt: Int64, peer: PeerCredentials) {
            self.type = type
            self.session = session
            self.timestamp = timestamp
            self.sequence = sequence
            self.lsn = lsn
            self.receivedAt = receivedAt
            self.peer = peer
        }
    }

    /// A stored body that does not decode (damaged data that passed its checksums).
    public struct MalformedBody: Error, Sendable {
        /// Where in the body decoding stopped.
        public var offset: Int
    }

    /// Appends one JSON object (no newline) for the event to `output`.
    /// - Throws: ``MalformedBody`` when the interned `body` is not well formed; `output` is then
    ///   left as it was.
    public static func write(
        _ envelope: Envelope,
        body: UnsafeRawBufferPointer,
        strings: StringTable,
        to output: inout [UInt8]
    ) throws(MalformedBody) {
        try JSONWriter.appending(to: &output) { (json: inout JSONWriter) throws(MalformedBody) in
            try write(envelope, body: body, strings: strings, to: &json)
        }
    }

    private static func write(_ envelope: Envelope, body: UnsafeRawBufferPointer, strings: StringTable, to json: inout JSONWriter) throws(MalformedBody) {
        let start = json.bytes.count
        json.raw(#"{"type":""#)
        json.raw(EventType.nameBytes[Int(envelope.type.rawValue)])
        json.raw(#"","session":"#)
        json.string(utf8: envelope.session)
        // Each fixed key is one literal, appended at once: this runs for every event `navlog cat`,
        // `tail` and `verify` read.
        json.raw(#","ts":"#)
        json.integer(envelope.timestamp)
        if let sequence = envelope.sequence {
            json.raw(#","seq":"#)
            json.integer(sequence)
        }
        var reader = ByteReader(body)
        do throws(MalformedBody) {
            guard reader.readByte() == BodyToken.object.rawValue, let count = reader.readCount(limit: body.count) else {
                throw MalformedBody(offset: reader.offset)
            }
            for _ in 0..<count {
                json.byte(UInt8(ascii: ","))
                try key(&reader, strings, &json)
                try value(&reader, strings, &json, depth: 0)
            }
            guard reader.isAtEnd else { throw MalformedBody(offset: reader.offset) }
        } catch {
            json.bytes.removeSubrange(start...)
            throw error
        }
        json.raw(#","_lsn":"#)
        json.integer(envelope.lsn)
        json.raw(#","_recv":"#)
        json.integer(envelope.receivedAt)
        json.raw(#","_uid":"#)
        json.integer(envelope.peer.uid)
        json.raw(#","_gid":"#)
        json.integer(envelope.peer.gid)
        json.raw(#","_pid":"#)
        json.integer(envelope.peer.pid)
        if !envelope.peer.relayKey.isNone {
            // A key id is letters, digits and `.`, `_`, `-`: nothing to escape.
            json.raw(#","_key":""#)
            json.raw(envelope.peer.relayKey.bytes)
            json.byte(UInt8(ascii: "\""))
        }
        json.byte(UInt8(ascii: "}"))
    }

    private static func key(_ reader: inout ByteReader, _ strings: StringTable, _ json: inout JSONWriter) throws(MalformedBody) {
        guard let tag = reader.readByte() else { throw MalformedBody(offset: reader.offset) }
        if tag == BodyToken.unknownKey {
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            json.string(utf8: text)
            json.byte(UInt8(ascii: ":"))
        } else {
            guard tag > 0, Int(tag) < FieldName.jsonKeys.count else { throw MalformedBody(offset: reader.offset) }
            json.raw(FieldName.jsonKeys[Int(tag)])
        }
    }

    private static func value(_ reader: inout ByteReader, _ strings: StringTable, _ json: inout JSONWriter, depth: Int) throws(MalformedBody) {
        guard depth < JSONTokenizer.maximumDepth, let tag = reader.readByte() else { throw MalformedBody(offset: reader.offset) }
        switch BodyToken(rawValue: tag) {
        case .object:
            guard let count = reader.readCount(limit: reader.remaining) else { throw MalformedBody(offset: reader.offset) }
            json.byte(UInt8(ascii: "{"))
            for index in 0..<count {
                if index > 0 { json.byte(UInt8(ascii: ",")) }
                try key(&reader, strings, &json)
                try value(&reader, strings, &json, depth: depth + 1)
            }
            json.byte(UInt8(ascii: "}"))
        case .array:
            guard let count = reader.readCount(limit: reader.remaining) else { throw MalformedBody(offset: reader.offset) }
            json.byte(UInt8(ascii: "["))
            for index in 0..<count {
                if index > 0 { json.byte(UInt8(ascii: ",")) }
                try value(&reader, strings, &json, depth: depth + 1)
            }
            json.byte(UInt8(ascii: "]"))
        case .string:
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            json.string(utf8: text)
        case .number:
            // The number's text as received (validated on ingest): kept to the digit.
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            json.raw(text)
        case .integer:
            guard let raw = reader.readVarint() else { throw MalformedBody(offset: reader.offset) }
            json.integer(Varint.unzigzag(raw))
        case .true: json.bool(true)
        case .false: json.bool(false)
        case .null: json.null()
        case nil: throw MalformedBody(offset: reader.offset - 1)
        }
    }
}
