import Foundation
import NavlogEvents
import NavlogImport
import NavlogTesting
import Testing

/// Inputs the import fuzz targets found (`Tests/Fixtures/fuzz-regressions`, see its README), fed
/// to the converter as the targets feed them: every line written must pass navlog's validation.
@Suite("Import fuzz regressions")
struct FuzzRegressionImportTests {
    @Test("a breadcrumb time before 1970 is reported, not written as a session.start navlog rejects", arguments: [("sentry-iso-before-epoch", ImportSource.sentry)])
    func regression(name: String, source: ImportSource) throws {
        let input = Array(try Data(contentsOf: TestEnvironment.fixture("fuzz-regressions/" + name)))
        var importer = Importer(source: source)
        var issues: [ImportIssue] = []
        input.withUnsafeBytes { importer.feed($0) { issues.append($0) } }
        importer.endFile { issues.append($0) }
        var parser = EventLineParser()
        var batch = EventBatch()
        var lines = 0
        try importer.finish { _, line in
            lines += 1
            _ = try parser.parse(String(decoding: line, as: UTF8.self), lineNumber: lines, into: &batch)
        }
        #expect(issues.map(\.code) == [.timestamp])
        #expect(lines == 0)
    }
}
