import NavlogJSON

/// Appends a row's values to a buffer as a JSON object or a CSV line.
struct ExportRowEncoder: SQLRowEncoder {
    /// The partition's buffer (CSV fields are appended to its bytes).
    var output: JSONWriter
    /// Per column: `{"name":` or `,"name":` for JSON; empty for CSV.
    let keys: [[UInt8]]
    let csv: Bool
    var column = 0

    @inline(__always)
    private mutating func separator() {
        if csv {
            if column > 0 { output.byte(UInt8(ascii: ",")) }
        } else {
            output.raw(keys[column])
        }
        column += 1
    }

    @inline(__always)
    mutating func integer(_ value: Int64) {
        separator()
        output.integer(value)
    }

    @inline(__always)
    mutating func text(_ value: String) {
        separator()
        if csv {
            // "" is the empty string and \N is NULL, so both are quoted when they are values.
            if value.isEmpty || value == "\\N" {
                output.byte(UInt8(ascii: "\""))
                output.raw(value.utf8)
                output.byte(UInt8(ascii: "\""))
            } else {
                appendCSVField(value, to: &output.bytes)
            }
        } else {
            output.string(value)
        }
    }

    @inline(__always)
    mutating func boolean(_ value: Bool) {
        separator()
        output.bool(value)
    }

    @inline(__always)
    mutating func null() {
        separator()
        if csv { output.raw("\\N") } else { output.null() }
    }

    /// Ends the row.
    @inline(__always)
    mutating func finish() {
        if !csv { output.byte(UInt8(ascii: "}")) }
        output.byte(UInt8(ascii: "\n"))
    }
}
