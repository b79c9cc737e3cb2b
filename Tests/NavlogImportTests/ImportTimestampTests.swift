import NavlogImport
import Testing

@Suite("ImportTimestamp: every time format the sources write")
struct ImportTimestampTests {
    static let expected: Int64 = 1_714_644_000_123_000

    @Test(
        "ISO 8601 strings, epoch seconds as floats, ms and µs as numbers and strings",
        arguments: [
            (#""2024-05-02T10:00:00.123Z""#, ImportTimestamp.Unit.byMagnitude),
            (#""2024-05-02T12:00:00.123+02:00""#, .byMagnitude),
            (#""2024-05-02T10:00:00.123""#, .byMagnitude),
            ("1714644000.123", .byMagnitude),
            (#""1714644000.123""#, .byMagnitude),
            ("1714644000123", .byMagnitude),
            ("1714644000123000", .byMagnitude),
            (#""1714644000123000""#, .byMagnitude),
            ("1714644000.123", .seconds),
            ("1714644000123", .milliseconds),
            (#""1714644000123""#, .milliseconds),
            ("1714644000123000", .microseconds),
            (#""1714644000123000""#, .microseconds),
            ("1.714644000123e15", .microseconds),
        ])
    func reads(text: String, unit: ImportTimestamp.Unit) throws {
        let document = try JSONDocument(parsing: Array(text.utf8))
        #expect(try ImportTimestamp.microseconds(document, document.root, unit: unit).get() == Self.expected)
    }

    @Test("what is no time is refused with a reason", arguments: [#""yesterday""#, #""1012-05-02T10:00:20.000Z""#, "true", "null", "-5", #""-1""#, "1e30", "{}"])
    func refuses(text: String) throws {
        let document = try JSONDocument(parsing: Array(text.utf8))
        let result = ImportTimestamp.microseconds(document, document.root, unit: .byMagnitude)
        guard case .failure(let error) = result else {
            Issue.record("\(text) was read as \(result)")
            return
        }
        #expect(!error.reason.isEmpty)
    }
}
