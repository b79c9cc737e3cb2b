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
        /// A complete value's bytes, and the line it begins on (1-based).
        case record([UInt8], line: Int)
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
        for byte in chunk {
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
                    if layout == .undecided { layout = recordLine == line ? .lines : .values }
                    if tooLong {
                        try body(.malformed(line: recordLine, reason: tooLongReason))
                    } else {
                        try body(.record(buffer, line: recordLine))
                    }
                }
            default: break
            }
        }
    }

    /// Ends the input: a record still open is reported as truncated.
    public mutating func finish(_ body: (Piece) throws -> Void) rethrows {
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
