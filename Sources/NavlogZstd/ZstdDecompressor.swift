import CZstd

/// Decompresses single zstd frames, reusing one decompression context.
///
/// Not thread-safe: give each reader its own. `~Copyable` so its context is freed once.
public struct ZstdDecompressor: ~Copyable {
    private let context: OpaquePointer

    /// Creates a decompressor.
    /// - Throws: ``ZstdError`` when libzstd cannot allocate a context.
    public init() throws(ZstdError) {
        guard let context = ZSTD_createDCtx() else {
            throw ZstdError(code: .outOfMemory, message: "zstd could not allocate a decompression context.")
        }
        self.context = context
    }

    deinit { ZSTD_freeDCtx(context) }

    /// The decompressed size a frame declares in its header, or `nil` when the bytes do not
    /// start a zstd frame with a known content size.
    public static func declaredContentSize(of frame: UnsafeRawBufferPointer) -> Int? {
        let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two top values.
        if size >= UInt64.max - 1 { return nil }
        return size > UInt64(Int.max) ? nil : Int(size)
    }

    /// The exact size of the first complete zstd frame in `bytes`, without decompressing it.
    /// - Throws: ``ZstdError/Code/corruptFrame`` when `bytes` does not start with a whole frame.
    public static func frameSize(in bytes: UnsafeRawBufferPointer) throws(ZstdError) -> Int {
        let size = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
        if ZSTD_isError(size) != 0 {
            throw ZstdError(code: .corruptFrame, message: "The bytes are not one complete zstd frame: \(zstdErrorName(size)).")
        }
        return size
    }

    /// Decompresses exactly one frame that must expand to `expectedSize` bytes, replacing the
    /// contents of `output` (its capacity is reused across calls).
    /// - Throws: ``ZstdError`` when the frame is corrupt (zstd's checksum included) or its
    ///   size differs from `expectedSize`.
    public func decompress(
        frame: UnsafeRawBufferPointer,
        expectedSize: Int,
        into output: inout [UInt8]
    ) throws(ZstdError) {
        do {
            try decompress(frame: frame, expectedSize: expectedSize, into: &output, at: 0)
        } catch {
            output.removeAll(keepingCapacity: true)
            throw error
        }
    }

    /// Decompresses exactly one frame that must expand to `expectedSize` bytes, appending them to
    /// `output` (a grouped block's parts are decompressed one after another into one buffer).
    /// - Throws: ``ZstdError`` as ``decompress(frame:expectedSize:into:)``; `output` keeps only
    ///   what it held before.
    public func decompress(frame: UnsafeRawBufferPointer, expectedSize: Int, appendingTo output: inout [UInt8]) throws(ZstdError) {
        let start = output.count
        do {
            try decompress(frame: frame, expectedSize: expectedSize, into: &output, at: start)
        } catch {
            output.removeLast(output.count - start)
            throw error
        }
    }

    /// Decompresses one frame into `output` from `start` on, leaving `output` exactly `start +
    /// expectedSize` bytes long (what it held before `start` kept). On failure the caller trims
    /// `output` back.
    private func decompress(frame: UnsafeRawBufferPointer, expectedSize: Int, into output: inout [UInt8], at start: Int) throws(ZstdError) {
        // A damaged header can claim any size: a frame that declares another one is refused
        // before anything is allocated for it.
        try Self.checkDeclaredSize(of: frame, expectedSize: expectedSize)
        // Resize without clearing what is kept: zstd overwrites all `expectedSize` bytes when it
        // succeeds (checked below), and the caller trims the buffer when it does not.
        let size = start + expectedSize
        if output.count > size {
            output.removeLast(output.count - size)
        } else {
            output.append(contentsOf: repeatElement(0, count: size - output.count))
        }
        try decompressChecked(frame: frame, expectedSize: expectedSize, over: &output, at: start)
    }

    /// Refuses a frame whose header declares another size than `expectedSize`.
    private static func checkDeclaredSize(of frame: UnsafeRawBufferPointer, expectedSize: Int) throws(ZstdError) {
        if let declared = declaredContentSize(of: frame), declared != expectedSize {
            throw ZstdError(code: .sizeMismatch, message: "A zstd frame declares \(declared) bytes of content where \(expectedSize) were expected.")
        }
    }

    /// Decompresses one frame that must expand to `expectedSize` bytes over `output[start...]`
    /// (which must be that long: a reader that reuses one buffer for several frames sizes it
    /// once and clears nothing). On failure those bytes are unspecified.
    /// - Throws: ``ZstdError`` as ``decompress(frame:expectedSize:into:)``.
    public func decompress(frame: UnsafeRawBufferPointer, expectedSize: Int, over output: inout [UInt8], at start: Int) throws(ZstdError) {
        precondition(start >= 0 && start + expectedSize <= output.count, "the output buffer is shorter than the frame's content")
        try Self.checkDeclaredSize(of: frame, expectedSize: expectedSize)
        try decompressChecked(frame: frame, expectedSize: expectedSize, over: &output, at: start)
    }

    /// ``decompress(frame:expectedSize:over:at:)`` once the frame's declared size was checked.
    private func decompressChecked(frame: UnsafeRawBufferPointer, expectedSize: Int, over output: inout [UInt8], at start: Int) throws(ZstdError) {
        let result = output.withUnsafeMutableBytes { out in
            ZSTD_decompressDCtx(context, out.baseAddress.map { $0 + start }, expectedSize, frame.baseAddress, frame.count)
        }
        if ZSTD_isError(result) != 0 {
            throw ZstdError(code: .decompressionFailed, message: "zstd could not decompress a frame of \(frame.count) bytes: \(zstdErrorName(result)).")
        }
        if result != expectedSize {
            throw ZstdError(code: .sizeMismatch, message: "A zstd frame decompressed to \(result) bytes where \(expectedSize) were expected.")
        }
    }

    /// How far a decompression of the start of one frame (``decompressPrefix(of:expectedSize:over:at:upTo:progress:)``)
    /// has gone: a reader that needs only the first columns of a payload stops there.
    public struct PrefixProgress: Sendable {
        /// Frame bytes consumed so far.
        public fileprivate(set) var consumed = 0
        /// Content bytes written so far (from the call's `start`).
        public fileprivate(set) var produced = 0
        /// Whether the whole frame was decompressed (``produced`` is then its size).
        public fileprivate(set) var finished = false

        /// Nothing decompressed yet: the next call starts the frame afresh.
        public init() {}
    }

    /// Decompresses `frame` (which must expand to `expectedSize` bytes) over `output[start...]`
    /// until at least `upTo` of its content bytes are there or the frame ends, continuing from
    /// `progress` (a new ``PrefixProgress`` starts the frame). libzstd decodes whole blocks of at
    /// most 128 KiB, so what lies more than a block past `upTo` is never decoded: a reader of the
    /// first columns of a large payload skips the cost of the rest. No other decompression may
    /// run on this decompressor between the calls for one frame.
    /// - Throws: ``ZstdError`` when the frame is corrupt, cut short, or declares another size.
    public func decompressPrefix(
        of frame: UnsafeRawBufferPointer, expectedSize: Int, over output: inout [UInt8], at start: Int, upTo: Int, progress: inout PrefixProgress
    ) throws(ZstdError) {
        precondition(start >= 0 && start + expectedSize <= output.count, "the output buffer is shorter than the frame's content")
        if progress.consumed == 0 && progress.produced == 0 && !progress.finished {
            try Self.checkDeclaredSize(of: frame, expectedSize: expectedSize)
            _ = ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
        }
        let target = min(upTo, expectedSize)
        // Once the wanted bytes are the whole content, the frame is read to its end (its
        // checksum, if any, is checked there).
        while !progress.finished && (progress.produced < target || target == expectedSize) {
            let before = (progress.consumed, progress.produced)
            let result = output.withUnsafeMutableBytes { out in
                var outBuffer = ZSTD_outBuffer(dst: out.baseAddress.map { $0 + start }, size: target, pos: progress.produced)
                var inBuffer = ZSTD_inBuffer(src: frame.baseAddress, size: frame.count, pos: progress.consumed)
                let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                progress.produced = outBuffer.pos
                progress.consumed = inBuffer.pos
                return result
            }
            if ZSTD_isError(result) != 0 {
                throw ZstdError(code: .decompressionFailed, message: "zstd could not decompress a frame of \(frame.count) bytes: \(zstdErrorName(result)).")
            }
            if result == 0 {
                progress.finished = true
                if progress.produced != expectedSize {
                    throw ZstdError(code: .sizeMismatch, message: "A zstd frame decompressed to \(progress.produced) bytes where \(expectedSize) were expected.")
                }
            } else if (progress.consumed, progress.produced) == before {
                throw ZstdError(code: .decompressionFailed, message: "A zstd frame of \(frame.count) bytes ends before its content does.")
            }
        }
    }

    /// Decompresses one frame whose header declares its content size.
    /// - Throws: ``ZstdError`` when the frame is corrupt or has no declared size.
    public func decompress(frame: [UInt8], limit: Int = 1 << 30) throws(ZstdError) -> [UInt8] {
        let result: Result<[UInt8], ZstdError> = frame.withUnsafeBytes { raw in
            guard let size = Self.declaredContentSize(of: raw), size <= limit else {
                return .failure(ZstdError(code: .corruptFrame, message: "The bytes do not start a zstd frame with a declared size of at most \(limit) bytes."))
            }
            var output: [UInt8] = []
            do throws(ZstdError) { try decompress(frame: raw, expectedSize: size, into: &output) } catch { return .failure(error) }
            return .success(output)
        }
        return try result.get()
    }
}
