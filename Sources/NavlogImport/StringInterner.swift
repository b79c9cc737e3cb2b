import NavlogEvents

/// Keeps one copy of each distinct string: class names, titles and session ids repeat across
/// thousands of records, and a Swift string shares its storage when copied, so interning makes
/// the kept observations cost a reference each instead of a buffer each.
///
/// Strings are found by their bytes (``ByteStringTable``), so a string read from a record
/// (``intern(_:_:)``) is made only the first time its bytes are seen.
struct StringInterner: Sendable {
    /// The bytes of each kept string; a string's reference is its index in ``strings``.
    private var table = ByteStringTable()
    private var strings: [String] = []

    /// Up to 15 bytes of UTF-8 a string holds inline: nothing to share, and nothing to allocate.
    private static let inlineBytes = 15

    /// The kept copy of the string whose UTF-8 is `bytes` (made from them if new).
    mutating func intern(utf8 bytes: UnsafeRawBufferPointer) -> String {
        if bytes.count <= Self.inlineBytes { return String(decoding: bytes, as: UTF8.self) }
        let (reference, inserted) = table.insert(bytes)
        if inserted { strings.append(String(decoding: bytes, as: UTF8.self)) }
        return strings[Int(reference)]
    }

    /// The kept copy of `text`.
    mutating func intern(_ text: String) -> String {
        if text.utf8.count <= Self.inlineBytes { return text }
        var bytes = text
        let (reference, inserted) = bytes.withUTF8 { table.insert(UnsafeRawBufferPointer($0)) }
        if inserted { strings.append(text) }
        return strings[Int(reference)]
    }

    /// The kept copy of `text`, or `nil`.
    mutating func intern(_ text: String?) -> String? {
        text.map { intern($0) }
    }

    /// An interned string cut to ``ImportedController/maximumFieldBytes``, the cut one interned
    /// too (most are short enough to be kept as they are, with no second lookup).
    mutating func cut(_ interned: String) -> String {
        interned.utf8.count <= ImportedController.maximumFieldBytes ? interned : intern(ImportedController.cut(interned))
    }

    /// The kept copy of a string node's text unless it is empty (as
    /// ``JSONDocument/nonEmptyString(_:)``); `nil` for no node or any other kind.
    mutating func nonEmpty(_ document: JSONDocument, _ node: JSONDocument.Node?) -> String? {
        guard let node, let text = intern(document, node), !text.isEmpty else { return nil }
        return text
    }

    /// The kept copy of the string node `node`'s text (escapes decoded), or `nil` when it is
    /// no string.
    mutating func intern(_ document: JSONDocument, _ node: JSONDocument.Node) -> String? {
        document.withStringBytes(node) { intern(utf8: $0) }
    }
}
