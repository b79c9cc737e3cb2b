import NavlogEvents

/// Appends a row's values to a buffer as a JSON object or a CSV line.
struct ExportRowEncoder: SQLRowEncoder {
    var buffer: [UInt8]
    /// Per column: `{"name":` or `,"name":` for JSON; empty for CSV.
    let keys: [[UInt8]]
    let csv: Bool
    var column = 0

    @inline(__always)
    private mutating func separator() {
        if csv {
            if column > 0 { buffer.append(UInt8(ascii: ",")) }
        } else {
            buffer.append(contentsOf: keys[column])
        }
        column += 1
    }

    @inline(__always)
    mutating func integer(_ value: Int64) {
        separator()
        EventJSONWriter.appendInteger(value, to: &buffer)
    }

    @inline(__always)
    mutating func optionalInteger(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    @inline(__always)
    mutating func text(_ value: String) {
        separator()
        if csv {
            // "" is the empty string and \N is NULL, so both are quoted when they are values.
            if value.isEmpty || value == "\\N" {
                buffer.append(UInt8(ascii: "\""))
                buffer.append(contentsOf: value.utf8)
                buffer.append(UInt8(ascii: "\""))
            } else {
                appendCSVField(value, to: &buffer)
            }
        } else {
            EventJSONWriter.appendString(value, to: &buffer)
        }
    }

    @inline(__always)
    mutating func optionalText(_ value: String?) {
        if let value { text(value) } else { null() }
    }

    @inline(__always)
    mutating func boolean(_ value: Bool) {
        separator()
        buffer.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    @inline(__always)
    private mutating func null() {
        separator()
        buffer.append(contentsOf: csv ? "\\N".utf8 : "null".utf8)
    }

    /// Ends the row.
    @inline(__always)
    mutating func finish() {
        if !csv { buffer.append(UInt8(ascii: "}")) }
        buffer.append(UInt8(ascii: "\n"))
    }
}
