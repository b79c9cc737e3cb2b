/// One JSON value read from an import file, kept as its bytes plus a flat table of nodes.
///
/// Nothing is decoded until asked for: a string is a byte range until ``string(_:)`` reads it,
/// a number is its text until ``number(_:)`` does, and looking a key up compares bytes. Each
/// node records where its subtree ends, so skipping a value is one step. This keeps Foundation's
/// decoders off the per-record path (docs/IMPORT.md has the figures).
public struct JSONDocument: Sendable {
    /// What a node is.
    public enum Kind: UInt8, Sendable {
        /// `{…}`: its children alternate key (a string node) and value.
        case object
        /// `[…]`.
        case array
        /// A string; its range is the bytes between the quotes, still escaped.
        case string
        /// A number; its range is its text.
        case number
        /// `true` or `false`.
        case bool
        /// `null`.
        case null

        /// The kind's name in messages ("expected a string, found an object").
        public var name: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            }
        }
    }

    /// A reference to one node of a document.
    public struct Node: Sendable, Hashable {
        /// Its index in the document's node table.
        public let index: Int32
    }

    /// One entry of the node table.
    struct Entry: Sendable {
        var kind: Kind
        /// Whether a string contains escapes (it must then be decoded, not copied).
        var escaped: Bool
        /// `true` for a `true` boolean.
        var flag: Bool
        /// The node's bytes (a string's without its quotes).
        var start: Int32
        var end: Int32
        /// The index just past this node's subtree: its next sibling, if any.
        var next: Int32
    }

    /// The bytes the value is in (a ``RecordReader`` keeps a chunk's records in one array):
    /// the value's are those from ``byteStart`` on.
    let bytes: [UInt8]
    /// The node table the value's nodes are in, in document order (a parent before its
    /// children): those from ``rootIndex`` on.
    let entries: [Entry]
    /// Where the value begins in ``bytes``.
    let byteStart: Int
    /// The index of the value's node in ``entries``.
    let rootIndex: Int32

    /// The top-level value.
    public var root: Node { Node(index: rootIndex) }

    /// What `node` is.
    public func kind(_ node: Node) -> Kind { entries[Int(node.index)].kind }

    /// The byte offset in the value where `node` begins (for messages: line numbers inside a record).
    public func offset(_ node: Node) -> Int { Int(entries[Int(node.index)].start) - byteStart }

    /// How many lines into the value the byte at `offset` (from the value's start) is (0 for the first line).
    public func lineOffset(of offset: Int) -> Int {
        var lines = 0
        for byte in bytes[byteStart..<min(byteStart + max(offset, 0), bytes.count)] where byte == 0x0A { lines += 1 }
        return lines
    }
}
