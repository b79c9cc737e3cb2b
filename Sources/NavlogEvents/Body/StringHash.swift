/// A fast 64-bit hash of byte strings, used to intern strings and to name sessions in block
/// filters and indexes. It is part of the on-disk format (session filters and postings store
/// it): never change it.
public enum StringHash {
    /// Hashes `bytes`.
    @inlinable
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var i = 0
        let n = bytes.count
        while i + 8 <= n {
            h = mix(h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self).littleEndian)
            i += 8
        }
        if i < n {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                tail |= UInt64(bytes[i]) << shift
                shift += 8
                i += 1
            }
            h = mix(h ^ tail)
        }
        return finalize(h)
    }

    /// Hashes a string's UTF-8 bytes.
    public static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    static func mix(_ value: UInt64) -> UInt64 {
        (value &* 0xBF58_476D_1CE4_E5B9).rotatedLeft(by: 31) &* 0x94D0_49BB_1331_11EB
    }

    @inlinable
    static func finalize(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension UInt64 {
    @inlinable
    func rotatedLeft(by count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
