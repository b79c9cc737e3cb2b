import Foundation
import NavlogAnalytics
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// `navlog query sql`'s `events` table reads the log as a query runs, and for queries that read
/// only session columns and the type it gives rows grouped and in the order SQLite asks for
/// (so SQLite skips its sort). SQLite itself is the oracle: every query is run against the
/// table and against a plain copy of its rows, and must answer the same.
@Suite("The events table read in place")
struct SQLEventsTableTests {
    /// A log of interleaved workload sessions over several segments (apps, idioms, devices vary).
    static func withLog<R>(_ body: (LogReader) throws -> R) throws -> R {
        var configuration = WorkloadConfiguration(seed: 77)
        configuration.concurrentSessions = 40
        configuration.meanEventsPerSession = 120
        return try withLog(configuration, events: 12_000) { reader, _ in try body(reader) }
    }

    /// A log of `events` generated lines of `configuration` (small blocks and segments), and the lines.
    static func withLog<R>(_ configuration: WorkloadConfiguration, events: Int, _ body: (LogReader, [[UInt8]]) throws -> R) throws -> R {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = LogOptions()
            options.maximumEventsPerBlock = 700
            options.maximumSegmentBytes = 32 << 10
            let log = try EventLog(directory: dir.path, options: options)
            var generator = WorkloadGenerator(configuration)
            var parser = EventLineParser()
            var batch = EventBatch()
            let lines = generator.lines(events)
            for (number, line) in lines.enumerated() {
                _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
                if batch.count == 500 {
                    _ = try log.append(batch)
                    batch.removeAll()
                }
            }
            _ = try log.append(batch)
            try log.close()
            return try body(try LogReader(directory: dir.path), lines)
        }
    }

    static func text(_ rows: [[SQLValue]]) -> [String] {
        rows.map { row in row.map { SQLResultWriter.plain($0) }.joined(separator: "|") }
    }

    static let queries = [
        "SELECT type, count(*) FROM T GROUP BY 1 ORDER BY 1",
        "SELECT type, count(*) AS n FROM T GROUP BY 1 ORDER BY n DESC, 1",
        "SELECT type, count(*) FROM T GROUP BY type ORDER BY type DESC",
        "SELECT app, idiom, type, count(*) FROM T GROUP BY 1, 2, 3 ORDER BY 3 DESC, 1, 2",
        "SELECT session, count(*) FROM T GROUP BY 1 ORDER BY 1 DESC LIMIT 7",
        "SELECT session, type, count(*) FROM T GROUP BY 1, 2 ORDER BY 2, 1",
        "SELECT DISTINCT device FROM T ORDER BY 1",
        "SELECT DISTINCT idiom, app FROM T ORDER BY 2 DESC, 1",
        "SELECT count(*) FROM T",
        "SELECT count(*), count(DISTINCT session) FROM T WHERE type = 'nav.push'",
        "SELECT type FROM T ORDER BY type DESC LIMIT 3",
        "SELECT type, count(*) FROM T WHERE app = 'Cookbook' GROUP BY 1 ORDER BY 1",
        "SELECT type, count(*) FROM T GROUP BY type ORDER BY type COLLATE NOCASE DESC",
        "SELECT lower(type) AS t, count(*) FROM T GROUP BY 1 ORDER BY 1",
        "SELECT s.app, count(*) FROM T e JOIN sessions s USING (session) GROUP BY 1 ORDER BY 1",
        "SELECT min(lsn), max(lsn), sum(timestamp % 1000), count(sequence), max(received_at) FROM T",
        "SELECT type, min(lsn), max(timestamp) FROM T GROUP BY 1 ORDER BY 1",
        "SELECT lsn, session, type FROM T WHERE lsn % 997 = 3 ORDER BY lsn DESC",
        "SELECT session FROM T GROUP BY 1 HAVING count(*) > 20 ORDER BY 1",
        "SELECT (SELECT count(*) FROM T WHERE type = 'session.start'), (SELECT count(DISTINCT type) FROM T)",
    ]

    @Test("every query answers as over a plain copy of the rows, with and without filters")
    func sameAsPlainTable() throws {
        try Self.withLog { reader in
            #expect(reader.segments.count > 2)
            let start = WorkloadConfiguration.defaultStartTime
            for filter in [AnalyticsFilter(), AnalyticsFilter(app: "Cookbook"), AnalyticsFilter(since: start + 30_000_000, until: start + 90_000_000)] {
                let database = try SQLAnalyticsDatabase()
                try database.load(from: reader, filter: filter)
                // A plain table with the same rows: what SQLite does with them is the oracle.
                _ = try database.fetchAll("CREATE TABLE copy AS SELECT * FROM events")
                let copied = try database.fetchAll("SELECT count(*) FROM copy").rows
                #expect(copied.first?.first != .integer(0), "\(filter): the events table has rows")
                for query in Self.queries {
                    let inPlace = Self.text(try database.fetchAll(query.replacingOccurrences(of: " T", with: " events")).rows)
                    let plain = Self.text(try database.fetchAll(query.replacingOccurrences(of: " T", with: " copy")).rows)
                    #expect(!inPlace.isEmpty, "\(query) has an answer")
                    let ordered = query.contains("ORDER BY")
                    #expect((ordered ? inPlace : inPlace.sorted()) == (ordered ? plain : plain.sorted()), "\(filter): \(query)")
                }
            }
        }
    }

    @Test("the rows are the log's events in log order, each with its session's tags")
    func rowsAreTheLog() throws {
        try Self.withLog { reader in
            let database = try SQLAnalyticsDatabase()
            try database.load(from: reader)
            var expected: [String] = []
            var tags: [String: String] = [:]
            for row in try database.fetchAll("SELECT session, app, version, idiom, device FROM sessions").rows {
                let text = Self.text([row])[0]
                tags[String(text.split(separator: "|", omittingEmptySubsequences: false)[0])] = text
            }
            try reader.scan(LogQuery()) { block, index in
                let session = block.session(index)
                let sequence = block.sequence(index).map { "\($0)" } ?? ""
                expected.append(
                    "\(block.lsn(index))|\(tags[session] ?? session + "||||")|\(sequence)|\(block.timestamps[index])|\(block.receiveTimes[index])|\(block.types[index].name)|"
                        + (block.peers[Int(block.peerIndexes[index])].relayKey.name ?? ""))
                return true
            }
            let rows = Self.text(try database.fetchAll("SELECT * FROM events").rows)
            #expect(rows.count == reader.eventCount)
            #expect(rows == expected)
        }
    }

    @Test("on production's shape (500 live sessions, mixed recording styles), counts by type and by app equal a plain count of the NDJSON lines")
    func countsEqualTheLines() throws {
        var configuration = WorkloadConfiguration.production(seed: 78)
        configuration.concurrentSessions = 500
        configuration.meanEventsPerSession = 60
        try Self.withLog(configuration, events: 15_000) { reader, lines in
            // The oracle reads the lines with Foundation's JSON parser, nothing of navlog's.
            var byType: [String: Int] = [:]
            var appOfSession: [String: String] = [:]
            var typeAndSession: [(type: String, session: String)] = []
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
                let type = try #require(object["type"] as? String)
                let session = try #require(object["session"] as? String)
                byType[type, default: 0] += 1
                typeAndSession.append((type, session))
                if type == "session.start", let app = object["app"] as? String { appOfSession[session] = app }
            }
            var byAppAndType: [String: Int] = [:]
            for event in typeAndSession { byAppAndType["\(appOfSession[event.session] ?? "")|\(event.type)", default: 0] += 1 }
            #expect(Set(appOfSession.values).count > 1 && byType.count > 10)

            let database = try SQLAnalyticsDatabase()
            try database.load(from: reader)
            let types = Self.text(try database.fetchAll("SELECT type, count(*) FROM events GROUP BY 1 ORDER BY 1").rows)
            #expect(types == byType.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value)" })
            let apps = Self.text(try database.fetchAll("SELECT app, type, count(*) FROM events GROUP BY 1, 2 ORDER BY 1, 2").rows)
            #expect(apps == byAppAndType.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value)" })
            let sessions = Self.text(try database.fetchAll("SELECT count(DISTINCT session) FROM events").rows)
            #expect(sessions == ["\(Set(typeAndSession.map(\.session)).count)"])
        }
    }
}
