#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits a byte stream into JSON records, whatever their layout: JSON Lines (one value per
/// line), one pretty-printed value over many lines, or values written one after another.
///
/// The layout is decided by the first record: if it ends on the line it began on, the input
/// is JSON Lines and every line ends its record (so a truncated line costs only that line);
/// otherwise records end where their outermost bracket closes. Only the record being read is
/// held, never more than ``maximumRecordBytes``: memory does not grow with the input.
public struct JSONRecordFramer: Sendable {
    /// What the framer found.
    public enum Piece {
        /// A complete value's bytes (valid during the call only: the framer's buffer, reused
        /// for the next record), and the line it begins on (1-based).
        case record(UnsafeRawBufferPointer, line: Int)
        /// Bytes that cannot be a record, the line they begin on, and why.
        case malformed(line: Int, reason: String)
    }

    /// How records are delimited.
    private enum Layout {
        /// Not known until the first record ends.
        case undecided
        /// JSON Lines: a newline ends a record.
        case lines
        /// Values end where their brackets close.
        case values
    }

    /// The largest record kept; a longer one is skipped and reported.
    public let maximumRecordBytes: Int
    /// Lines read so far (the number of the line being read, 1-based).
    public private(set) var line = 1

    private var layout = Layout.undecided
    private var buffer: [UInt8] = []
    private var inRecord = false
    private var garbage = false
    private var tooLong = false
    private var depth = 0
    private var inString = false
    private var escape = false
    private var recordLine = 1

    /// A framer that keeps records of at most `maximumRecordBytes` (default 32 MiB).
    public init(maximumRecordBytes: Int = 32 << 20) {
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// Reads `chunk`, calling `body` for each record or malformed piece that ends in it.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (Piece) throws -> Void) rethrows {
        var offset = 0
        while offset < chunk.count {
            if layout == .lines {
                offset = try feedLines(chunk, from: offset, body)
            } else {
                offset = try feedBytes(chunk, from: offset, body)
            }
        }
    }

    /// JSON Lines: cut at each newline (found with `memchr`) and copy whole runs of bytes; the
    /// parser finds what is wrong inside a line. Returns where it stopped (the end of `chunk`).
    private mutating func feedLines(_ chunk: UnsafeRawBufferPointer, from start: Int, _ body: (Piece) throws -> Void) rethrows -> Int {
        guard let base = chunk.baseAddress else { return chunk.count }
        var offset = start
        while offset < chunk.count {
            let found = memchr(base + offset, 0x0A, chunk.count - offset)
            let end = found.map { UnsafeRawPointer($0) - base } ?? chunk.count
            if !tooLong {
                if buffer.count + (end - offset) > maximumRecordBytes {
                    tooLong = true
                    buffer.removeAll()
                } else {
                    buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[offset..<end]))
                }
            }
            guard found != nil else { return chunk.count }
            try endLine(body)
            line += 1
            offset = end + 1
        }
        return chunk.count
    }

    /// Hands over the line held in ``buffer`` (JSON Lines layout).
    private mutating func endLine(_ body: (Piece) throws -> Void) rethrows {
        defer {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            tooLong = false
        }
        if tooLong {
            try body(.malformed(line: line, reason: tooLongReason))
            return
        }
        guard let first = buffer.firstIndex(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
        guard buffer[first] == UInt8(ascii: "{") || buffer[first] == UInt8(ascii: "[") else {
            try body(.malformed(line: line, reason: "expected a JSON object, found text that is not one"))
            return
        }
        try buffer.withUnsafeBytes { bytes in try body(.record(bytes, line: line)) }
    }

    /// Byte by byte, tracking strings and brackets: until the layout is known, and for whole
    /// values over many lines. Returns where it stopped (where the layout became JSON Lines, or
    /// the end of `chunk`).
    private mutating func feedBytes(_ chunk: UnsafeRawBufferPointer, from start: Int, _ body: (Piece) throws -> Void) rethrows -> Int {
        for index in start..<chunk.count {
            let byte = chunk[index]
            if !inRecord {
                switch byte {
                case 0x0A:
                    line += 1
                case 0x20, 0x09, 0x0D:
                    break
                default:
                    inRecord = true
                    recordLine = line
                    garbage = byte != UInt8(ascii: "{") && byte != UInt8(ascii: "[")
                    depth = garbage ? 0 : 1
                    inString = false
                    escape = false
                    tooLong = false
                    buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
                    buffer.append(byte)
                }
                continue
            }
            if byte == 0x0A {
                line += 1
                if garbage {
                    try body(.malformed(line: recordLine, reason: "expected a JSON object, found text that is not one"))
                    inRecord = false
                    continue
                }
                if layout == .lines {
                    try body(.malformed(line: recordLine, reason: tooLong ? tooLongReason : "the line ends before its JSON value does (a truncated or split record)"))
                    inRecord = false
                    continue
                }
            }
            if garbage { continue }
            if !tooLong {
                if buffer.count >= maximumRecordBytes {
                    tooLong = true
                    buffer.removeAll()
                } else {
                    buffer.append(byte)
                }
            }
            if inString {
                if escape {
                    escape = false
                } else if byte == UInt8(ascii: "\\") {
                    escape = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    inRecord = false
                    let decided = layout == .undecided
                    if decided { layout = recordLine == line ? .lines : .values }
                    if tooLong {
                        try body(.malformed(line: recordLine, reason: tooLongReason))
                    } else {
                        try buffer.withUnsafeBytes { bytes in try body(.record(bytes, line: recordLine)) }
                    }
                    if layout == .lines {
                        // The rest of this line (white space, or text after the value) is one more piece.
                        buffer.removeAll(keepingCapacity: true)
                        tooLong = false
                        return index + 1
                    }
                }
            default: break
            }
        }
        return chunk.count
    }

    /// Ends the input: a record still open is reported as truncated.
    public mutating func finish(_ body: (Piece) throws -> Void) rethrows {
        if layout == .lines {
            // The last line, with no newline after it: a record cut short is reported by the parser.
            if tooLong || !buffer.isEmpty { try endLine(body) }
            return
        }
        guard inRecord else { return }
        inRecord = false
        if garbage {
            try body(.malformed(line: recordLine, reason: "expected a JSON object, found text that is not one"))
        } else if tooLong {
            try body(.malformed(line: recordLine, reason: tooLongReason))
        } else {
            try body(.malformed(line: recordLine, reason: "the input ends inside this record (a truncated file?)"))
        }
    }

    private var tooLongReason: String {
        "the record is longer than \(maximumRecordBytes) bytes, the most one record may take; it was skipped"
    }
}
