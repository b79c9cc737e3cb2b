import NavlogEvents

/// A JSON document written straight into bytes: the viewer's answers are built without
/// Foundation's encoder (no intermediate objects per row).
struct JSONBuffer {
    var bytes: [UInt8] = []

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func raw(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    mutating func string(_ text: String) { EventJSONWriter.appendString(text, to: &bytes) }

    mutating func string(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    mutating func number<N: BinaryInteger>(_ value: N?) {
        if let value { raw("\(value)") } else { raw("null") }
    }

    mutating func number(_ value: Double) {
        raw(value.isFinite ? "\(value)" : "null")
    }

    mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// `"name":` preceded by a comma unless it opens the object.
    mutating func key(_ name: String, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes `items` as an array, each by `write`.
    mutating func array<Items: Sequence>(_ items: Items, _ write: (inout JSONBuffer, Items.Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for item in items {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(&self, item)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
