/// A failure found while reading a line, before it is known which line number it has.
struct LineFailure: Error {
    var code: EventRejection.Code
    /// 0-based byte offset in the line, when a position applies.
    var offset: Int?
    var path: String?
    var reason: String
}

/// Reads one JSON value from a line and writes it as inline-form ``BodyToken``s.
///
/// It enforces RFC 8259 exactly (the line was UTF-8-validated before), rejects repeated keys
/// and lone surrogates, normalizes integral numbers that fit `Int64` to `integer` tokens and
/// keeps every other number as its text. For the top-level object it records where each
/// member's key and value tokens are, so the validator can check them without re-parsing.
///
/// One tokenizer is kept per parser and reset for each line (``begin(line:)``), so its buffers
/// are allocated once and a steady stream of lines allocates nothing.
///
/// `@unchecked Sendable`: the only non-Sendable part is the pointer to the current line, which
/// is read only inside the one mutating parse call that set it; between lines it is never read,
/// so moving a parser to another thread cannot make two threads share the line.
struct JSONTokenizer: @unchecked Sendable {
    /// A top-level member of the object: key token at `keyStart`, value tokens in `value`.
    struct Member: Sendable, BitwiseCopyable {
        var key: UInt8
        var keyStart: Int
        var valueStart: Int
        var valueEnd: Int
        var offset: Int

        /// Where the value's tokens are.
        var value: Range<Int> { valueStart..<valueEnd }
    }

    static let maximumDepth = 256

    var out = TokenBuffer()
    var keyPositions: [Int] = []
    var members = ScratchBuffer<Member>(capacity: 64)
    /// The path to the value being read, for messages: a key's token position, or `-(index+1)` in an array.
    /// Kept only when ``tracksPath`` is set (the slow re-read that names a repeated key).
    var path: [Int] = []
    /// Whether to keep ``path`` (off on the fast path).
    var tracksPath = false
    /// The vocabulary's field names; held here so a key lookup does not go through the
    /// global's lazy initialization check each time.
    private let fieldNames = fieldTable
    /// The line being read; valid only between ``begin(line:)`` and the end of that line's parse.
    private var base = UnsafePointer<UInt8>(bitPattern: 1)!
    private var count = 0
    private var i = 0

    /// A tokenizer with empty buffers.
    init() {}

    /// Starts on `line`: clears the buffers (keeping their capacity) and points at its bytes.
    mutating func begin(line: UnsafeRawBufferPointer) {
        path.removeAll(keepingCapacity: true)
        out.makeUnique()
        out.removeAll()
        keyPositions.removeAll(keepingCapacity: true)
        members.makeUnique()
        members.removeAll()
        base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
        count = line.count
        i = 0
    }

    /// Tokenizes the whole line as one value. Returns the tag of the top-level value.
    mutating func tokenizeLine() throws(LineFailure) -> UInt8 {
        skipWhitespace()
        let tag = peek()
        try value(depth: 0, topLevel: true)
        skipWhitespace()
        if i < count {
            throw LineFailure(code: .json, offset: i, reason: "unexpected \(describeByte(at: i)) after the end of the JSON value")
        }
        return tag == UInt8(ascii: "{") ? BodyToken.object.rawValue : 0
    }

    @inline(__always)
    private func peek() -> UInt8 { i < count ? base[i] : 0 }

    @inline(__always)
    private mutating func skipWhitespace() {
        while i < count {
            let b = base[i]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { i += 1 } else { return }
        }
    }

    private func describeByte(at offset: Int) -> String {
        guard offset < count else { return "end of line" }
        let b = base[offset]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    private mutating func value(depth: Int, topLevel: Bool = false) throws(LineFailure) {
        guard depth < Self.maximumDepth else {
            throw LineFailure(code: .json, offset: i, reason: "the JSON is nested more than \(Self.maximumDepth) levels deep")
        }
        skipWhitespace()
        guard i < count else {
            throw LineFailure(code: .json, offset: i, reason: "the line ends where a JSON value was expected")
        }
        switch base[i] {
        case UInt8(ascii: "{"): try object(depth: depth, topLevel: topLevel)
        case UInt8(ascii: "["): try array(depth: depth)
        case UInt8(ascii: "\""):
            out.append(BodyToken.string.rawValue)
            try stringContent()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case UInt8(ascii: "t"): try literal("true", BodyToken.true)
        case UInt8(ascii: "f"): try literal("false", BodyToken.false)
        case UInt8(ascii: "n"): try literal("null", BodyToken.null)
        default:
            throw LineFailure(code: .json, offset: i, reason: "expected a JSON value, found \(describeByte(at: i))")
        }
    }

    private mutating func literal(_ word: StaticString, _ token: BodyToken) throws(LineFailure) {
        let length = word.utf8CodeUnitCount
        let start = i
        if i + length <= count {
            var matches = true
            for k in 0..<length where base[i + k] != word.utf8Start[k] { matches = false; break }
            if matches {
                i += length
                out.append(token.rawValue)
                return
            }
        }
        throw LineFailure(code: .json, offset: start, reason: "expected a JSON value, found \(describeByte(at: start))")
    }

    private mutating func reserveCount() -> Int {
        let at = out.count
        out.appendUInt32(0)
        return at
    }

    @inline(__always)
    private mutating func patchUInt32(_ value: Int, at position: Int) {
        out.patchUInt32(UInt32(truncatingIfNeeded: value), at: position)
    }

    private mutating func object(depth: Int, topLevel: Bool) throws(LineFailure) {
        i += 1
        out.append(BodyToken.object.rawValue)
        let countAt = reserveCount()
        let keysBase = keyPositions.count
        // Known keys are checked for repeats with a bit mask; only unknown ones need comparing.
        var seenKnown: UInt128 = 0
        var members = 0
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                throw LineFailure(code: .json, offset: i, reason: "expected a quoted key, found \(describeByte(at: i))")
            }
            let keyOffset = i
            let keyStart = out.count
            try key()
            let keyByte = out[keyStart]
            if keyByte != BodyToken.unknownKey {
                let bit = UInt128(1) << UInt128(keyByte)
                if seenKnown & bit != 0 { try reportDuplicate(keyStart: keyStart, offset: keyOffset) }
                seenKnown |= bit
            } else {
                try checkDuplicate(keyStart: keyStart, keysBase: keysBase, offset: keyOffset)
                keyPositions.append(keyStart)
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw LineFailure(code: .json, offset: i, reason: "expected ':' after a key, found \(describeByte(at: i))")
            }
            i += 1
            skipWhitespace()
            let valueStart = out.count
            let valueOffset = i
            if tracksPath { path.append(keyStart) }
            try value(depth: depth + 1)
            if tracksPath { path.removeLast() }
            if topLevel {
                self.members.append(Member(key: out[keyStart], keyStart: keyStart, valueStart: valueStart, valueEnd: out.count, offset: valueOffset))
            }
            members += 1
            skipWhitespace()
            let b = peek()
            i += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "}") { break }
            throw LineFailure(code: .json, offset: i - 1, reason: "expected ',' or '}' in an object, found \(describeByte(at: i - 1))")
        }
        if keyPositions.count > keysBase { keyPositions.removeSubrange(keysBase...) }
        patchUInt32(members, at: countAt)
    }

    private mutating func array(depth: Int) throws(LineFailure) {
        i += 1
        out.append(BodyToken.array.rawValue)
        let countAt = reserveCount()
        var elements = 0
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            i += 1
            return
        }
        while true {
            if tracksPath { path.append(-(elements + 1)) }
            try value(depth: depth + 1)
            if tracksPath { path.removeLast() }
            elements += 1
            skipWhitespace()
            let b = peek()
            i += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "]") { break }
            throw LineFailure(code: .json, offset: i - 1, reason: "expected ',' or ']' in an array, found \(describeByte(at: i - 1))")
        }
        patchUInt32(elements, at: countAt)
    }

    /// Writes a key: one byte for a ``FieldName``, else ``BodyToken/unknownKey`` + inline string.
    private mutating func key() throws(LineFailure) {
        // Fast path: a key without escapes that names a known field is looked up in place.
        let end = JSONStringScan.endOfPlainRun(base, from: i + 1, to: count)
        if end < count, base[end] == 0x22,
            let known = fieldNames.lookup(UnsafeRawBufferPointer(start: base + i + 1, count: end - i - 1))
        {
            out.append(known)
            i = end + 1
            return
        }
        let start = out.count
        out.append(BodyToken.unknownKey)
        try stringContent()
        let length = out.count - start - 5
        let known = out.withUnsafeBytes { fieldNames.lookup(UnsafeRawBufferPointer(rebasing: $0[(start + 5)..<(start + 5 + length)])) }
        if let known {
            out.removeSubrange(start...)
            out.append(known)
        }
    }

    /// Checks an unknown key against the object's other unknown keys.
    private func checkDuplicate(keyStart: Int, keysBase: Int, offset: Int) throws(LineFailure) {
        for index in keysBase..<keyPositions.count {
            let other = keyPositions[index]
            let same = out.withUnsafeBytes { raw in
                bytesEqual(TokenCursor.inlineString(raw, at: other + 1), TokenCursor.inlineString(raw, at: keyStart + 1))
            }
            if same { try reportDuplicate(keyStart: keyStart, offset: offset) }
        }
    }

    private func reportDuplicate(keyStart: Int, offset: Int) throws(LineFailure) {
        let name = out.withUnsafeBytes { raw in TokenCursor.keyName(raw, at: keyStart) }
        // Without path tracking the message needs the path: the parser reads the line again with it.
        throw LineFailure(
            code: .duplicateKey, offset: offset, path: tracksPath ? pathText(appending: name) : nil, reason: "the key \"\(name)\" appears more than once in the same object")
    }

    /// The dotted path of the value being read, plus `last`, e.g. `vcs[0].class`.
    private func pathText(appending last: String) -> String {
        var text = ""
        out.withUnsafeBytes { raw in
            for entry in path {
                if entry < 0 {
                    text += "[\(-entry - 1)]"
                } else {
                    if !text.isEmpty { text += "." }
                    text += TokenCursor.keyName(raw, at: entry)
                }
            }
        }
        return text.isEmpty ? last : text + "." + last
    }

    /// Reads a string starting at its opening quote and appends `u32 length + bytes`.
    private mutating func stringContent() throws(LineFailure) {
        let open = i
        i += 1
        let lengthAt = reserveCount()
        var length = 0
        while true {
            let runStart = i
            i = JSONStringScan.endOfPlainRun(base, from: i, to: count)
            if i > runStart {
                out.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart))
                length += i - runStart
            }
            guard i < count else {
                throw LineFailure(code: .json, offset: open, reason: "a string starting here is not closed")
            }
            let b = base[i]
            if b == 0x22 {
                i += 1
                break
            }
            if b < 0x20 {
                throw LineFailure(code: .json, offset: i, reason: "a control character (byte 0x\(String(b, radix: 16))) must be escaped inside a string")
            }
            length += try escape()
        }
        patchUInt32(length, at: lengthAt)
    }

    /// Decodes one escape sequence at `i` (a backslash) and returns the bytes it appended.
    private mutating func escape() throws(LineFailure) -> Int {
        let at = i
        guard i + 1 < count else {
            throw LineFailure(code: .json, offset: at, reason: "a string ends inside an escape sequence")
        }
        let c = base[i + 1]
        i += 2
        let simple: UInt8
        switch c {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            var scalar = try hex4(at: at)
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard i + 1 < count, base[i] == 0x5C, base[i + 1] == UInt8(ascii: "u") else {
                    throw LineFailure(
                        code: .utf8, offset: at, reason: "the escape \\u\(String(scalar, radix: 16, uppercase: true)) is a high surrogate without a low surrogate after it")
                }
                i += 2
                let low = try hex4(at: at)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw LineFailure(
                        code: .utf8, offset: at, reason: "the escape \\u\(String(scalar, radix: 16, uppercase: true)) is a high surrogate without a low surrogate after it")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw LineFailure(code: .utf8, offset: at, reason: "the escape \\u\(String(scalar, radix: 16, uppercase: true)) is a lone low surrogate")
            }
            return appendUTF8(scalar)
        default:
            throw LineFailure(code: .json, offset: at, reason: "\\\(describeByte(at: at + 1).replacingQuotes) is not a JSON escape sequence")
        }
        out.append(simple)
        return 1
    }

    private mutating func hex4(at escapeStart: Int) throws(LineFailure) -> UInt32 {
        guard i + 4 <= count else {
            throw LineFailure(code: .json, offset: escapeStart, reason: "a \\u escape needs four hex digits")
        }
        var value: UInt32 = 0
        for k in 0..<4 {
            let b = base[i + k]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - 0x57)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - 0x37)
            default: throw LineFailure(code: .json, offset: escapeStart, reason: "a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
        }
        i += 4
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) -> Int {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
            return 1
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
            return 2
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
            return 3
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
            return 4
        }
    }

    private mutating func number() throws(LineFailure) {
        let start = i
        let negative = base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < count, base[i] >= 0x30, base[i] <= 0x39 else {
            throw LineFailure(code: .json, offset: start, reason: "a number needs digits after '-'")
        }
        let digitsStart = i
        // The value of the integer part, accumulated while scanning (exact up to 18 digits).
        var magnitude: UInt64 = 0
        if base[i] == 0x30 {
            i += 1
            if i < count, base[i] >= 0x30, base[i] <= 0x39 {
                throw LineFailure(code: .json, offset: start, reason: "a number may not have leading zeros")
            }
        } else {
            while i < count {
                let digit = base[i] &- 0x30
                if digit > 9 { break }
                magnitude = magnitude &* 10 &+ UInt64(digit)
                i += 1
            }
        }
        var simpleInteger = i - digitsStart <= 18
        if i < count, base[i] == UInt8(ascii: ".") {
            simpleInteger = false
            i += 1
            let digits = i
            while i < count, base[i] >= 0x30, base[i] <= 0x39 { i += 1 }
            guard i > digits else { throw LineFailure(code: .json, offset: start, reason: "a number needs digits after '.'") }
        }
        if i < count, base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E") {
            simpleInteger = false
            i += 1
            if i < count, base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < count, base[i] >= 0x30, base[i] <= 0x39 { i += 1 }
            guard i > digits else { throw LineFailure(code: .json, offset: start, reason: "a number needs digits in its exponent") }
        }
        let text = UnsafeRawBufferPointer(start: base + start, count: i - start)
        let integer: Int64? =
            simpleInteger ? (negative ? -Int64(magnitude) : Int64(magnitude)) : JSONNumber.integralValue(text).value
        if let integer {
            out.append(BodyToken.integer.rawValue)
            out.appendVarint(Varint.zigzag(integer))
        } else {
            out.append(BodyToken.number.rawValue)
            out.appendUInt32(UInt32(text.count))
            out.append(contentsOf: text)
        }
    }
}

extension String {
    fileprivate var replacingQuotes: String { filter { $0 != "'" } }
}

extension Array where Element == UInt8 {
    /// Runs `body` over the bytes, keeping `body`'s typed error type (the standard library's
    /// `withUnsafeBytes` only rethrows `any Error`).
    @inlinable
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

/// Exact classification of JSON number text, with no floating point.
enum JSONNumber {
    /// Whether the number has no fractional part, and its value when it also fits `Int64`.
    static func integralValue(_ text: UnsafeRawBufferPointer) -> (integral: Bool, value: Int64?) {
        var index = 0
        var negative = false
        if text[0] == UInt8(ascii: "-") { negative = true; index = 1 }
        // Significant digits (integer then fraction), with the decimal exponent they imply.
        var digits: [UInt8] = []
        var fractionLength = 0
        var inFraction = false
        while index < text.count {
            let b = text[index]
            if b == UInt8(ascii: ".") {
                inFraction = true
            } else if b >= 0x30 && b <= 0x39 {
                digits.append(b - 0x30)
                if inFraction { fractionLength += 1 }
            } else {
                break
            }
            index += 1
        }
        var exponent = 0
        if index < text.count {
            index += 1
            var sign = 1
            if text[index] == UInt8(ascii: "-") { sign = -1; index += 1 } else if text[index] == UInt8(ascii: "+") { index += 1 }
            while index < text.count {
                exponent = min(exponent * 10 + Int(text[index] - 0x30), 1_000_000)
                index += 1
            }
            exponent *= sign
        }
        var effective = exponent - fractionLength
        var first = 0
        while first < digits.count && digits[first] == 0 { first += 1 }
        if first == digits.count { return (true, 0) }
        var last = digits.count
        while digits[last - 1] == 0 { last -= 1; effective += 1 }
        if effective < 0 { return (false, nil) }
        if last - first + effective > 19 { return (true, nil) }
        var magnitude: UInt64 = 0
        for k in first..<last {
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(digits[k]))
            if o1 || o2 { return (true, nil) }
            magnitude = a
        }
        for _ in 0..<effective {
            let (m, o) = magnitude.multipliedReportingOverflow(by: 10)
            if o { return (true, nil) }
            magnitude = m
        }
        if negative {
            if magnitude <= UInt64(Int64.max) { return (true, -Int64(magnitude)) }
            if magnitude == UInt64(Int64.max) + 1 { return (true, Int64.min) }
            return (true, nil)
        }
        return (true, magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil)
    }
}
