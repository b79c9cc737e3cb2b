public import Foundation

/// Locations and helpers shared by navlog's tests.
public enum TestEnvironment {
    /// The package root (the folder holding `Package.swift`).
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("navlog tests: no Package.swift above \(#filePath)")
    }()

    /// A fixture file under `Tests/Fixtures`.
    public static func fixture(_ relativePath: String) -> URL {
        packageRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relativePath)
    }

    /// The files of `../shared/<folder>` whose names end in `suffix`, sorted by name.
    /// - Throws: ``MissingTestInput`` when the folder is missing or holds no such file, so that
    ///   a test without its input fails saying which, instead of indexing an empty list.
    public static func sharedFiles(in folder: String, endingIn suffix: String) throws -> [URL] {
        let directory = shared.appendingPathComponent(folder)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
        guard !names.isEmpty else { throw MissingTestInput(path: directory.path, what: "no \(suffix) file") }
        return names.map { directory.appendingPathComponent($0) }
    }

    /// `../shared` beside the repository (the spec and the storyboards), or `NAVLOG_SHARED_DIR`.
    public static var shared: URL {
        if let override = ProcessInfo.processInfo.environment["NAVLOG_SHARED_DIR"] { return URL(fileURLWithPath: override) }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }

    /// The folder the built executables are in (the test bundle's build folder).
    public static var binaries: URL {
        if let override = ProcessInfo.processInfo.environment["NAVLOG_BIN_DIR"] { return URL(fileURLWithPath: override) }
        // Tests run from <scratch>/<triple>/<config>/; the executables sit beside the test bundle.
        let bundle = Bundle.main.bundleURL
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("navlog").path) { return candidate }
        }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    /// A new empty directory that is removed when `body` returns.
    public static func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async rethrows -> R {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url)
    }

    /// A new empty directory that is removed when `body` returns.
    public static func withTemporaryDirectory<R>(_ body: (URL) throws -> R) rethrows -> R {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// Splits a file's bytes on `\n` the way navlog numbers lines (1-based; a final empty piece dropped).
    public static func lines(of data: Data) -> [[UInt8]] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Array($0) }
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }
}

/// A test's input is not where the tests read it.
public struct MissingTestInput: Error, CustomStringConvertible {
    /// The file or folder looked for.
    public var path: String
    /// What was missing there.
    public var what: String

    public var description: String {
        "\(path): \(what). The tests read ../shared beside the repository (CI puts it there; NAVLOG_SHARED_DIR names another place)."
    }
}
