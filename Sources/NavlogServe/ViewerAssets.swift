import Foundation

/// The web app's files (HTML, CSS, JavaScript, JSON), shipped as resources of this module and
/// read into memory once at start-up. A request names a file of this fixed set; nothing a
/// request says ever becomes a file-system path.
///
/// The pages share one frame, `page.html` (not served by itself): the head, with the page's
/// title and scripts, and the `<body>` and `<main>` around the page's own part. A page's file is
/// its first line, `<!--#page title="Sessions" scripts="sessions.js"-->`, then that part; it is
/// put in the frame once, at start-up, so a browser gets whole pages.
struct ViewerAssets: Sendable {
    /// A file's bytes and its media type.
    struct Asset: Sendable {
        var bytes: [UInt8]
        var contentType: String
    }

    private(set) var files: [String: Asset] = [:]

    /// Reads every file of the resource folder `Web`.
    /// - Throws: ``ViewerAssetsError`` when the resources are missing (a binary copied away from
    ///   the `navlog_NavlogServe.resources` folder built beside it).
    init() throws {
        guard let folder = Bundle.module.url(forResource: "Web", withExtension: nil) else {
            throw ViewerAssetsError(
                message:
                    "The viewer's web files (the Web folder of navlog_NavlogServe.resources) are not beside the navlog binary. Run navlog from its build folder, or copy that .resources folder with it."
            )
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names where !name.hasPrefix(".") {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            files[name] = Asset(bytes: Array(data), contentType: Self.contentType(of: name))
        }
        guard let frame = files.removeValue(forKey: "page.html") else {
            throw ViewerAssetsError(message: "The viewer's web files lack page.html, the frame of its pages. Build navlog again.")
        }
        for (name, page) in files where name.hasSuffix(".html") {
            files[name]?.bytes = try Self.page(page.bytes, frame: frame.bytes, name: name)
        }
    }

    /// The page whose file is `source` in `frame`: `{{title}}` becomes the page's title, the line
    /// `{{scripts}}` a `<script>` line per script (in order), the line `{{main}}` the page's lines
    /// after its first.
    static func page(_ source: [UInt8], frame: [UInt8], name: String) throws -> [UInt8] {
        let text = String(decoding: source, as: UTF8.self)
        guard let end = text.firstIndex(of: "\n"), text.hasPrefix("<!--#page "), text[..<end].hasSuffix("-->"),
            let title = attribute("title", of: text[..<end]), let scripts = attribute("scripts", of: text[..<end])
        else {
            throw ViewerAssetsError(message: "The page \(name) does not begin with <!--#page title=\"…\" scripts=\"…\"-->. Build navlog again.")
        }
        let page = String(decoding: frame, as: UTF8.self)
            .replacingOccurrences(of: "{{title}}", with: title)
            .replacingOccurrences(of: "{{scripts}}\n", with: scripts.split(separator: " ").map { "<script src=\"/assets/\($0)\" defer></script>\n" }.joined())
            .replacingOccurrences(of: "{{main}}\n", with: text[text.index(after: end)...])
        return Array(page.utf8)
    }

    /// The value of `name="value"` in `line`.
    private static func attribute(_ name: String, of line: Substring) -> String? {
        guard let start = line.range(of: " \(name)=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else { return nil }
        return String(line[start..<end])
    }

    /// The file named `name`, if the viewer ships one.
    func asset(_ name: String) -> Asset? { files[name] }

    static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".json") { return "application/json" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        if name.hasSuffix(".png") { return "image/png" }
        return "application/octet-stream"
    }
}

/// The viewer's files could not be found or read.
public struct ViewerAssetsError: Error, Sendable, CustomStringConvertible {
    /// What happened and what to do.
    public var message: String
    public var description: String { message }
}
