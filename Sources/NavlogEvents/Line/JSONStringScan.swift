/// The byte scan shared by navlog's JSON readers (the ingest path's ``JSONTokenizer`` and
/// `navlog import`'s record reader): where a run of string content that needs no decoding ends.
package enum JSONStringScan {
    /// The offset of the first byte at or after `start` that ends a run of plain string
    /// content: a quote, a backslash or a control character (`count` if there is none).
    ///
    /// Eight bytes at a time: per byte, `(x - c) & ~x & 0x80` is set when `x < c` (with `c`
    /// = 0x01 after XOR with the quote or backslash: `x` equals it). A borrow only runs into
    /// the bytes above a hit, so the lowest flagged byte is always a real one.
    @inlinable @inline(__always)
    package static func endOfPlainRun(_ base: UnsafePointer<UInt8>, from start: Int, to count: Int) -> Int {
        var i = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self).littleEndian
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let hits = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < count {
            let b = base[i]
            if b == 0x22 || b == 0x5C || b < 0x20 { return i }
            i += 1
        }
        return count
    }
}
