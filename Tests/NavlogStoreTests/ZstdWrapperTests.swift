import NavlogZstd
import Testing

@Suite("The zstd wrapper")
struct ZstdWrapperTests {
    @Test("frames round-trip with reused contexts and declare their size")
    func roundTrip() throws {
        let compressor = try ZstdCompressor(level: 3)
        let decompressor = try ZstdDecompressor()
        for size in [0, 1, 1000, 300_000] {
            let input = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
            let frame = try compressor.compress(input)
            #expect(frame.withUnsafeBytes { ZstdDecompressor.declaredContentSize(of: $0) } == size)
            #expect(try frame.withUnsafeBytes { try ZstdDecompressor.frameSize(in: $0) } == frame.count)
            #expect(try decompressor.decompress(frame: frame) == input)
        }
    }

    @Test("a corrupt frame is a Swift error carrying zstd's own message")
    func corruptFrame() throws {
        let compressor = try ZstdCompressor(level: 3)
        var frame = try compressor.compress(Array(repeating: 42, count: 10_000) + Array(0..<200))
        frame[frame.count - 2] ^= 0xFF  // inside the content checksum
        let decompressor = try ZstdDecompressor()
        do {
            _ = try decompressor.decompress(frame: frame)
            Issue.record("a damaged frame decompressed")
        } catch {
            #expect(error.code == .decompressionFailed)
            #expect(error.message.contains("checksum"), "\(error.message)")
        }
        #expect(throws: ZstdError.self) { _ = try decompressor.decompress(frame: [1, 2, 3, 4]) }
    }
}
