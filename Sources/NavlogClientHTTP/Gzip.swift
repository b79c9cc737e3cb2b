import CZlib
import NavlogClient

/// gzip through zlib: one complete gzip member of a whole batch.
enum Gzip {
    /// The gzip member of `input` at `level` (0–9).
    /// - Throws: ``NavlogClient/HTTPTransportError`` when zlib fails (it only does when out of memory).
    static func compress(_ input: [UInt8], level: Int32) throws -> [UInt8] {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw NavlogClient.HTTPTransportError(code: .compression, "zlib could not start a gzip stream.")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let result: Int32 = input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(bound)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else {
            throw NavlogClient.HTTPTransportError(code: .compression, "zlib could not compress a batch (\(String(cString: zError(result)))).")
        }
        output.removeLast(Int(stream.avail_out))
        return output
    }
}
