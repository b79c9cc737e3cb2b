import CNavlogCRC

/// CRC-32C (Castagnoli), the checksum of blocks and index files: the CPU's CRC instructions
/// when it has them (x86-64 SSE4.2, AArch64 CRC), else slice-by-8 in software.
public enum CRC32C {
    /// How a checksum is computed.
    public enum Implementation: Sendable {
        /// The CPU's instructions when available, else software.
        case best
        /// Slice-by-8 tables (tests compare the two).
        case software
    }

    /// Whether this CPU has CRC-32C instructions.
    public static let hardwareAvailable = navlog_crc32c_hardware_available() != 0

    /// Eight 256-entry tables, one after the other: entry `k * 256 + n`.
    static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            table[n] = c
        }
        for n in 0..<256 {
            var c = table[n]
            for k in 1..<8 {
                c = table[Int(c & 0xFF)] ^ (c >> 8)
                table[k * 256 + n] = c
            }
        }
        return table
    }()

    /// Continues a running checksum over `bytes` (start with 0).
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer, using implementation: Implementation = .best) -> UInt32 {
        if implementation == .best, hardwareAvailable, let base = bytes.baseAddress {
            return navlog_crc32c_hardware(crc, base, bytes.count)
        }
        return softwareUpdate(crc, bytes)
    }

    private static func softwareUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        var i = 0
        let n = bytes.count
        table.withUnsafeBufferPointer { t in
            while i + 8 <= n {
                let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self).littleEndian ^ UInt64(c)
                c =
                    t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        return ~c
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { update(0, bytes) }

    /// The checksum of an array's bytes.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { update(0, $0) } }
}

extension CRC32C {
    /// Where a single flipped bit in `bytes` is, given the checksum they should have: CRC-32C
    /// is affine, so `checksum(bytes) ^ expected` is the checksum (zero start, no final
    /// inversion) of the error pattern alone, and a one-bit pattern's checksum tells its
    /// position (published CRC tables give CRC-32C a Hamming distance of at least 3 for the
    /// frame sizes navlog writes, so no two one-bit patterns share a checksum; not checked
    /// here). Damage of several bits can still match some one-bit pattern by chance (about
    /// 8·n/2³² for n bytes): the caller must not take a match as proof on its own. Returns
    /// `(byte, bit)` to flip, `(-1, bit)` when the stored checksum itself has the flipped bit,
    /// or nil when no one-bit pattern explains the checksum.
    /// Cost: eight table steps per byte (a few ms per MiB).
    public static func locateSingleBitError(in bytes: UnsafeRawBufferPointer, expected: UInt32) -> (byte: Int, bit: UInt8)? {
        let syndrome = checksum(bytes) ^ expected
        guard syndrome != 0 else { return nil }
        if syndrome.nonzeroBitCount == 1 { return (-1, UInt8(syndrome.trailingZeroBitCount)) }
        return table.withUnsafeBufferPointer { t -> (Int, UInt8)? in
            // v[j]: the checksum of bit j of the byte at the current position followed by the
            // zero bytes after it; one zero byte more per step towards the start.
            var v = (0..<8).map { t[1 << $0] }
            var index = bytes.count - 1
            while index >= 0 {
                for bit in 0..<8 where v[bit] == syndrome { return (index, UInt8(bit)) }
                for bit in 0..<8 { v[bit] = t[Int(v[bit] & 0xFF)] ^ (v[bit] >> 8) }
                index -= 1
            }
            return nil
        }
    }
}
