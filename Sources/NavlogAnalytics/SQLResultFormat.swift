import NavlogJSON

/// How `navlog query sql` prints a result.
public enum SQLResultFormat: String, Sendable, CaseIterable {
    /// Aligned columns with a header line; numbers right-aligned, NULL empty.
    case table
    /// JSON Lines: one object per row, keys the column names, SQL types kept (INTEGER and REAL
    /// as numbers, TEXT as strings, BLOB as base64 strings, NULL as null).
    case json
    /// CSV with a header line, RFC 4180 quoting; NULL is an empty field, '' is `""`.
    case csv
}

/// Writes result rows as JSON Lines or CSV into a byte buffer, one row at a time.
public struct SQLResultWriter {
    /// The format (json or csv; table needs every row first: ``renderTable(columns:rows:)``).
    public let format: SQLResultFormat
    /// The column names.
    public let columns: [String]
    /// `"name":` for each column, rendered once.
    private let keys: [[UInt8]]

    /// A writer of rows with these columns.
    public init(format: SQLResultFormat, columns: [String]) {
        self.format = format
        self.columns = columns
        keys = columns.map { name in
            var key = JSONWriter()
            key.key(escaping: name, first: true)
            return key.bytes
        }
    }

    /// The CSV header line (empty for json).
    public func header(to output: inout [UInt8]) {
        guard format == .csv else { return }
        for (index, name) in columns.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendCSVField(name, to: &output)
        }
        output.append(UInt8(ascii: "\n"))
    }

    /// Appends one row.
    public func append(_ values: [SQLValue], to output: inout [UInt8]) {
        switch format {
        case .json:
            JSONWriter.appending(to: &output) { json in
                json.byte(UInt8(ascii: "{"))
                for (index, value) in values.enumerated() {
                    if index > 0 { json.byte(UInt8(ascii: ",")) }
                    json.raw(keys[index])
                    switch value {
                    case .null: json.null()
                    case .integer(let number): json.integer(number)
                    case .real(let number): json.number(number)
                    case .text(let text): json.string(text)
                    case .blob(let bytes): json.string(base64(bytes))
                    }
                }
                json.raw("}\n")
            }
        case .csv, .table:
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                switch value {
                case .null: break
                case .text(let text) where text.isEmpty: output.append(contentsOf: "\"\"".utf8)
                default: appendCSVField(Self.plain(value), to: &output)
                }
            }
            output.append(UInt8(ascii: "\n"))
        }
    }

    /// A value as plain text (NULL empty, BLOB base64).
    public static func plain(_ value: SQLValue) -> String {
        switch value {
        case .null: ""
        case .integer(let number): "\(number)"
        case .real(let number): "\(number)"
        case .text(let text): text
        case .blob(let bytes): base64(bytes)
        }
    }

    /// Aligned columns: a header line of the column names, then one line per row; columns whose
    /// values are all numbers (or NULL) are right-aligned; NULL is empty.
    public static func renderTable(columns: [String], rows: [[SQLValue]]) -> String {
        let cells = rows.map { $0.map(plain) }
        var widths = columns.map(\.count)
        var numeric = [Bool](repeating: true, count: columns.count)
        for (rowIndex, row) in cells.enumerated() {
            for (index, cell) in row.enumerated() {
                widths[index] = max(widths[index], cell.count)
                switch rows[rowIndex][index] {
                case .integer, .real, .null: break
                default: numeric[index] = false
                }
            }
        }
        func line(_ values: [String]) -> String {
            var text = ""
            for (index, value) in values.enumerated() {
                if index > 0 { text += "  " }
                let pad = String(repeating: " ", count: max(0, widths[index] - value.count))
                text += numeric[index] ? pad + value : value + pad
            }
            while text.last == " " { text.removeLast() }
            return text + "\n"
        }
        var text = line(columns)
        for row in cells { text += line(row) }
        return text
    }
}

/// Appends `text` as a CSV field: quoted (with `"` doubled) when it holds a comma, a quote, CR or LF.
func appendCSVField(_ text: String, to output: inout [UInt8]) {
    var needsQuotes = false
    for byte in text.utf8 where byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 0x0A || byte == 0x0D {
        needsQuotes = true
        break
    }
    guard needsQuotes else {
        output.append(contentsOf: text.utf8)
        return
    }
    output.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
        if byte == UInt8(ascii: "\"") { output.append(byte) }
        output.append(byte)
    }
    output.append(UInt8(ascii: "\""))
}

/// Standard base64 (with padding).
func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index + 2 < bytes.count {
        let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
        for shift in [18, 12, 6, 0] { output.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
        index += 3
    }
    let rest = bytes.count - index
    if rest > 0 {
        let value = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
        output.append(alphabet[Int(value >> 18 & 63)])
        output.append(alphabet[Int(value >> 12 & 63)])
        output.append(rest == 2 ? alphabet[Int(value >> 6 & 63)] : UInt8(ascii: "="))
        output.append(UInt8(ascii: "="))
    }
    return String(decoding: output, as: UTF8.self)
}
