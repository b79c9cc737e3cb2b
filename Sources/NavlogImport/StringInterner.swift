/// Keeps one copy of each distinct string: class names, titles and session ids repeat across
/// thousands of records, and a Swift string shares its storage when copied, so interning makes
/// the kept observations cost a reference each instead of a buffer each.
struct StringInterner: Sendable {
    private var table: [String: String] = [:]

    /// The kept copy of `text`.
    mutating func intern(_ text: String) -> String {
        // Up to 15 bytes of UTF-8 a string holds inline: nothing to share.
        if text.utf8.count <= 15 { return text }
        if let kept = table[text] { return kept }
        table[text] = text
        return text
    }

    /// The kept copy of `text`, or `nil`.
    mutating func intern(_ text: String?) -> String? {
        text.map { intern($0) }
    }
}
