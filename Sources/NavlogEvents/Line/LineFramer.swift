#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits a byte stream into numbered `\n`-terminated lines, whatever the chunk boundaries,
/// without ever buffering more than one line: a line over the limit is counted, not kept.
public struct LineFramer: Sendable {
    /// One framed line.
    public enum Piece {
        /// A line's bytes (without `\n`); valid only during the callback.
        case line(UnsafeRawBufferPointer)
        /// A line longer than the limit; only its length is known.
        case tooLong(length: Int)
    }

    /// The longest line kept, in bytes.
    public let maximumLineLength: Int
    /// The number of the last line delivered (lines are numbered from 1).
    public private(set) var lineNumber = 0
    private var pending: [UInt8] = []
    private var discardedLength: Int?

    /// Creates a framer.
    public init(maximumLineLength: Int = 65_536) {
        self.maximumLineLength = maximumLineLength
    }

    /// Feeds the next chunk, calling `body` with each line completed by it.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (Int, Piece) throws -> Void) rethrows {
        guard let base = chunk.baseAddress else { return }
        var start = 0
        while start < chunk.count {
            let found = memchr(base + start, 0x0A, chunk.count - start)
            let end = found.map { UnsafeRawPointer($0) - base } ?? chunk.count
            let piece = UnsafeRawBufferPointer(rebasing: chunk[start..<end])
            if found == nil {
                append(piece)
                return
            }
            lineNumber += 1
            if let discarded = discardedLength {
                discardedLength = nil
                try body(lineNumber, .tooLong(length: discarded + piece.count))
            } else if pending.isEmpty {
                if piece.count > maximumLineLength + 1 {  // the parser decides the last byte (a \r)
                    try body(lineNumber, .tooLong(length: piece.count))
                } else {
                    try body(lineNumber, .line(piece))
                }
            } else {
                append(piece)
                if let discarded = discardedLength {
                    discardedLength = nil
                    try body(lineNumber, .tooLong(length: discarded))
                } else {
                    try pending.withUnsafeBytes { try body(lineNumber, .line($0)) }
                    pending.removeAll(keepingCapacity: true)
                }
            }
            start = end + 1
        }
    }

    /// Delivers a last line that had no `\n`, if any.
    public mutating func finish(_ body: (Int, Piece) throws -> Void) rethrows {
        if let discarded = discardedLength {
            lineNumber += 1
            discardedLength = nil
            try body(lineNumber, .tooLong(length: discarded))
        } else if !pending.isEmpty {
            lineNumber += 1
            try pending.withUnsafeBytes { try body(lineNumber, .line($0)) }
            pending.removeAll(keepingCapacity: true)
        }
    }

    private mutating func append(_ piece: UnsafeRawBufferPointer) {
        if let discarded = discardedLength {
            discardedLength = discarded + piece.count
        } else if pending.count + piece.count > maximumLineLength + 1 {
            // +1 keeps room for a trailing \r, which the parser drops.
            discardedLength = pending.count + piece.count
            pending.removeAll(keepingCapacity: true)
        } else {
            pending.append(contentsOf: piece)
        }
    }
}

extension EventLineParser {
    /// The rejection of a line the framer found too long.
    public func tooLong(lineNumber: Int, length: Int) -> EventRejection {
        EventRejection(code: .tooLong, line: lineNumber, reason: "the line is \(length) bytes long; the limit is \(maximumLineLength) bytes")
    }
}
