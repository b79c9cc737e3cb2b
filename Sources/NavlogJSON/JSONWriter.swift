/// JSON text written straight into bytes: navlog's one JSON writer.
///
/// Stored events as `navlog cat` prints them, replay output, the viewer's API, and the event
/// lines the generator, the storyboard simulator and `navlog import` write all go through it,
/// so that a string is escaped the same way wherever it is written (``string(utf8:)`` is the
/// one place that escapes).
///
/// The writer appends to ``bytes``, a buffer its owner keeps and reuses (or borrows with
/// ``appending(to:controlEscapes:_:)``): no Foundation, no intermediate `String`, no allocation
/// per value. It keeps no state about nesting: the row types write their own punctuation, key
/// order and commas (``key(_:)`` writes the comma before a member, ``key(_:first:)`` leaves it
/// out for the first). A flat row lists its members once, in one call of ``object(_:)`` (see
/// ``JSONWritable``, by which a row type says how it encodes).
///
/// What it writes:
/// - strings quoted, with `"` and `\` escaped by a backslash, `\n`, `\r`, `\t` as those escapes,
///   other control characters (below 0x20) as `\u00XX` in lowercase hexadecimal (or `\b` and `\f`,
///   see ``ControlEscapes``); every other byte, DEL and non-ASCII UTF-8 included, as it is;
/// - integers in decimal, `-` before a negative one, no leading zeros;
/// - a `Double` as Swift prints it (the shortest text that reads back the same: `0.5`, `1.0`,
///   `1e-05`), `null` when it is not finite.
public struct JSONWriter: Sendable {
    /// How control characters other than newline, return and tab are escaped.
    public enum ControlEscapes: Sendable {
        /// `\u00XX` for each: what navlog writes everywhere but in generated sessions.
        case unicode
        /// `\b` and `\f` for backspace and form feed, `\u00XX` for the others: how the workload
        /// generator has always written its lines (only an app name, version or build given in
        /// its configuration can hold them), kept so that generated logs stay what they were.
        case shortForms
    }

    /// The bytes written so far (the caller's buffer: take it, reset it, append to it).
    public var bytes: [UInt8]

    /// How ``string(utf8:)`` escapes control characters.
    public var controlEscapes: ControlEscapes

    /// A writer appending to `bytes`.
    @inlinable
    public init(bytes: [UInt8] = [], controlEscapes: ControlEscapes = .unicode) {
        self.bytes = bytes
        self.controlEscapes = controlEscapes
    }

    /// Runs `body` with a writer that appends to `buffer`, whose storage is moved into the writer
    /// and back (no copy, whatever `body` writes).
    @inlinable
    public static func appending<Result, Failure: Error>(
        to buffer: inout [UInt8], controlEscapes: ControlEscapes = .unicode, _ body: (inout JSONWriter) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var writer = JSONWriter(controlEscapes: controlEscapes)
        swap(&writer.bytes, &buffer)
        defer { swap(&writer.bytes, &buffer) }
        return try body(&writer)
    }

    // MARK: Punctuation and text written as it is

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func byte(_ byte: UInt8) { bytes.append(byte) }

    /// Appends text known when the program is built, unescaped: punctuation, keys, enum values.
    @inlinable @inline(__always)
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as they are: JSON written before, or text that needs no escaping.
    @inlinable @inline(__always)
    public mutating func raw<Bytes: Sequence<UInt8>>(_ other: Bytes) { bytes.append(contentsOf: other) }

    // MARK: Values

    /// Appends `null`.
    @inlinable @inline(__always)
    public mutating func null() { raw("null") }

    /// Appends `true` or `false`.
    @inlinable @inline(__always)
    public mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// Appends `text` as a quoted, escaped JSON string.
    @inlinable
    public mutating func string(_ text: String) {
        // Native strings lend their bytes in place; only a bridged or foreign one is copied.
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ string(utf8: UnsafeRawBufferPointer($0)) }) { return done }
        var copy = text
        copy.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Appends `text` as a JSON string, or `null` when it is nil.
    @inlinable
    public mutating func string(_ text: String?) {
        if let text { string(text) } else { null() }
    }

    /// Appends `text`, known when the program is built, as a quoted, escaped JSON string.
    @inlinable
    public mutating func string(_ text: StaticString) {
        text.withUTF8Buffer { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Appends the UTF-8 bytes `text` as a quoted JSON string: the one place navlog escapes.
    ///
    /// Runs that need no escape are copied whole; the bytes are not checked as UTF-8 (the
    /// callers hold validated text).
    @inlinable
    public mutating func string(utf8 text: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<text.count {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if index > runStart { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[runStart..<index])) }
            escape(byte)
            runStart = index + 1
        }
        if text.count > runStart { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends the escape for `byte`, a quote, a backslash or a control character.
    // Not inlined: most strings need no escape, and the callers stay small.
    @usableFromInline
    mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08 where controlEscapes == .shortForms: bytes.append(UInt8(ascii: "b"))
        case 0x0C where controlEscapes == .shortForms: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }

    /// The lowercase hexadecimal digit for `nibble` (0...15).
    @inlinable @inline(__always)
    public static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble }

    /// Appends an integer in decimal.
    @inlinable @inline(__always)
    public mutating func integer<Integer: BinaryInteger>(_ value: Integer) {
        if Integer.isSigned && value < 0 {
            bytes.append(UInt8(ascii: "-"))
            decimal(UInt64(value.magnitude))
        } else {
            decimal(UInt64(value))
        }
    }

    /// Appends an integer in decimal, or `null` when it is nil.
    @inlinable @inline(__always)
    public mutating func integer<Integer: BinaryInteger>(_ value: Integer?) {
        if let value { integer(value) } else { null() }
    }

    /// Appends the decimal digits of `value`.
    @inlinable
    mutating func decimal(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, no heap
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[23 - count] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
                rest /= 10
                count += 1
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    /// Appends `value` as Swift prints it (`0.5`, `1.0`, `1e-05`), or `null` when it is infinite
    /// or not a number (JSON has neither).
    @inlinable
    public mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    // MARK: Objects and arrays

    /// Appends `,"name":`: a member after the first. `name` is written unescaped.
    @inlinable @inline(__always)
    public mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: ","))
        key(name, first: true)
    }

    /// Appends `"name":`, after a comma unless the member is the object's `first`. `name` is
    /// written unescaped.
    @inlinable @inline(__always)
    public mutating func key(_ name: StaticString, first: Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `"name":` for a name only known at run time (escaped), after a comma unless the
    /// member is the object's `first`.
    @inlinable
    public mutating func key(escaping name: String, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `,"name":` and the string `value` (`null` when it is nil).
    @inlinable
    public mutating func member(_ name: StaticString, _ value: String?) {
        key(name)
        string(value)
    }

    /// Appends `,"name":` and the integer `value` (`null` when it is nil).
    @inlinable
    public mutating func member<Integer: BinaryInteger>(_ name: StaticString, _ value: Integer?) {
        key(name)
        integer(value)
    }

    /// Appends `,"name":` and `true` or `false`.
    @inlinable
    public mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Appends `,"name":` and `value` as ``number(_:)`` writes it.
    @inlinable
    public mutating func member(_ name: StaticString, _ value: Double) {
        key(name)
        number(value)
    }

    /// Appends `,"name":` and `value`, JSON written before.
    @inlinable
    public mutating func member(_ name: StaticString, json value: [UInt8]) {
        key(name)
        bytes.append(contentsOf: value)
    }

    /// Appends `items` as an array, each written by `write`.
    @inlinable
    public mutating func array<Items: Sequence>(_ items: Items, _ write: (inout JSONWriter, Items.Element) -> Void) {
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
