/// CRC-32C (Castagnoli), the checksum of blocks and index files; slice-by-8 in software.
public enum CRC32C {
    static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            tables[0][n] = c
        }
        for n in 0..<256 {
            var c = tables[0][n]
            for k in 1..<8 {
                c = tables[0][Int(c & 0xFF)] ^ (c >> 8)
                tables[k][n] = c
            }
        }
        return tables
    }()

    /// Continues a running checksum over `bytes` (start with 0).
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c = ~crc
        var i = 0
        let n = bytes.count
        tables.withUnsafeBufferPointer { t in
            let t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4], t5 = t[5], t6 = t[6], t7 = t[7]
            t0.withUnsafeBufferPointer { t0 in
                t1.withUnsafeBufferPointer { t1 in
                    t2.withUnsafeBufferPointer { t2 in
                        t3.withUnsafeBufferPointer { t3 in
                            t4.withUnsafeBufferPointer { t4 in
                                t5.withUnsafeBufferPointer { t5 in
                                    t6.withUnsafeBufferPointer { t6 in
                                        t7.withUnsafeBufferPointer { t7 in
                                            while i + 8 <= n {
                                                let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self).littleEndian ^ UInt64(c)
                                                c =
                                                    t7[Int(word & 0xFF)] ^ t6[Int((word >> 8) & 0xFF)] ^ t5[Int((word >> 16) & 0xFF)] ^ t4[Int((word >> 24) & 0xFF)]
                                                    ^ t3[Int((word >> 32) & 0xFF)] ^ t2[Int((word >> 40) & 0xFF)] ^ t1[Int((word >> 48) & 0xFF)] ^ t0[Int(word >> 56)]
                                                i += 8
                                            }
                                            while i < n {
                                                c = t0[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                                                i += 1
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return ~c
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { update(0, bytes) }

    /// The checksum of an array's bytes.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { update(0, $0) } }
}
