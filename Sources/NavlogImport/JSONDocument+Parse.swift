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
        var spare: [Entry] = []
        try self.init(parsing: bytes, reusing: &spare)
    }

    /// ``init(parsing:)`` into the storage of `spare` (a node table handed back by
    /// ``recycle(into:)``), so that a stream of records does not allocate a table per record.
    init(parsing bytes: [UInt8], reusing spare: inout [Entry]) throws(JSONSyntaxError) {
        self.bytes = bytes
        swap(&entries, &spare)
        entries.removeAll(keepingCapacity: true)
        entries.reserveCapacity(bytes.count / 8 + 4)
        var reader = Reader()
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) in
            reader.buffer = buffer
            reader.skipSpace()
            try reader.value(into: &entries, depth: 0)
            reader.skipSpace()
            if reader.position < buffer.count { throw JSONSyntaxError(offset: reader.position, reason: "unexpected text after the JSON value") }
        }
    }

    /// Hands the node table's storage to `spare` for the next record (it is reused only if
    /// nothing else holds this document).
    consuming func recycle(into spare: inout [Entry]) {
        swap(&entries, &spare)
    }

    /// A single pass over the bytes that appends nodes.
    private struct Reader {
        var buffer: UnsafeBufferPointer<UInt8>
        var position = 0

        init() { buffer = UnsafeBufferPointer(start: nil, count: 0) }

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

        mutating func value(into entries: inout [Entry], depth: Int) throws(JSONSyntaxError) {
            guard position < buffer.count else { throw fail("the value ends too early (a truncated record?)") }
            guard depth < JSONDocument.maximumDepth else { throw fail("values nested deeper than \(JSONDocument.maximumDepth) levels") }
            let index = entries.count
            let start = Int32(position)
            switch buffer[position] {
            case UInt8(ascii: "{"):
                entries.append(Entry(kind: .object, escaped: false, flag: false, start: start, end: start, next: 0))
                position += 1
                skipSpace()
                if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
                    position += 1
                } else {
                    repeat {
                        skipSpace()
                        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else { throw fail("expected a key in quotes") }
                        try string(into: &entries)
                        skipSpace()
                        guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else { throw fail("expected ':' after a key") }
                        position += 1
                        skipSpace()
                        try value(into: &entries, depth: depth + 1)
                    } while try moreFollow(closing: UInt8(ascii: "}"), in: "object")
                }
            case UInt8(ascii: "["):
                entries.append(Entry(kind: .array, escaped: false, flag: false, start: start, end: start, next: 0))
                position += 1
                skipSpace()
                if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
                    position += 1
                } else {
                    repeat {
                        skipSpace()
                        try value(into: &entries, depth: depth + 1)
                    } while try moreFollow(closing: UInt8(ascii: "]"), in: "array")
                }
            case UInt8(ascii: "\""):
                try string(into: &entries)
                return
            case UInt8(ascii: "t"):
                try literal("true")
                entries.append(Entry(kind: .bool, escaped: false, flag: true, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "f"):
                try literal("false")
                entries.append(Entry(kind: .bool, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "n"):
                try literal("null")
                entries.append(Entry(kind: .null, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
                entries.append(Entry(kind: .number, escaped: false, flag: false, start: start, end: Int32(position), next: Int32(index + 1)))
                return
            default:
                throw fail("expected a JSON value")
            }
            entries[index].end = Int32(position)
            entries[index].next = Int32(entries.count)
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

        mutating func string(into entries: inout [Entry]) throws(JSONSyntaxError) {
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
            let index = entries.count
            entries.append(Entry(kind: .string, escaped: escaped, flag: false, start: Int32(start), end: Int32(position), next: Int32(index + 1)))
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
