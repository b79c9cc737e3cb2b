/// An error from the log store: what happened, where, and what to do.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable short name.
        public let name: String
        private init(_ name: String) { self.name = name }
        /// A system call failed (the message carries errno's text).
        public static let io = Code("io")
        /// Data on disk is damaged (checksum, framing or structure).
        public static let damaged = Code("damaged")
        /// Another process holds the data directory's writer lock.
        public static let locked = Code("locked")
        /// The data directory is missing or not usable.
        public static let badDirectory = Code("bad-directory")
        /// zstd failed.
        public static let compression = Code("compression")
        /// The disk (or the file size limit) is full.
        public static let noSpace = Code("no-space")
        /// A sealed segment was written again (compacted) after the reader catalogued it.
        public static let changed = Code("changed")
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence that says what happened and, where it helps, what to do.
    public var message: String
    /// The file involved, if any.
    public var path: String?
    /// The byte offset in that file, if any.
    public var offset: Int?
    /// The errno of a failed system call, if any.
    public var errno: Int32?

    /// Creates an error.
    public init(code: Code, message: String, path: String? = nil, offset: Int? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.errno = errno
    }

    public var description: String { message }
}
