/// Reads inline-form body tokens written by the tokenizer. Inputs come from our own tokenizer,
/// so these helpers trust the framing; stored (interned) bodies are read by ``StoredBody``.
enum TokenCursor {
    @inline(__always)
    static func uint32(_ raw: UnsafeRawBufferPointer, at position: Int) -> Int {
        Int(raw.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian)
    }

    /// The bytes of an inline string whose `u32` length is at `position`.
    @inline(__always)
    static func inlineString(_ raw: UnsafeRawBufferPointer, at position: Int) -> UnsafeRawBufferPointer {
        let length = uint32(raw, at: position)
        return UnsafeRawBufferPointer(rebasing: raw[(position + 4)..<(position + 4 + length)])
    }

    /// The key at `position` as text.
    static func keyName(_ raw: UnsafeRawBufferPointer, at position: Int) -> String {
        let tag = raw[position]
        if tag != BodyToken.unknownKey { return FieldName(rawValue: tag)?.name ?? "?" }
        return String(decoding: inlineString(raw, at: position + 1), as: UTF8.self)
    }

    /// Where the key at `position` ends.
    @inline(__always)
    static func skipKey(_ raw: UnsafeRawBufferPointer, at position: Int) -> Int {
        raw[position] == BodyToken.unknownKey ? position + 5 + uint32(raw, at: position + 1) : position + 1
    }

    /// Where the value starting at `position` ends.
    static func skipValue(_ raw: UnsafeRawBufferPointer, at position: Int) -> Int {
        switch BodyToken(rawValue: raw[position]) {
        case .object:
            var p = position + 5
            for _ in 0..<uint32(raw, at: position + 1) { p = skipValue(raw, at: skipKey(raw, at: p)) }
            return p
        case .array:
            var p = position + 5
            for _ in 0..<uint32(raw, at: position + 1) { p = skipValue(raw, at: p) }
            return p
        case .string, .number:
            return position + 5 + uint32(raw, at: position + 1)
        case .integer:
            var p = position + 1
            while raw[p] >= 0x80 { p += 1 }
            return p + 1
        default:
            return position + 1
        }
    }

    /// The value of an integer token at `position`.
    static func integer(_ raw: UnsafeRawBufferPointer, at position: Int) -> Int64 {
        var reader = ByteReader(raw, offset: position + 1)
        return Varint.unzigzag(reader.readVarint() ?? 0)
    }

    /// "a string", "a number" ... for messages.
    static func describe(_ tag: UInt8) -> String {
        switch BodyToken(rawValue: tag) {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .number: return "a number"
        case .true, .false: return "a boolean"
        case .null: return "null"
        case nil: return "nothing"
        }
    }
}
