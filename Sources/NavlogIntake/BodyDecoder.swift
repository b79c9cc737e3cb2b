import CZlib
import CZstd

/// Decodes a request body as it arrives (`Content-Encoding: gzip`, `zstd` or none), never
/// holding more than ``Limits/maximumDecodedBytes`` of output: a decompression bomb is refused
/// while it inflates, not after.
///
/// One decoder per request; it owns a zlib or zstd stream, freed by ``finish()`` or on deinit.
final class BodyDecoder {
    /// How a body is encoded (`Content-Encoding`).
    enum Encoding: Sendable, Equatable {
        /// No encoding (`identity` or no header).
        case identity
        /// gzip (RFC 1952), also zlib-wrapped deflate (`deflate`).
        case gzip
        /// A zstd frame or frames (RFC 8878).
        case zstd

        /// The encoding a `Content-Encoding` value names, or nil for one the intake cannot read.
        init?(header: String?) {
            guard let header else {
                self = .identity
                return
            }
            switch header.trimmingSpaces.lowercased() {
            case "", "identity": self = .identity
            case "gzip", "x-gzip", "deflate": self = .gzip
            case "zstd": self = .zstd
            default: return nil
            }
        }
    }

    /// What a body may cost.
    struct Limits: Sendable {
        /// The most bytes a body may have as sent (encoded).
        var maximumBodyBytes: Int
        /// The most bytes a body may have once decoded.
        var maximumDecodedBytes: Int
        /// The highest decoded/encoded ratio taken once the output passes
        /// ``ratioCheckAfterBytes``: JSON Lines of navigation events compress 10–30×, a bomb
        /// thousands of times.
        var maximumRatio: Int
        /// Output below this size is never judged by its ratio (a small body of repeated
        /// lines compresses very well and is harmless).
        var ratioCheckAfterBytes: Int
    }

    /// Why a body was refused.
    enum Failure: Error, Equatable {
        /// The bytes are not what the encoding says (HTTP 400).
        case malformed(String)
        /// The body is over a limit (HTTP 413).
        case tooLarge(String)
    }

    private let encoding: Encoding
    private let limits: Limits
    private var zlib: UnsafeMutablePointer<z_stream>?
    private var zstd: OpaquePointer?
    /// Encoded bytes taken so far.
    private(set) var encodedBytes = 0
    /// The decoded body so far.
    private(set) var output: [UInt8] = []
    /// Whether the encoded stream said it ended (a gzip member or zstd frame closed).
    private var streamEnded = false
    private var scratch = [UInt8](repeating: 0, count: 64 << 10)

    /// Prepares a decoder for one body.
    init(encoding: Encoding, limits: Limits) throws(Failure) {
        self.encoding = encoding
        self.limits = limits
        switch encoding {
        case .identity:
            break
        case .gzip:
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            // 32 + 15: a gzip or zlib header, detected by zlib; the largest window.
            guard inflateInit2_(stream, 32 + 15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                stream.deallocate()
                throw .malformed("The intake could not start a gzip decoder.")
            }
            zlib = stream
        case .zstd:
            guard let stream = ZSTD_createDStream() else { throw .malformed("The intake could not start a zstd decoder.") }
            // A frame may ask for a window of at most 2^23 bytes (8 MiB, zstd -19's); larger
            // windows are memory a client could make the intake hold per request.
            ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, 23)
            zstd = stream
        }
    }

    deinit { release() }

    /// Takes the next piece of the body as sent.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        encodedBytes += bytes.count
        if encodedBytes > limits.maximumBodyBytes {
            throw .tooLarge("The body is over \(limits.maximumBodyBytes) bytes as sent; send smaller batches.")
        }
        guard !bytes.isEmpty else { return }
        switch encoding {
        case .identity:
            try appendDecoded(bytes)
        case .gzip:
            try inflate(bytes)
        case .zstd:
            try decompressZstd(bytes)
        }
    }

    /// Ends the body: checks that the encoded stream was complete and returns the decoded bytes.
    func finish() throws(Failure) -> [UInt8] {
        defer { release() }
        switch encoding {
        case .identity:
            break
        case .gzip, .zstd:
            if encodedBytes == 0 {
                throw .malformed("The body is empty but Content-Encoding says it is \(encoding == .gzip ? "gzip" : "zstd"); send the encoded events, or no Content-Encoding.")
            }
            if !streamEnded {
                throw .malformed("The \(encoding == .gzip ? "gzip" : "zstd") body ends before its stream does (truncated after \(encodedBytes) bytes); send the whole body.")
            }
        }
        return output
    }

    private func release() {
        if let stream = zlib {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            zlib = nil
        }
        if let stream = zstd {
            ZSTD_freeDStream(stream)
            zstd = nil
        }
    }

    private func appendDecoded(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        if output.count + bytes.count > limits.maximumDecodedBytes {
            throw .tooLarge("The body is over \(limits.maximumDecodedBytes) bytes once decoded; send smaller batches.")
        }
        output.append(contentsOf: bytes)
        if output.count > limits.ratioCheckAfterBytes, encoding != .identity, output.count / max(1, encodedBytes) > limits.maximumRatio {
            throw .tooLarge(
                "The body decodes to more than \(limits.maximumRatio) times its size (\(output.count) bytes from \(encodedBytes)), which is what a decompression bomb does; the intake refuses it."
            )
        }
    }

    private func inflate(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let stream = zlib else { return }
        var input = bytes
        while !input.isEmpty {
            if streamEnded {
                // Concatenated gzip members are one stream (RFC 1952 2.2); anything else after
                // the end is not gzip.
                guard input.count >= 2, input[0] == 0x1f, input[1] == 0x8b, inflateReset(stream) == Z_OK else {
                    throw .malformed("The gzip body has \(input.count) bytes after its end that are not another gzip member.")
                }
                streamEnded = false
            }
            let offset = encodedBytes - input.count
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            var failure: Failure?
            scratch.withUnsafeMutableBytes { out in
                while true {
                    stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(out.count)
                    let result = CZlib.inflate(stream, Z_NO_FLUSH)
                    guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
                        let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(result)"
                        let at = offset + input.count - Int(stream.pointee.avail_in)
                        failure = .malformed("The body is not valid gzip (\(detail)) at or before byte \(at) of the body.")
                        return
                    }
                    let produced = out.count - Int(stream.pointee.avail_out)
                    if produced > 0 {
                        do {
                            try appendDecoded(UnsafeRawBufferPointer(rebasing: out[0..<produced]))
                        } catch {
                            failure = error as? Failure ?? .malformed("\(error)")
                            return
                        }
                    }
                    if result == Z_STREAM_END {
                        streamEnded = true
                        return
                    }
                    // More output may wait only when the output buffer was filled.
                    if stream.pointee.avail_out != 0 { return }
                }
            }
            if let failure { throw failure }
            let consumed = input.count - Int(stream.pointee.avail_in)
            input = UnsafeRawBufferPointer(rebasing: input[consumed...])
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
            if !streamEnded && !input.isEmpty {
                throw .malformed("The gzip decoder stopped \(input.count) bytes before the end of what was sent without ending its stream.")
            }
        }
    }

    private func decompressZstd(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard let stream = zstd else { return }
        var inBuffer = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
        var failure: Failure?
        scratch.withUnsafeMutableBytes { out in
            while true {
                var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                if ZSTD_isError(hint) != 0 {
                    let name = String(cString: ZSTD_getErrorName(hint))
                    failure = .malformed("The body is not valid zstd (\(name)) at or before byte \(encodedBytes - bytes.count + inBuffer.pos).")
                    return
                }
                if outBuffer.pos > 0 {
                    do {
                        try appendDecoded(UnsafeRawBufferPointer(rebasing: out[0..<outBuffer.pos]))
                    } catch {
                        failure = error as? Failure ?? .malformed("\(error)")
                        return
                    }
                }
                // 0: a frame is complete and flushed; a next frame may start in the input.
                streamEnded = hint == 0
                if inBuffer.pos == inBuffer.size && outBuffer.pos < outBuffer.size { break }
            }
        }
        if let failure { throw failure }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return view
    }
}
