import CZstd

/// Compresses buffers into independent zstd frames, reusing one compression context.
///
/// A compressor is not thread-safe: give each writer its own. It is `~Copyable` so the
/// context it owns is freed exactly once.
public struct ZstdCompressor: ~Copyable {
    private let context: OpaquePointer

    /// The compression level frames are written at.
    public let level: Int32

    /// Creates a compressor.
    /// - Parameters:
    ///   - level: zstd compression level (1...19 are the usual ones; 3 is zstd's default).
    ///   - contentChecksum: whether every frame carries zstd's XXH64 content checksum, so
    ///     `zstd -d` and our reader both detect corruption of the decompressed bytes.
    /// - Throws: ``ZstdError`` when libzstd cannot create or configure the context.
    public init(level: Int32 = 3, contentChecksum: Bool = true) throws(ZstdError) {
        guard let context = ZSTD_createCCtx() else {
            throw ZstdError(code: .outOfMemory, message: "zstd could not allocate a compression context.")
        }
        do {
            try zstdCheck(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level), .compressionFailed, "setting the compression level")
            try zstdCheck(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, contentChecksum ? 1 : 0), .compressionFailed, "enabling content checksums")
            // Frames always record their decompressed size so readers can allocate exactly once.
            try zstdCheck(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1), .compressionFailed, "enabling content sizes")
        } catch {
            ZSTD_freeCCtx(context)
            throw error
        }
        self.context = context
        self.level = level
    }

    deinit { ZSTD_freeCCtx(context) }

    /// Compresses `input` as one complete zstd frame and appends the frame to `output`.
    /// - Returns: the number of bytes appended.
    /// - Throws: ``ZstdError`` with zstd's message when compression fails.
    @discardableResult
    public func compress(_ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(ZstdError) -> Int {
        let bound = ZSTD_compressBound(input.count)
        let start = output.count
        // zstd writes straight into the array's storage; the zero fill is a memset, small
        // next to compressing the same number of bytes.
        output.append(contentsOf: repeatElement(0, count: bound))
        let result = output.withUnsafeMutableBytes { out in
            ZSTD_compress2(context, out.baseAddress! + start, bound, input.baseAddress, input.count)
        }
        if ZSTD_isError(result) != 0 {
            output.removeLast(bound)
            throw ZstdError(code: .compressionFailed, message: "zstd could not compress a block of \(input.count) bytes: \(zstdErrorName(result)).")
        }
        output.removeLast(bound - result)
        return result
    }

    /// Compresses `input` as one complete zstd frame and returns the frame.
    /// - Throws: ``ZstdError`` with zstd's message when compression fails.
    public func compress(_ input: [UInt8]) throws(ZstdError) -> [UInt8] {
        var output: [UInt8] = []
        let result: Result<Int, ZstdError> = input.withUnsafeBytes { raw in
            do throws(ZstdError) { return .success(try compress(raw, appendingTo: &output)) } catch { return .failure(error) }
        }
        _ = try result.get()
        return output
    }
}

func zstdCheck(_ result: Int, _ code: ZstdError.Code, _ doing: String) throws(ZstdError) {
    if ZSTD_isError(result) != 0 {
        throw ZstdError(code: code, message: "zstd failed while \(doing): \(zstdErrorName(result)).")
    }
}

func zstdErrorName(_ result: Int) -> String {
    String(cString: ZSTD_getErrorName(result))
}
