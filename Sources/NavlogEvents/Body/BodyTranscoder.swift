/// Rewrites bodies from the parser's inline form to the stored interned form.
public enum BodyTranscoder {
    /// Writes the interned form of the inline-form `body` (as found in an ``EventBatch``) to
    /// `output`: the same tokens, with each string, number text and unknown key replaced by the
    /// varint reference `intern` returns for its bytes, and counts as varints.
    ///
    /// The interned form is never longer than the inline form (a `u32` length and its bytes
    /// become one varint of at most 5 bytes), so `output` needs room for `body.count` bytes.
    /// - Returns: the number of bytes written.
    /// - Precondition: `body` was produced by ``EventLineParser`` (its framing is trusted).
    public static func intern(
        _ body: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        intern: (UnsafeRawBufferPointer) -> UInt32
    ) -> Int {
        precondition(output.count >= body.count, "the output must have room for the whole body")
        var position = 0
        var written = 0
        value(body, &position, output, &written, intern)
        return written
    }

    /// A varint of at most 5 bytes (counts and references are 32-bit) where the inline form
    /// had at least 5 (a `u32`), so it always fits.
    @inline(__always)
    private static func writeVarint(_ value: UInt64, _ output: UnsafeMutableRawBufferPointer, _ written: inout Int) {
        written += Varint.write(value, to: output.baseAddress! + written)
    }

    private static func value(
        _ raw: UnsafeRawBufferPointer,
        _ position: inout Int,
        _ output: UnsafeMutableRawBufferPointer,
        _ written: inout Int,
        _ intern: (UnsafeRawBufferPointer) -> UInt32
    ) {
        let tag = raw[position]
        output[written] = tag
        written += 1
        switch BodyToken(rawValue: tag) {
        case .object:
            let count = TokenCursor.uint32(raw, at: position + 1)
            writeVarint(UInt64(count), output, &written)
            position += 5
            for _ in 0..<count {
                let key = raw[position]
                output[written] = key
                written += 1
                if key == BodyToken.unknownKey {
                    let text = TokenCursor.inlineString(raw, at: position + 1)
                    writeVarint(UInt64(intern(text)), output, &written)
                    position += 5 + text.count
                } else {
                    position += 1
                }
                value(raw, &position, output, &written, intern)
            }
        case .array:
            let count = TokenCursor.uint32(raw, at: position + 1)
            writeVarint(UInt64(count), output, &written)
            position += 5
            for _ in 0..<count { value(raw, &position, output, &written, intern) }
        case .string, .number:
            let text = TokenCursor.inlineString(raw, at: position + 1)
            writeVarint(UInt64(intern(text)), output, &written)
            position += 5 + text.count
        case .integer:
            position += 1
            while true {
                let byte = raw[position]
                output[written] = byte
                written += 1
                position += 1
                if byte < 0x80 { break }
            }
        default:
            position += 1
        }
    }
}

extension BodyTranscoder {
    /// Appends the inline form (as ``EventLineParser`` makes it) of the stored-form body at the
    /// start of `tokens`, whose references are numbers in `strings`: the inverse of
    /// ``intern(_:into:intern:)``, so a stored event can be stored again in another block
    /// (log compaction) without going through JSON.
    /// - Returns: false when the tokens are malformed or refer to a string `strings` lacks
    ///   (`output` then holds part of a body: the caller drops it).
    public static func inline(_ tokens: UnsafeRawBufferPointer, strings: StringTable, appendingTo output: inout [UInt8]) -> Bool {
        var reader = ByteReader(tokens)
        return inlineValue(&reader, strings, &output, depth: 0)
    }

    private static func inlineString(_ reader: inout ByteReader, _ strings: StringTable, _ output: inout [UInt8]) -> Bool {
        guard let reference = reader.readVarint(), reference < UInt64(strings.count), let text = strings[Int(reference)] else { return false }
        Varint.appendUInt32(UInt32(text.count), to: &output)
        output.append(contentsOf: text)
        return true
    }

    private static func inlineValue(_ reader: inout ByteReader, _ strings: StringTable, _ output: inout [UInt8], depth: Int) -> Bool {
        guard depth < JSONTokenizer.maximumDepth, let tag = reader.readByte(), let kind = BodyToken(rawValue: tag) else { return false }
        output.append(tag)
        switch kind {
        case .object:
            guard let count = reader.readVarint(), count <= UInt64(reader.remaining) else { return false }
            Varint.appendUInt32(UInt32(count), to: &output)
            for _ in 0..<count {
                guard let key = reader.readByte() else { return false }
                output.append(key)
                if key == BodyToken.unknownKey { guard inlineString(&reader, strings, &output) else { return false } }
                guard inlineValue(&reader, strings, &output, depth: depth + 1) else { return false }
            }
        case .array:
            guard let count = reader.readVarint(), count <= UInt64(reader.remaining) else { return false }
            Varint.appendUInt32(UInt32(count), to: &output)
            for _ in 0..<count { guard inlineValue(&reader, strings, &output, depth: depth + 1) else { return false } }
        case .string, .number:
            return inlineString(&reader, strings, &output)
        case .integer:
            guard let value = reader.readVarint() else { return false }
            Varint.append(value, to: &output)
        case .true, .false, .null:
            break
        }
        return true
    }
}
