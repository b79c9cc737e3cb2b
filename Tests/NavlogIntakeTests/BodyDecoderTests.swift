import CZlib
import Foundation
import Testing

@testable import NavlogIntake

/// The body decoder against bodies made by zlib and the zstd command (independent encoders),
/// fed in pieces of every size, and against the ways a body goes wrong.
@Suite("Request bodies decoded within their limits")
struct BodyDecoderTests {
    static let limits = BodyDecoder.Limits(maximumBodyBytes: 1 << 20, maximumDecodedBytes: 8 << 20, maximumRatio: 200, ratioCheckAfterBytes: 1 << 20)

    static let lines: [UInt8] = Array(
        (1...2_000).map { #"{"type":"mark","session":"s","seq":\#($0),"name":"screen \#($0 % 17)"}"# + "\n" }.joined().utf8)

    /// gzip through zlib's own deflate (not the decoder's code).
    static func gzip(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                precondition(deflate(&stream, Z_FINISH) == Z_STREAM_END)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        deflateEnd(&stream)
        return Array(output[0..<written])
    }

    /// zstd through the `zstd` command.
    static func zstd(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["zstd", "-q", "-c"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }

    static func decode(_ encoding: BodyDecoder.Encoding, _ body: [UInt8], piece: Int, limits: BodyDecoder.Limits = limits) throws(BodyDecoder.Failure) -> [UInt8] {
        let decoder = try BodyDecoder(encoding: encoding, limits: limits)
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + piece)
            let chunk = Array(body[offset..<end])
            var failure: BodyDecoder.Failure?
            chunk.withUnsafeBytes { bytes in
                do { try decoder.feed(bytes) } catch { failure = error as? BodyDecoder.Failure }
            }
            if let failure { throw failure }
            offset = end
        }
        return try decoder.finish()
    }

    @Test("gzip, zstd and plain bodies decode to their bytes, in pieces of any size", arguments: [1, 7, 1024, 65_536, 1 << 20])
    func decodes(piece: Int) throws {
        #expect(try Self.decode(.gzip, Self.gzip(Self.lines), piece: piece) == Self.lines)
        #expect(try Self.decode(.zstd, Self.zstd(Self.lines), piece: piece) == Self.lines)
        #expect(try Self.decode(.identity, Self.lines, piece: piece) == Self.lines)
    }

    @Test("concatenated gzip members and zstd frames are one body")
    func concatenated() throws {
        let half = Self.lines.count / 2
        let first = Array(Self.lines[..<half])
        let second = Array(Self.lines[half...])
        #expect(try Self.decode(.gzip, Self.gzip(first) + Self.gzip(second), piece: 4096) == Self.lines)
        #expect(try Self.decode(.zstd, Self.zstd(first) + Self.zstd(second), piece: 4096) == Self.lines)
    }

    @Test("a truncated or corrupt body is malformed, saying where")
    func malformed() throws {
        let gzip = Self.gzip(Self.lines)
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.gzip, Array(gzip.prefix(gzip.count - 9)), piece: 512) }
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.gzip, Self.lines, piece: 512) }
        var corrupt = gzip
        corrupt[40] ^= 0xFF
        corrupt[41] ^= 0xFF
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.gzip, corrupt, piece: 512) }
        let zstd = try Self.zstd(Self.lines)
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.zstd, Array(zstd.prefix(zstd.count / 2)), piece: 512) }
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.gzip, [], piece: 1) }
        do {
            _ = try Self.decode(.gzip, gzip + [0x00, 0x01], piece: 100)
            Issue.record("bytes after the gzip stream were taken")
        } catch {
            guard case .malformed(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("after its end"))
        }
    }

    @Test("a bomb is refused while it inflates: output stops at the limit")
    func bomb() throws {
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb = Self.gzip(zeros, level: 9)
        var limits = Self.limits
        limits.maximumDecodedBytes = 1 << 30
        do {
            _ = try Self.decode(.gzip, bomb, piece: 16_384, limits: limits)
            Issue.record("a 64 MiB bomb was inflated")
        } catch {
            guard case .tooLarge(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("bomb"))
        }
        limits.maximumRatio = 1_000_000
        limits.maximumDecodedBytes = 4 << 20
        #expect(throws: BodyDecoder.Failure.tooLarge("The body is over 4194304 bytes once decoded; send smaller batches.")) {
            try Self.decode(.gzip, bomb, piece: 16_384, limits: limits)
        }
    }

    @Test("a body over its size as sent is refused")
    func bodyLimit() {
        var limits = Self.limits
        limits.maximumBodyBytes = 1000
        #expect(throws: BodyDecoder.Failure.self) { try Self.decode(.identity, Self.lines, piece: 999, limits: limits) }
        #expect((try? Self.decode(.identity, Array(Self.lines.prefix(1000)), piece: 999, limits: limits)) == Array(Self.lines.prefix(1000)))
    }

    @Test("Content-Encoding names")
    func encodings() {
        #expect(BodyDecoder.Encoding(header: nil) == .identity)
        #expect(BodyDecoder.Encoding(header: " GZIP ") == .gzip)
        #expect(BodyDecoder.Encoding(header: "zstd") == .zstd)
        #expect(BodyDecoder.Encoding(header: "identity") == .identity)
        #expect(BodyDecoder.Encoding(header: "br") == nil)
    }
}
