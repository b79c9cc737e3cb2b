import Foundation

/// The web app's files (HTML, CSS, JavaScript, JSON), shipped as resources of this module and
/// read into memory once at start-up. A request names a file of this fixed set; nothing a
/// request says ever becomes a file-system path.
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
