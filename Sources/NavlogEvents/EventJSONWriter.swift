/// Writes stored events back as JSON Lines (what `navlog cat` prints).
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
        let start = output.count
        output.append(contentsOf: #"{"type":""#.utf8)
        output.append(contentsOf: EventType.nameBytes[Int(envelope.type.rawValue)])
        output.append(contentsOf: #"","session":"#.utf8)
        appendString(envelope.session, to: &output)
        output.append(contentsOf: #","ts":"#.utf8)
        appendInteger(envelope.timestamp, to: &output)
        if let sequence = envelope.sequence {
            output.append(contentsOf: #","seq":"#.utf8)
            appendUnsigned(sequence, to: &output)
        }
        var reader = ByteReader(body)
        do throws(MalformedBody) {
            guard reader.readByte() == BodyToken.object.rawValue, let count = reader.readCount(limit: body.count) else {
                throw MalformedBody(offset: reader.offset)
            }
            for _ in 0..<count {
                output.append(UInt8(ascii: ","))
                try key(&reader, strings, &output)
                try value(&reader, strings, &output, depth: 0)
            }
            guard reader.isAtEnd else { throw MalformedBody(offset: reader.offset) }
        } catch {
            output.removeSubrange(start...)
            throw error
        }
        output.append(contentsOf: #","_lsn":"#.utf8)
        appendUnsigned(envelope.lsn, to: &output)
        output.append(contentsOf: #","_recv":"#.utf8)
        appendInteger(envelope.receivedAt, to: &output)
        output.append(contentsOf: #","_uid":"#.utf8)
        appendUnsigned(UInt64(envelope.peer.uid), to: &output)
        output.append(contentsOf: #","_gid":"#.utf8)
        appendUnsigned(UInt64(envelope.peer.gid), to: &output)
        output.append(contentsOf: #","_pid":"#.utf8)
        appendInteger(Int64(envelope.peer.pid), to: &output)
        if !envelope.peer.relayKey.isNone {
            // A key id is letters, digits and `.`, `_`, `-`: nothing to escape.
            output.append(contentsOf: #","_key":""#.utf8)
            output.append(contentsOf: envelope.peer.relayKey.bytes)
            output.append(UInt8(ascii: "\""))
        }
        output.append(UInt8(ascii: "}"))
    }

    private static func key(_ reader: inout ByteReader, _ strings: StringTable, _ output: inout [UInt8]) throws(MalformedBody) {
        guard let tag = reader.readByte() else { throw MalformedBody(offset: reader.offset) }
        if tag == BodyToken.unknownKey {
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            appendString(text, to: &output)
            output.append(UInt8(ascii: ":"))
        } else {
            guard tag > 0, Int(tag) < FieldName.jsonKeys.count else { throw MalformedBody(offset: reader.offset) }
            output.append(contentsOf: FieldName.jsonKeys[Int(tag)])
        }
    }

    private static func value(_ reader: inout ByteReader, _ strings: StringTable, _ output: inout [UInt8], depth: Int) throws(MalformedBody) {
        guard depth < JSONTokenizer.maximumDepth, let tag = reader.readByte() else { throw MalformedBody(offset: reader.offset) }
        switch BodyToken(rawValue: tag) {
        case .object:
            guard let count = reader.readCount(limit: reader.remaining) else { throw MalformedBody(offset: reader.offset) }
            output.append(UInt8(ascii: "{"))
            for index in 0..<count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try key(&reader, strings, &output)
                try value(&reader, strings, &output, depth: depth + 1)
            }
            output.append(UInt8(ascii: "}"))
        case .array:
            guard let count = reader.readCount(limit: reader.remaining) else { throw MalformedBody(offset: reader.offset) }
            output.append(UInt8(ascii: "["))
            for index in 0..<count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try value(&reader, strings, &output, depth: depth + 1)
            }
            output.append(UInt8(ascii: "]"))
        case .string:
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            appendString(text, to: &output)
        case .number:
            guard let ref = reader.readVarint(), let text = strings[Int(truncatingIfNeeded: ref)] else { throw MalformedBody(offset: reader.offset) }
            output.append(contentsOf: text)
        case .integer:
            guard let raw = reader.readVarint() else { throw MalformedBody(offset: reader.offset) }
            appendInteger(Varint.unzigzag(raw), to: &output)
        case .true: output.append(contentsOf: "true".utf8)
        case .false: output.append(contentsOf: "false".utf8)
        case .null: output.append(contentsOf: "null".utf8)
        case nil: throw MalformedBody(offset: reader.offset - 1)
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `text` as a quoted JSON string (its UTF-8 read in place when contiguous).
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ appendString(UnsafeRawBufferPointer($0), to: &output) }) {
            return done
        }
        var copy = text
        copy.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &output) }
    }

    /// Appends `bytes` as a quoted JSON string, escaping what JSON requires.
    public static func appendString(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<bytes.count {
            let b = bytes[index]
            guard b < 0x20 || b == 0x22 || b == 0x5C else { continue }
            if index > runStart { output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            switch b {
            case 0x22: output.append(contentsOf: [0x5C, 0x22] as [UInt8])
            case 0x5C: output.append(contentsOf: [0x5C, 0x5C] as [UInt8])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")] as [UInt8])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")] as [UInt8])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")] as [UInt8])
            default:
                output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]] as [UInt8])
            }
            runStart = index + 1
        }
        if bytes.count > runStart { output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends a signed integer in decimal.
    public static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            appendUnsigned(value == .min ? UInt64(Int64.max) + 1 : UInt64(-value), to: &output)
        } else {
            appendUnsigned(UInt64(value), to: &output)
        }
    }

    /// Appends an unsigned integer in decimal.
    public static func appendUnsigned(_ value: UInt64, to output: inout [UInt8]) {
        if value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 24 digit bytes, no heap
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[23 - count] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
                count += 1
            }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }
}
