/// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Validation {
    /// The offset of the first byte that makes `bytes` invalid UTF-8, or `nil` when it is valid.
    static func firstInvalidByte(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let n = bytes.count
        var i = 0
        while i < n {
            // Eight ASCII bytes at a time: the common case for event lines.
            if i + 8 <= n, base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let b0 = base.load(fromByteOffset: i, as: UInt8.self)
            if b0 < 0x80 { i += 1; continue }
            func continuation(_ k: Int) -> UInt8? {
                guard i + k < n else { return nil }
                let b = base.load(fromByteOffset: i + k, as: UInt8.self)
                return b & 0xC0 == 0x80 ? b : nil
            }
            switch b0 {
            case 0xC2...0xDF:
                guard continuation(1) != nil else { return i }
                i += 2
            case 0xE0...0xEF:
                guard let b1 = continuation(1), continuation(2) != nil else { return i }
                if b0 == 0xE0 && b1 < 0xA0 { return i }
                if b0 == 0xED && b1 > 0x9F { return i }
                i += 3
            case 0xF0...0xF4:
                guard let b1 = continuation(1), continuation(2) != nil, continuation(3) != nil else { return i }
                if b0 == 0xF0 && b1 < 0x90 { return i }
                if b0 == 0xF4 && b1 > 0x8F { return i }
                i += 4
            default:
                return i
            }
        }
        return nil
    }
}
