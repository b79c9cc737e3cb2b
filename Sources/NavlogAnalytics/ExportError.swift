/// An export failure, said as a sentence.
public struct ExportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Sendable, Hashable {
        /// The options cannot make an export (no table, a file where the directory should be).
        case invalidOptions
        /// The output directory already holds what the export would write.
        case outputExists
        /// The output tree holds another layout (host partitions or not).
        case layoutMismatch
        /// The incremental state file cannot be read, or belongs to other options.
        case stateMismatch
        /// The compressor failed.
        case compression
        /// A file could not be created, written, renamed or deleted.
        case io
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String
    /// An error of `code` (an I/O failure unless said otherwise).
    public init(_ message: String, code: Code = .io) {
        self.message = message
        self.code = code
    }
    public var description: String { message }
}
