import NavlogEvents

/// A place where a JSON value is not valid JSON.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset in the value where reading stopped.
    public var offset: Int
    /// What was wrong, as a phrase ("expected ':' after a key").
    public var reason: String

    /// The reason.
    public var description: String { reason }
}

extension JSONDocument {
    /// The deepest nesting read; deeper values are refused rather than recursed into.
    public static let maximumDepth = 256

    /// Reads `bytes` as one JSON value (RFC 8259; white space around it allowed).
    /// - Throws: ``JSONSyntaxError`` with the offset of the first byte that does not fit.
    public init(parsing bytes: [UInt8]) throws(JSONSyntaxError) {
        var table: [Entry] = []
        let failure: JSONSyntaxError? = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONSyntaxError) {
                _ = try Self.read(buffer, from: 0, into: &table, at: 0)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        self.init(bytes: bytes, entries: table, byteStart: 0, rootIndex: 0)
    }

    /// Reads the JSON value that runs from `start` to the end of `buffer` into `table` from
    /// index `first` on: its nodes' offsets are `buffer`'s, their indexes `table`'s, so that
    /// many records can share one byte array and one table (``RecordReader`` does).
    ///
    /// Nodes are written through a pointer, with no check per node but that the table has
    /// room; when it has none, the table grows and the value is read again.
    /// - Returns: the index past the value's last node.
    /// - Throws: ``JSONSyntaxError`` with the offset from `start` of the first byte that does not fit.
    static func read(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, into table: inout [Entry], at first: Int) throws(JSONSyntaxError) -> Int {
        let blank = Entry(kind: .null, escaped: false, flag: false, start: 0, end: 0, next: 0)
        // About one node per eight bytes in the sources' records.
        let expected = first + (buffer.count - start) / 8 + 16
        if table.count < expected { table.append(contentsOf: repeatElement(blank, count: expected - table.count)) }
        while true {
            var reader = Reader()
            reader.buffer = buffer
            reader.position = start
            reader.count = first
            let failure: JSONSyntaxError? = table.withUnsafeMutableBufferPointer { nodes in
                reader.table = nodes
                do throws(JSONSyntaxError) {
                    reader.skipSpace()
                    try reader.value(depth: 0)
                    reader.skipSpace()
                    if reader.position < buffer.count { throw JSONSyntaxError(offset: reader.position, reason: "unexpected text after the JSON value") }
                    return nil
                } catch {
                    return error
                }
            }
            guard let failure else { return reader.count }
            guard reader.tableFull else { throw JSONSyntaxError(offset: failure.offset - start, reason: failure.reason) }
            table.append(contentsOf: repeatElement(blank, count: table.count))
        }
    }

    /// A single pass over the bytes that appends nodes.
    private struct Reader {
        var buffer: UnsafeBufferPointer<UInt8>
        var position = 0
        /// Where the nodes go, and how many there are.
        var table: UnsafeMutableBufferPointer<Entry>
        var count = 0
        /// Set when the table had no room for a node: the record is read again with a larger one.
        var tableFull = false

        init() {
            buffer = UnsafeBufferPointer(start: nil, count: 0)
            table = UnsafeMutableBufferPointer(start: nil, count: 0)
        }

        /// Adds a node, unless the table is full (then reading stops).
        @inline(__always)
        mutating func append(_ entry: Entry) throws(JSONSyntaxError) {
            guard count < table.count else {
                tableFull = true
                throw JSONSyntaxError(offset: position, reason: "the node table is full")
            }
            table[count] = entry
            count += 1
        }

        mutating func skipSpace() {
            while position < buffer.count {
                switch buffer[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        func fail(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: position, reason: reason) }

        /// After a member or element: true past a `,` (another follows), false past `closing`
        /// (the container ends); anything else is an error naming `container` (`object` or `array`).
        mutating func moreFollow(closing: UInt8, in container: String) throws(JSONSyntaxError) -> Bool {
            skipSpace()
            guard position < buffer.count else { throw fail("the \(container) ends too early (a truncated record?)") }
            let byte = buffer[position]
            guard byte == UInt8(ascii: ",") || byte == closing else {
                throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))' in an \(container)")
            }
            position += 1
            return byte == UInt8(ascii: ",")
        }

        mutating func value(depth: Int) throws(JSONSyntaxError) {
            guard position < buffer.count else { throw fail("the value ends too early (a truncated record?)") }
            guard depth < JSONDocument.maximumDepth else { throw fail("values nested deeper than \(JSONDocument.maximumDepth) levels") }
            let index = count
            let start = Int32(position)
            switch buffer[position] {
            case UInt8(ascii: "{"):
                try append(Entry(kind: .object, escaped: false, flag: false, start: start, end: start, next: 0))
                position += 1
                skipSpace()
                if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
                    position += 1
                } else {
                    repeat {
                        skipSpace()
                        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else { throw fail("expected a key in quotes") }
                        try string()
                        skipSpace()
                        guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                        position += 1
                        skipSpace()
                        try value(depth: depth + 1)
                    } while try moreFollow(closing: UInt8(ascii: "}"), in: "object")
                }
            case UInt8(ascii: "["):
                try append(Entry(kind: .array, escaped: false, flag: false, start: start, end: start, next: 0))
                position += 1
                skipSpace()
                if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
                    position += 1
                } else {
                    repeat {
                        skipSpace()
                        try value(depth: depth + 1)
                    } while try moreFollow(closing: UInt8(ascii: "]"), in: "array")
                }
            case UInt8(ascii: "\""):
                try string()
                return
            case UInt8(ascii: "t"):
                try literal("true")
                try append(Entry(kind: .bool, escaped: false, flag: true, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "f"):
                try literal("false")
                try append(Entry(kind: .bool, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "n"):
                try literal("null")
                try append(Entry(kind: .null, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
                try append(Entry(kind: .number, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            default:
                throw fail("expected a JSON value")
            }
            table[index].end = Int32(position)
            table[index].next = Int32(count)
        }

        mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
            let count = word.utf8CodeUnitCount
            guard position + count <= buffer.count else { throw fail("the value ends too early (a truncated record?)") }
            for offset in 0..<count where buffer[position + offset] != word.utf8Start[offset] { throw fail("expected a JSON value") }
            position += count
        }

        mutating func number() throws(JSONSyntaxError) {
            if buffer[position] == UInt8(ascii: "-") { position += 1 }
            func digits() -> Int {
                let first = position
                while position < buffer.count, buffer[position] >= 0x30, buffer[position] <= 0x39 { position += 1 }
                return position - first
            }
            guard position < buffer.count else { throw fail("a number ends too early") }
            if buffer[position] == UInt8(ascii: "0") {
                position += 1
            } else if digits() == 0 {
                throw fail("expected a digit")
            }
            if position < buffer.count, buffer[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { throw fail("expected a digit after '.'") }
            }
            if position < buffer.count, buffer[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < buffer.count, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") { position += 1 }
                guard digits() > 0 else { throw fail("expected a digit in an exponent") }
            }
        }

        mutating func string() throws(JSONSyntaxError) {
            position += 1
            let start = position
            var escaped = false
            // Called at a quote, so the buffer has a base address.
            let base = buffer.baseAddress!
            while true {
                // Plain content is skipped eight bytes at a time (the scan the ingest path uses).
                position = JSONStringScan.endOfPlainRun(base, from: position, to: buffer.count)
                guard position < buffer.count else { throw fail("a string ends too early (a truncated record?)") }
                let byte = buffer[position]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { throw fail("a control character inside a string") }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    position += 1
                    guard position < buffer.count else { throw fail("a string ends too early (a truncated record?)") }
                    switch buffer[position] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    case UInt8(ascii: "u"):
                        guard position + 4 < buffer.count else { throw fail("a \\u escape ends too early") }
                        for offset in 1...4 where JSONDocument.hexValue(buffer[position + offset]) == nil { throw fail("a \\u escape needs four hex digits") }
                        position += 4
                    default:
                        throw fail("an unknown escape in a string")
                    }
                }
                position += 1
            }
            let index = count
            try append(Entry(kind: .string, escaped: escaped, flag: false, start: Int32(start), end: Int32(position), next: Int32(index + 1)))
            position += 1
        }
    }

    /// The value of a hex digit, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        case 0x61...0x66: UInt32(byte - 0x61 + 10)
        default: nil
        }
    }
}
