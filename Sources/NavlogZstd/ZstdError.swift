/// An error reported by libzstd, with zstd's own explanation.
public struct ZstdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of zstd failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case compressionFailed, decompressionFailed, corruptFrame, sizeMismatch, outOfMemory
        }
        fileprivate let base: Base
        /// Compressing a buffer failed.
        public static let compressionFailed = Code(base: .compressionFailed)
        /// Decompressing a frame failed (zstd rejected the input).
        public static let decompressionFailed = Code(base: .decompressionFailed)
        /// The input is not one complete zstd frame (truncated, or not zstd at all).
        public static let corruptFrame = Code(base: .corruptFrame)
        /// The frame decompressed to a size other than the one the caller expected.
        public static let sizeMismatch = Code(base: .sizeMismatch)
        /// libzstd could not allocate a context.
        public static let outOfMemory = Code(base: .outOfMemory)
        public var description: String { "\(base)" }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence that says what failed, including zstd's message when it gave one.
    public var message: String

    /// Creates an error with a code and a message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
