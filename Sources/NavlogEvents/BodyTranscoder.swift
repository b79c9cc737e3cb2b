/// Rewrites bodies from the parser's inline form to the stored interned form.
public enum BodyTranscoder {
    /// Appends the interned form of the inline-form `body` (as found in an ``EventBatch``):
    /// its tokens to `output` and, for every string, unknown key and number text, the reference
    /// `intern` returns to `references`.
    /// - Precondition: `body` was produced by ``EventLineParser`` (its framing is trusted).
    public static func intern(
        _ body: UnsafeRawBufferPointer,
        into output: inout [UInt8],
        references: inout [UInt32],
        intern: (UnsafeRawBufferPointer) -> UInt32
    ) {
        var position = 0
        value(body, &position, &output, &references, intern)
    }

    private static func value(
        _ raw: UnsafeRawBufferPointer,
        _ position: inout Int,
        _ output: inout [UInt8],
        _ references: inout [UInt32],
        _ intern: (UnsafeRawBufferPointer) -> UInt32
    ) {
        let tag = raw[position]
        output.append(tag)
        switch BodyToken(rawValue: tag) {
        case .object:
            let count = TokenCursor.uint32(raw, at: position + 1)
            Varint.append(UInt64(count), to: &output)
            position += 5
            for _ in 0..<count {
                let key = raw[position]
                output.append(key)
                if key == BodyToken.unknownKey {
                    let text = TokenCursor.inlineString(raw, at: position + 1)
                    references.append(intern(text))
                    position += 5 + text.count
                } else {
                    position += 1
                }
                value(raw, &position, &output, &references, intern)
            }
        case .array:
            let count = TokenCursor.uint32(raw, at: position + 1)
            Varint.append(UInt64(count), to: &output)
            position += 5
            for _ in 0..<count { value(raw, &position, &output, &references, intern) }
        case .string, .number:
            let text = TokenCursor.inlineString(raw, at: position + 1)
            references.append(intern(text))
            position += 5 + text.count
        case .integer:
            var end = position + 1
            while raw[end] >= 0x80 { end += 1 }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(position + 1)...end]))
            position = end + 1
        default:
            position += 1
        }
    }
}
