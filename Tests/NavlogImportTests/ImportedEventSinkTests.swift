import NavlogEvents
import NavlogImport
import Testing

/// `navlog import` stores events built straight into the parser's tokens; tests, the fuzz check
/// and readers of lines get JSON lines. Both must store the same events: the JSON lines, read
/// by the daemon's own parser, are the oracle.
@Suite("Imported events built as tokens")
struct ImportedEventSinkTests {
    static let peer = PeerCredentials(uid: 1, gid: 2, pid: 3)

    /// Stores each event it is given as a built line, as `navlog import`'s store does.
    struct BuiltEvents: ImportedEventSink {
        var parser = EventLineParser()
        var batch = EventBatch()
        var rejections: [EventRejection] = []

        mutating func event(_ type: StaticString, session: String, timestamp: Int64, sequence: UInt64, _ fill: (inout EventLineBuilder) -> Void) throws {
            do throws(EventRejection) {
                try parser.parseImported(
                    type, session: session, timestamp: timestamp, sequence: sequence, lineNumber: batch.count + 1, receivedAt: 0,
                    peer: ImportedEventSinkTests.peer, into: &batch, fill)
            } catch {
                rejections.append(error)
            }
        }
    }

    @Test(
        "every fixture stores the same events built as tokens as written as JSON lines",
        arguments: [
            (ImportSource.sentry, "sentry-events.jsonl"), (.sentry, "sentry-event-api.json"), (.datadog, "datadog-views.jsonl"),
            (.datadog, "datadog-search-page.json"), (.firebase, "firebase-events.jsonl"),
        ])
    func sameEvents(source: ImportSource, fixture: String) throws {
        let input = try ImportTestSupport.fixture(fixture)
        func read() -> Importer {
            var importer = Importer(source: source)
            input.withUnsafeBytes { importer.feed($0) { _ in } }
            importer.endFile { _ in }
            return importer
        }
        var fromLines = EventBatch()
        var parser = EventLineParser()
        var lineImporter = read()
        try lineImporter.finish { _, line in
            _ = try line.withBytes { (raw) throws(EventRejection) in
                try parser.parse(raw, lineNumber: fromLines.count + 1, receivedAt: 0, peer: Self.peer, into: &fromLines)
            }
        }
        var built = BuiltEvents()
        var tokenImporter = read()
        try tokenImporter.finish(into: &built)
        #expect(built.rejections.isEmpty)
        #expect(fromLines.count >= 8)
        #expect(built.batch.count == fromLines.count)
        #expect(built.batch.bytes == fromLines.bytes)
        #expect(built.batch.headers == fromLines.headers)
        #expect(tokenImporter.statistics.events == lineImporter.statistics.events)
    }
}
