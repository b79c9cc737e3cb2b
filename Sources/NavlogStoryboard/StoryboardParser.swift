public import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads `.storyboard` files (Interface Builder's XML, document versions 1.1, 2.0 and 3.0,
/// iPhone, iPad and other runtimes) into navigation graphs.
public enum StoryboardParser {
    /// Parses the XML of a storyboard.
    ///
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - path: where they came from: it names the storyboard (its last component without
    ///     `.storyboard`, which is what references across files use) and appears in errors.
    /// - Returns: the storyboard's scenes, initial scene and segues.
    /// - Throws: ``StoryboardError`` naming `path`, the line and column XMLParser was at, and
    ///   what was wrong: not XML, malformed or truncated XML, or XML that is not a storyboard.
    public static func parse(data: Data, path: String) throws(StoryboardError) -> Storyboard {
        try checkEncoding(data, path: path)
        let reader = StoryboardXMLReader(data: data, path: path)
        let parser = XMLParser(data: data)
        // A storyboard never needs external entities; resolving them would read other files.
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        // The result of parse() is not enough: on Linux it can be true after an error was
        // reported, so the reader's own record decides.
        _ = parser.parse()
        reader.finish()
        if let failure = reader.failure { throw failure }
        return reader.storyboard()
    }
}

extension StoryboardParser {
    /// Interface Builder writes UTF-8 only. Anything else is refused before libxml2 sees it:
    /// libxml2 switches to a declared or guessed encoding through iconv, and on bytes that are
    /// not valid in it (a fuzzer found Shift_JIS, UTF-7, EUC-JP, and NUL bytes that make it guess
    /// UCS-4) it crashes instead of reporting an error.
    static func checkEncoding(_ data: Data, path: String) throws(StoryboardError) {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let leading = bytes.prefix { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        bytes = bytes.dropFirst(leading.count)
        guard let first = bytes.first else { return }  // empty: the reader says so
        guard first == UInt8(ascii: "<") else {
            throw StoryboardError(
                code: .notXML, path: path, line: 1, column: nil,
                reason: first == 0
                    ? "not XML: the file starts with NUL bytes (UTF-16 or UTF-32?); storyboards are UTF-8 XML"
                    : "not XML: the file does not start with an XML element")
        }
        guard String(data: data, encoding: .utf8) != nil else {
            throw StoryboardError(code: .notXML, path: path, line: nil, column: nil, reason: "the file is not valid UTF-8; Interface Builder writes storyboards in UTF-8")
        }
        // Processing instructions besides the declaration: Interface Builder writes none, and
        // FoundationXML crashes on one without data (`<?name?>`: it calls strlen on NULL).
        let declarationEnd = bytes.starts(with: Array("<?xml".utf8)) ? (bytes.firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } ?? bytes.endIndex) : bytes.startIndex
        var index = declarationEnd
        while index < bytes.endIndex - 1 {
            if bytes[index] == UInt8(ascii: "<") && bytes[index + 1] == UInt8(ascii: "?") {
                let line = data[..<index].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
                throw StoryboardError(
                    code: .notAStoryboard, path: path, line: line, column: nil,
                    reason: "a processing instruction (<?…?>) other than the XML declaration; Interface Builder writes none, so this is not a storyboard it made")
            }
            index += 1
        }
        // The XML declaration's encoding, when it names one. (Looked for up to the first '>':
        // a declaration left open must not slip past this check to libxml2.)
        let head = String(decoding: bytes.prefix(400), as: UTF8.self)
        if head.hasPrefix("<?xml") {
            guard let close = head.firstIndex(of: ">"), head[..<close].hasSuffix("?") else {
                throw StoryboardError(code: .malformedXML, path: path, line: 1, column: nil, reason: "the XML declaration (<?xml …?>) is not closed")
            }
            let declaration = head[..<close]
            if let range = declaration.range(of: "encoding=") {
                let rest = declaration[range.upperBound...]
                let quote = rest.first
                let value = rest.dropFirst().prefix { $0 != quote }
                if value.lowercased() != "utf-8" && value.lowercased() != "utf8" {
                    throw StoryboardError(
                        code: .notXML, path: path, line: 1, column: nil,
                        reason: "the XML declares encoding \"\(value)\"; storyboards are UTF-8 (navlog reads no other encoding)")
                }
            }
        }
    }
}

extension Storyboard {
    /// Reads and parses the storyboard at `path`.
    /// - Parameter path: a `.storyboard` file.
    /// - Returns: its navigation graph.
    /// - Throws: ``StoryboardError`` when the file cannot be read or is not a well-formed storyboard.
    public static func load(path: String) throws(StoryboardError) -> Storyboard {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StoryboardError(code: .unreadable, path: path, line: nil, column: nil, reason: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw StoryboardError(code: .unreadable, path: path, line: nil, column: nil, reason: "a directory, not a storyboard file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.isReadableFile(atPath: path) ? "cannot be read (\(error))" : "cannot be read: permission denied"
            throw StoryboardError(code: .unreadable, path: path, line: nil, column: nil, reason: reason)
        }
        return try StoryboardParser.parse(data: data, path: path)
    }

    /// The storyboard name of a file: its last path component without `.storyboard`
    /// (`Base.lproj/Main.storyboard` → `Main`), the name references use.
    /// - Parameter path: the file's path.
    /// - Returns: the name.
    public static func name(forPath path: String) -> String {
        let file = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
        return file.hasSuffix(".storyboard") ? String(file.dropLast(".storyboard".count)) : file
    }
}
