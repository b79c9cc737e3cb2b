/// Builds one event line straight into the token form ``JSONTokenizer`` reads a JSON line into,
/// for a program that makes its events itself (`navlog import`): no JSON text is written only
/// to be read back, and the event still goes through the parser's whole validation
/// (``EventLineParser/parse(lineNumber:receivedAt:peer:into:building:)``).
///
/// The tokens are those the tokenizer makes of the equivalent JSON text: a key that names a
/// ``FieldName`` is its code, any other is ``BodyToken/unknownKey`` and its bytes; a string is
/// its UTF-8 (which a Swift string always is); an integer is ``BodyToken/integer``. The
/// builder's test (`EventLineBuilderTests`) checks that against the tokenizer.
///
/// Two things differ from a line, because there is none: a rejection has no column, and the
/// line length limit does not apply (the builder's caller bounds its fields).
public struct EventLineBuilder: Sendable {
    var out: TokenBuffer
    var members: ScratchBuffer<JSONTokenizer.Member>
    /// Where each open object's member count is, with its members so far (the top-level
    /// object first).
    private var open: [(countAt: Int, members: Int)] = []
    /// The top-level member whose value is being written: its key byte and token positions.
    private var pending: (key: UInt8, keyStart: Int, valueStart: Int)?
    private let fieldNames = fieldTable

    init(out: TokenBuffer, members: ScratchBuffer<JSONTokenizer.Member>) {
        self.out = out
        self.members = members
        open.reserveCapacity(4)
    }

    /// Starts the top-level object (the parser calls this before the caller fills it).
    mutating func beginLine() {
        out.makeUnique()
        out.removeAll()
        members.makeUnique()
        members.removeAll()
        open.removeAll(keepingCapacity: true)
        pending = nil
        beginObject()
    }

    /// Ends the top-level object.
    mutating func endLine() {
        endObject()
    }

    /// Writes a member's key, `name` (`"ts"`, `"vc"`, …); its value is written next.
    public mutating func key(_ name: StaticString) {
        key(utf8: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// Writes the key of a vocabulary field (its code, as the tokenizer writes `"vc"`); its
    /// value is written next.
    public mutating func key(_ field: FieldName) {
        let keyStart = out.count
        out.append(field.rawValue)
        keyWritten(at: keyStart)
    }

    /// Writes a member's key from its UTF-8; its value is written next.
    public mutating func key(utf8 name: UnsafeRawBufferPointer) {
        let keyStart = out.count
        if let known = fieldNames.lookup(name) {
            out.append(known)
        } else {
            out.append(BodyToken.unknownKey)
            appendInline(name)
        }
        keyWritten(at: keyStart)
    }

    /// Counts the key written at `keyStart` in its object; a top-level one starts a member.
    @inline(__always)
    private mutating func keyWritten(at keyStart: Int) {
        open[open.count - 1].members += 1
        if open.count == 1 { pending = (out[keyStart], keyStart, out.count) }
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a string value from its UTF-8 (which must be valid: a Swift string's is).
    public mutating func string(utf8 value: UnsafeRawBufferPointer) {
        out.append(BodyToken.string.rawValue)
        appendInline(value)
        valueWritten()
    }

    /// Writes an integer value.
    public mutating func integer(_ value: Int64) {
        out.append(BodyToken.integer.rawValue)
        out.appendVarint(Varint.zigzag(value))
        valueWritten()
    }

    /// Writes an integer value (the tokenizer's form of a number that fits `Int64`).
    public mutating func integer(_ value: UInt64) {
        integer(Int64(value))
    }

    /// Starts an object value; its members follow, then ``endObject()``.
    public mutating func beginObject() {
        out.append(BodyToken.object.rawValue)
        open.append((out.count, 0))
        out.appendUInt32(0)
    }

    /// Ends the object begun last.
    public mutating func endObject() {
        let object = open.removeLast()
        out.patchUInt32(UInt32(object.members), at: object.countAt)
        valueWritten()
    }

    /// `u32 length + bytes`, the tokenizer's inline string.
    @inline(__always)
    private mutating func appendInline(_ bytes: UnsafeRawBufferPointer) {
        out.appendUInt32(UInt32(bytes.count))
        out.append(contentsOf: bytes)
    }

    /// Records a finished top-level member, as the tokenizer does for the parser's checks.
    @inline(__always)
    private mutating func valueWritten() {
        guard open.count == 1, let member = pending else { return }
        members.append(JSONTokenizer.Member(key: member.key, keyStart: member.keyStart, valueStart: member.valueStart, valueEnd: out.count, offset: 0))
        pending = nil
    }
}
