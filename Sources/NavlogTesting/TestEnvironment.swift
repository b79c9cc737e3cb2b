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

    /// The folder of the input shared by navlog's repositories (the storyboard corpus, the spec,
    /// the workload's description): `NAVLOG_SHARED_DIR` when set, else `shared` beside the
    /// checkout (`../shared`). Every test that reads it finds it here, through ``sharedFile(_:)``
    /// or ``sharedFiles(in:endingIn:)``, which fail naming what is missing.
    public static var sharedDirectory: URL {
        if let override = ProcessInfo.processInfo.environment["NAVLOG_SHARED_DIR"], !override.isEmpty { return URL(fileURLWithPath: override) }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }

    /// The file (or folder) at `relativePath` in ``sharedDirectory``.
    /// - Throws: ``MissingTestInput`` naming its path when it is not there, so that the test
    ///   fails saying so instead of reading nothing (and indexing what it did not get).
    public static func sharedFile(_ relativePath: String) throws -> URL {
        let url = sharedDirectory.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw MissingTestInput(path: url.path) }
        return url
    }

    /// The files of `folder` in ``sharedDirectory`` whose names end in `suffix`, sorted by name.
    /// - Throws: ``MissingTestInput`` when the folder is missing or holds no such file, so that
    ///   a test without its input fails saying which, instead of indexing an empty list.
    public static func sharedFiles(in folder: String, endingIn suffix: String) throws -> [URL] {
        let directory = try sharedFile(folder)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
        guard !names.isEmpty else { throw MissingTestInput(path: directory.path, what: "holds no \(suffix) file") }
        return names.map { directory.appendingPathComponent($0) }
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
    /// What is wrong with it ("is missing" unless said otherwise).
    public var what: String

    /// A file or folder that is missing or, as `what` says, not what the test needs.
    public init(path: String, what: String = "is missing") {
        self.path = path
        self.what = what
    }

    public var description: String {
        "\(path) \(what): put the shared folder beside the checkout (\(TestEnvironment.packageRoot.deletingLastPathComponent().appendingPathComponent("shared").path)) or set NAVLOG_SHARED_DIR"
    }
}
