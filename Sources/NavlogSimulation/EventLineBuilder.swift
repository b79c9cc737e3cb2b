import NavlogEvents

/// Writes one event line (events.md) field by field, escaping strings with the codec's writer.
struct EventLineBuilder {
    private(set) var bytes: [UInt8] = []
    private var hasFields = false

    /// Starts an event of `type`.
    init(type: String, session: String, sequence: UInt64?, timestamp: Int64) {
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
        string("type", type)
        string("session", session)
        if let sequence { integer("seq", Int64(sequence)) }
        integer("ts", timestamp)
    }

    private mutating func key(_ name: StaticString) {
        if hasFields { bytes.append(UInt8(ascii: ",")) }
        hasFields = true
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: "\":".utf8)
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        EventJSONWriter.appendString(value, to: &bytes)
    }

    mutating func integer(_ name: StaticString, _ value: Int64) {
        key(name)
        EventJSONWriter.appendInteger(value, to: &bytes)
    }

    mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A value already written as JSON.
    mutating func json(_ name: StaticString, _ value: [UInt8]) {
        key(name)
        bytes.append(contentsOf: value)
    }

    /// The line, `\n` included.
    mutating func finish() -> [UInt8] {
        bytes.append(contentsOf: "}\n".utf8)
        return bytes
    }

}
