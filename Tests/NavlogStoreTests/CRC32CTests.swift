import NavlogStore
import Testing

@Test("CRC-32C gives the standard check value and the same result however the input is split")
func crc32cKnownAnswer() {
    let input = Array("123456789".utf8)
    #expect(CRC32C.checksum(input) == 0xE306_9283)
    let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let whole = CRC32C.checksum(long)
    let split = long.withUnsafeBytes { raw in
        CRC32C.update(CRC32C.update(0, UnsafeRawBufferPointer(rebasing: raw[..<333])), UnsafeRawBufferPointer(rebasing: raw[333...]))
    }
    #expect(whole == split)
}
