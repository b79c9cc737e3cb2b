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
