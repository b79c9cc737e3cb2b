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

    /// `../shared` beside the repository (the spec and the storyboards).
    public static var shared: URL {
        packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
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
