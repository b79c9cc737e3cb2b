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

@Test("the CPU's CRC-32C instructions and the software tables agree on every length and alignment")
func crc32cHardwareAgreesWithSoftware() {
    var state: UInt64 = 0x1234_5678
    let bytes = (0..<4_099).map { _ -> UInt8 in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
    #expect(Array("123456789".utf8).withUnsafeBytes { CRC32C.update(0, $0, using: .software) } == 0xE306_9283)
    bytes.withUnsafeBytes { raw in
        for start in 0..<9 {
            for length in [0, 1, 7, 8, 9, 63, 64, 65, 1_000, 4_090 - start] {
                let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                #expect(CRC32C.update(0x89AB_CDEF, slice) == CRC32C.update(0x89AB_CDEF, slice, using: .software), "start \(start) length \(length)")
            }
        }
    }
    print("CRC-32C in hardware: \(CRC32C.hardwareAvailable)")
}
