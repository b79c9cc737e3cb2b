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

    @Test("a frame compressed in sections is one frame that declares its size, decompresses to the input, and is smaller for unlike sections")
    func sections() throws {
        let compressor = try ZstdCompressor(level: 6)
        let decompressor = try ZstdDecompressor()
        // Unlike kinds of bytes, as in a block: hex text, then small binary numbers.
        var text: [UInt8] = [], numbers: [UInt8] = []
        var random = UInt64(0x9E37_79B9_7F4A_7C15)
        for _ in 0..<4_000 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text.append(contentsOf: Array("0x\(String(random >> 28, radix: 16))".utf8))
            numbers.append(contentsOf: [UInt8(random >> 59), UInt8(random >> 61), 1, 4])
        }
        let input = text + numbers
        var sectioned: [UInt8] = [], whole: [UInt8] = []
        try input.withUnsafeBytes { raw in
            try compressor.compress(raw, sectionEnds: [text.count, input.count], appendingTo: &sectioned)
            try compressor.compress(raw, appendingTo: &whole)
        }
        #expect(sectioned.withUnsafeBytes { ZstdDecompressor.declaredContentSize(of: $0) } == input.count)
        #expect(try sectioned.withUnsafeBytes { try ZstdDecompressor.frameSize(in: $0) } == sectioned.count)
        #expect(try decompressor.decompress(frame: sectioned) == input)
        #expect(sectioned.count < whole.count, "\(sectioned.count) bytes in sections, \(whole.count) in one")
        // The context is ready for the next frame afterwards.
        #expect(try decompressor.decompress(frame: compressor.compress(input)) == input)
    }

    @Test("the start of a frame decompresses alone, as far as asked (and on, from where it stopped), and the whole frame to its end")
    func prefix() throws {
        let compressor = try ZstdCompressor(level: 6, contentChecksum: true)
        let decompressor = try ZstdDecompressor()
        var random = UInt64(7)
        let input = (0..<600_000).map { _ in
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(random >> 60)
        }
        let frame = try compressor.compress(input)
        // Over a buffer of old bytes, as a block reader reuses one.
        var output = [UInt8](repeating: 0xAA, count: input.count + 10)
        var progress = ZstdDecompressor.PrefixProgress()
        try frame.withUnsafeBytes { raw in
            try decompressor.decompressPrefix(of: raw, expectedSize: input.count, over: &output, at: 10, upTo: 1_000, progress: &progress)
            #expect(progress.produced >= 1_000 && !progress.finished)
            // libzstd decodes blocks of at most 128 KiB: the rest of the frame is not decoded.
            #expect(progress.produced <= 128 << 10 && progress.consumed < frame.count / 2)
            #expect(Array(output[10..<(10 + progress.produced)]) == Array(input[..<progress.produced]))
            #expect(output[(10 + progress.produced)...].allSatisfy { $0 == 0xAA }, "nothing written past what was produced")
            try decompressor.decompressPrefix(of: raw, expectedSize: input.count, over: &output, at: 10, upTo: 300_000, progress: &progress)
            #expect(progress.produced >= 300_000 && progress.produced < input.count)
            try decompressor.decompressPrefix(of: raw, expectedSize: input.count, over: &output, at: 10, upTo: .max, progress: &progress)
            #expect(progress.finished && progress.produced == input.count && progress.consumed == frame.count)
        }
        #expect(Array(output[10...]) == input && output[..<10].allSatisfy { $0 == 0xAA })
        // A frame cut short, or that expands to another size than expected, is an error.
        for (bytes, expected) in [(Array(frame.dropLast(9)), input.count), (frame, input.count - 1)] {
            var fresh = ZstdDecompressor.PrefixProgress()
            #expect(throws: ZstdError.self) {
                try bytes.withUnsafeBytes { raw in
                    try decompressor.decompressPrefix(of: raw, expectedSize: expected, over: &output, at: 0, upTo: .max, progress: &fresh)
                }
            }
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

    @Test("a size claimed by a damaged header that the frame does not declare is refused before anything is allocated for it")
    func claimedSizeMismatch() throws {
        let compressor = try ZstdCompressor(level: 3)
        let decompressor = try ZstdDecompressor()
        let frame = try compressor.compress((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { raw.deallocate() }
        raw.copyBytes(from: frame)
        var output: [UInt8] = []
        do {
            try decompressor.decompress(frame: UnsafeRawBufferPointer(rebasing: raw[..<frame.count]), expectedSize: 200 << 20, into: &output)
            Issue.record("a frame decompressed to a size it does not declare")
        } catch {
            #expect(error.code == .sizeMismatch, "\(error.message)")
        }
        #expect(output.capacity < 1 << 20, "no 200 MiB buffer was made for a claim the frame contradicts")
        // The reused buffer holds exactly the frame's content afterwards, longer or shorter than before.
        for size in [5_000, 100, 20_000] {
            let input = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            let frame = try compressor.compress(input)
            raw.copyBytes(from: frame)
            try decompressor.decompress(frame: UnsafeRawBufferPointer(rebasing: raw[..<frame.count]), expectedSize: size, into: &output)
            #expect(output == input)
        }
    }
}
