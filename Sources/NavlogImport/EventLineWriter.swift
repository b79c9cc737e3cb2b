/// Writes navlog event lines (events.md) as JSON text, one object at a time.
struct EventLineWriter {
    /// The line being written.
    private(set) var bytes: [UInt8] = []
    private var first = true

    /// Starts a line with its envelope.
    init(type: String, session: String, timestamp: Int64, sequence: UInt64) {
        bytes.reserveCapacity(160)
        bytes.append(UInt8(ascii: "{"))
        string("type", type)
        string("session", session)
        integer("ts", timestamp)
        integer("seq", Int64(sequence))
    }

    private mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        Self.quote(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Adds `"name":"value"`.
    mutating func string(_ name: String, _ value: String) {
        key(name)
        Self.quote(value, into: &bytes)
    }

    /// Adds `"name":value` for an integer.
    mutating func integer(_ name: String, _ value: Int64) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Adds `"name":true|false`.
    mutating func bool(_ name: String, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Adds a controller reference `{"id":…,"class":…,"title":…}`.
    mutating func controller(_ name: String, _ controller: ImportedController) {
        key(name)
        var inner = EventLineWriter.Object()
        inner.string("id", controller.id)
        inner.string("class", controller.className)
        if let title = controller.title, !title.isEmpty { inner.string("title", title) }
        bytes.append(contentsOf: inner.finished())
    }

    /// Adds an object of string values (a mark's `props`).
    mutating func stringObject(_ name: String, _ pairs: [(String, String)]) {
        key(name)
        var inner = EventLineWriter.Object()
        for (key, value) in pairs { inner.string(key, value) }
        bytes.append(contentsOf: inner.finished())
    }

    /// The finished line, without its newline.
    mutating func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// A nested object of string members.
    struct Object {
        private var bytes: [UInt8] = [UInt8(ascii: "{")]

        mutating func string(_ name: String, _ value: String) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            EventLineWriter.quote(name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            EventLineWriter.quote(value, into: &bytes)
        }

        mutating func finished() -> [UInt8] {
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }
    }

    /// Appends `text` as a JSON string.
    static func quote(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: copied whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
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
