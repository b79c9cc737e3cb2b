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
