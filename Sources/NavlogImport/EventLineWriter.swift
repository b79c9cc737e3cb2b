import NavlogEvents

/// Writes navlog event lines (events.md) as JSON text, one object at a time.
///
/// The bytes are written into a buffer the caller hands over and takes back
/// (``init(reusing:type:session:timestamp:sequence:)``, ``finished()``), so writing a session's
/// lines allocates once, not once per line and nested object.
struct EventLineWriter {
    /// The line being written.
    private(set) var bytes: [UInt8] = []

    /// Starts a line with its envelope in `buffer`'s storage (`buffer` is left empty until
    /// ``finished()`` gives the line back).
    init(reusing buffer: inout [UInt8], type: StaticString, session: String, timestamp: Int64, sequence: UInt64) {
        swap(&bytes, &buffer)
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
        key("type", first: true)
        Self.quote(type, into: &bytes)
        key("session")
        Self.quote(session, into: &bytes)
        integer("ts", timestamp)
        integer("seq", Int64(sequence))
    }

    /// Writes `,"name":` (without the comma for the first member of an object).
    private mutating func key(_ name: StaticString, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        Self.quote(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Adds `"name":"value"`.
    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        Self.quote(value, into: &bytes)
    }

    /// Adds `"name":"value"` for a value known when the program is built.
    mutating func string(_ name: StaticString, _ value: StaticString) {
        key(name)
        Self.quote(value, into: &bytes)
    }

    /// Adds `"name":value` for an integer.
    mutating func integer(_ name: StaticString, _ value: Int64) {
        key(name)
        Self.decimal(value, into: &bytes)
    }

    /// Adds a controller reference `{"id":…,"class":…,"title":…}`.
    mutating func controller(_ name: StaticString, _ controller: ImportedController) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        key("id", first: true)
        Self.quote(controller.id, into: &bytes)
        string("class", controller.className)
        if let title = controller.title, !title.isEmpty { string("title", title) }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Adds an object of string values (a mark's `props`).
    mutating func stringObject(_ name: StaticString, _ pairs: KeyValuePairs<StaticString, String>) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in pairs {
            key(name, first: first)
            first = false
            Self.quote(value, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// The finished line, without its newline.
    mutating func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        var line: [UInt8] = []
        swap(&line, &bytes)
        return line
    }

    /// Appends the decimal digits of `value`.
    static func decimal(_ value: Int64, into bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    /// Appends a name known when the program is built (no escapes in it) as a JSON string.
    static func quote(_ text: StaticString, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` as a JSON string.
    static func quote(_ text: String, into bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            // Most strings need no escape: copied whole.
            guard let base = utf8.baseAddress, JSONStringScan.endOfPlainRun(base, from: 0, to: utf8.count) < utf8.count else {
                bytes.append(contentsOf: utf8)
                bytes.append(UInt8(ascii: "\""))
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
