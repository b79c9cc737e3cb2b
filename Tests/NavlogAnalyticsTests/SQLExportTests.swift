import Foundation
import NavlogAnalytics
import NavlogEvents
import NavlogStore
import NavlogTesting
import NavlogZstd
import Testing

/// `navlog query sql` (the SQLite tables) and `navlog export` (the partition files) on hand-built
/// sessions whose answers are known.
@Suite("SQL tables and exports on sessions with known answers")
struct SQLExportTests {
    /// 2025-11-21T09:00:00Z.
    static let start: Int64 = 1_763_715_600_000_000
    static func at(_ seconds: Int64) -> Int64 { start + seconds * 1_000_000 }

    /// Session a (Cook 2.0, phone): list 1→10 s, detail 10→50 s (30 s of it in the background),
    /// step 50→60 s, detail 60→70 s, then session.end.
    /// Session p (Cook 2.1, pad "iPad14,1"): home (storyboard id "home") at 0 s, a form sheet
    /// login presented at 100 s and dismissed at 130 s, settings presented by a segue with an
    /// identifier at 150 s, a second present on home while it presents (A2) at 160 s; no
    /// session.end.
    /// Session n (Other 1.0, phone "iPhone16,2"): starts at 23:59:50 the same day and crosses
    /// midnight UTC: list, then detail after midnight.
    static let lines: [String] = {
        func event(_ session: String, _ seq: Int, _ time: Int64, _ type: String, _ fields: String = "") -> String {
            #"{"type":"\#(type)","session":"\#(session)","seq":\#(seq),"ts":\#(time)\#(fields.isEmpty ? "" : "," + fields)}"#
        }
        let midnight: Int64 = 1_763_769_600_000_000  // 2025-11-22T00:00:00Z
        return [
            event("a", 1, at(0), "session.start", #""app":"Cook","version":"2.0","idiom":"phone","traits":{"h":"compact","v":"regular"}"#),
            event("p", 1, at(0), "session.start", #""app":"Cook","version":"2.1","idiom":"pad","device":"iPad14,1","traits":{"h":"regular","v":"regular"}"#),
            event("a", 2, at(1), "nav.set", #""nav":{"id":"n","class":"UINavigationController"},"vcs":[{"id":"l","class":"ListVC"}]"#),
            event("a", 3, at(1), "window.root", #""vc":"n""#),
            event("p", 2, at(0), "window.root", #""vc":{"id":"h","class":"HomeVC","sbid":"home"}"#),
            event("a", 4, at(10), "nav.push", #""nav":"n","vc":{"id":"d","class":"DetailVC"}"#),
            event("a", 5, at(15), "app.background"),
            event("a", 6, at(45), "app.foreground"),
            event("a", 7, at(50), "nav.push", #""nav":"n","vc":{"id":"s","class":"StepVC"}"#),
            event("a", 8, at(60), "nav.pop", #""nav":"n""#),
            event("a", 9, at(70), "session.end", #""reason":"user""#),
            event("p", 3, at(100), "present", #""from":"h","vc":{"id":"login","class":"LoginVC"},"style":"formSheet""#),
            event("p", 4, at(130), "dismiss", #""vc":"login""#),
            event("p", 5, at(150), "segue", #""kind":"presentation","identifier":"showSettings","source":"h","destination":{"id":"set","class":"SettingsVC"}"#),
            event("p", 6, at(160), "present", #""from":"h","vc":{"id":"set2","class":"SettingsVC"}"#),
            event("n", 1, midnight - 10_000_000, "session.start", #""app":"Other","version":"1.0","idiom":"phone","device":"iPhone16,2","traits":{"h":"compact","v":"regular"}"#),
            event("n", 2, midnight - 9_000_000, "window.root", #""vc":{"id":"l","class":"ListVC"}"#),
            event("n", 3, midnight + 5_000_000, "present", #""from":"l","vc":{"id":"d","class":"DetailVC"}"#),
            event("n", 4, midnight + 20_000_000, "session.end"),
        ]
    }()

    /// Runs `body` with a log of ``lines`` in a temporary directory (the real path: parser, log, reader).
    static func withLog<R>(_ body: (LogReader, URL) throws -> R) throws -> R {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in lines.enumerated() { _ = try parser.parse(line, lineNumber: number + 1, into: &batch) }
        return try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let log = try EventLog(directory: data)
            _ = try log.append(batch)
            try log.close()
            return try body(try LogReader(directory: data), dir)
        }
    }

    /// A database loaded with every table, and the log its `events` table reads as queries run
    /// (removed with the database).
    final class LoadedDatabase {
        let database: SQLAnalyticsDatabase
        let directory: URL

        init(_ filter: AnalyticsFilter) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-test-\(UUID().uuidString)")
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in SQLExportTests.lines.enumerated() { _ = try parser.parse(line, lineNumber: number + 1, into: &batch) }
            let data = directory.appendingPathComponent("data").path
            let log = try EventLog(directory: data)
            _ = try log.append(batch)
            try log.close()
            database = try SQLAnalyticsDatabase()
            try database.load(from: try LogReader(directory: data), filter: filter)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    /// A database loaded with every table.
    static func database(_ filter: AnalyticsFilter = AnalyticsFilter()) throws -> LoadedDatabase { try LoadedDatabase(filter) }

    /// Rows as text, `|`-separated, NULL as `∅`.
    static func rows(_ loaded: LoadedDatabase, _ sql: String) throws -> [String] { try rows(loaded.database, sql) }

    /// Rows as text, `|`-separated, NULL as `∅`.
    static func rows(_ database: SQLAnalyticsDatabase, _ sql: String) throws -> [String] {
        try database.fetchAll(sql).rows.map { row in
            row.map { value in
                switch value {
                case .null: "∅"
                default: SQLResultWriter.plain(value)
                }
            }.joined(separator: "|")
        }
    }

    static let midnight: Int64 = 1_763_769_600_000_000

    @Test("the SQLite tables have the documented columns, types and NULLs, and docs/ANALYTICS-TABLES.md lists them")
    func schema() throws {
        let database = try SQLAnalyticsDatabase()
        let doc = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent("docs/ANALYTICS-TABLES.md"), encoding: .utf8)
        for table in SQLTable.allCases {
            let info = try Self.rows(database, "SELECT name, type, \"notnull\" FROM pragma_table_info('\(table.name)')")
            #expect(info == table.columns.map { "\($0.name)|\($0.type.sqlType)|\($0.nullable ? 0 : 1)" }, "\(table.name)")
            #expect(doc.contains("### `\(table.name)`"), "the doc has a section for \(table.name)")
            for column in table.columns {
                #expect(doc.contains("| `\(column.name)` |"), "the doc lists \(table.name).\(column.name)")
            }
        }
        let dwell = sqlSchemaDescription().split(separator: "\n").first { $0.hasPrefix("  dwell ") }
        #expect(dwell?.contains(" INTEGER ") == true && dwell?.hasSuffix("µs focused while the app was in the foreground (F4): background time excluded") == true)
    }

    @Test("screen_visits: one row per focused stretch, dwell without the time in the background")
    func screenVisits() throws {
        let database = try Self.database()
        let rows = try Self.rows(
            database,
            #"SELECT session, screen, storyboard_id, controller, ("start" - \#(Self.start)) / 1000000, ("end" - "start") / 1000000, dwell / 1000000, how, "index" FROM screen_visits WHERE session != 'n' ORDER BY session, "index""#
        )
        #expect(
            rows == [
                "a|ListVC|∅|l|1|9|9|root|0",
                "a|DetailVC|∅|d|10|40|10|push|1",
                "a|StepVC|∅|s|50|10|10|push|2",
                "a|DetailVC|∅|d|60|10|10|pop|3",
                "p|HomeVC|home|h|0|100|100|root|0",
                "p|LoginVC|∅|login|100|30|30|present|1",
                "p|HomeVC|home|h|130|20|20|dismiss|2",
                "p|SettingsVC|∅|set|150|10|10|segue:showSettings|3",
            ], "a's DetailVC was focused 40 s, 30 of them in the background: its dwell is 10 s")
        let tags = try Self.rows(database, "SELECT DISTINCT session, app, version, idiom, device FROM screen_visits ORDER BY session")
        #expect(tags == ["a|Cook|2.0|phone|", "n|Other|1.0|phone|iPhone16,2", "p|Cook|2.1|pad|iPad14,1"])
        // The same figures as navlog query screens (the owner's report over the same rows).
        var report = ScreensReport()
        try Self.withLog { reader, _ in
            var scanner = DerivedTableScanner(reader: reader)
            try scanner.scan(into: &report)
        }
        let sql = try Self.rows(
            database, "SELECT screen, storyboard_id, count(*), count(DISTINCT session), sum(dwell) FROM screen_visits GROUP BY screen, storyboard_id ORDER BY screen")
        let expected = report.rows.sorted { $0.screen < $1.screen }.map { "\($0.screen)|\($0.storyboardID ?? "∅")|\($0.views)|\($0.sessions)|\($0.dwellTotal)" }
        #expect(sql == expected)
        #expect(sql.contains("DetailVC|∅|3|2|35000000"))
    }

    @Test("transitions: from (NULL for a first screen), to and how: root, push, pop, present, dismiss, segue:IDENTIFIER")
    func transitions() throws {
        let database = try Self.database()
        let rows = try Self.rows(database, #"SELECT "from", "to", how, count(*) FROM transitions GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3"#)
        #expect(
            rows == [
                "∅|ListVC|root|2",
                "∅|HomeVC|root|1",
                "DetailVC|StepVC|push|1",
                "HomeVC|LoginVC|present|1",
                "HomeVC|SettingsVC|segue:showSettings|1",
                "ListVC|DetailVC|present|1",
                "ListVC|DetailVC|push|1",
                "LoginVC|HomeVC|dismiss|1",
                "StepVC|DetailVC|pop|1",
            ])
        let sequence = try Self.rows(database, "SELECT sequence, (timestamp - \(Self.start)) / 1000000 FROM transitions WHERE session = 'p' ORDER BY timestamp")
        #expect(sequence == ["2|0", "3|100", "4|130", "5|150"])
        // A funnel in SQL agrees with navlog query funnel.
        let funnel = try Self.rows(
            database,
            #"""
            SELECT (SELECT count(DISTINCT session) FROM screen_visits WHERE screen = 'ListVC'),
                   (SELECT count(DISTINCT a.session) FROM screen_visits a JOIN screen_visits b
                      ON b.session = a.session AND b."index" > a."index" AND a.screen = 'ListVC' AND b.screen = 'StepVC')
            """#)
        var report = FunnelReport(steps: ["ListVC", "StepVC"])
        try Self.withLog { reader, _ in
            var scanner = DerivedTableScanner(reader: reader)
            try scanner.scan(into: &report)
        }
        #expect(funnel == ["\(report.rows[0].sessions)|\(report.rows[1].sessions)"])
        #expect(funnel == ["2|1"])
    }

    @Test("sessions, anomalies and exits")
    func sessionsAnomaliesExits() throws {
        let database = try Self.database()
        let sessions = try Self.rows(
            database,
            "SELECT session, app, (\"last\" - \"first\") / 1000000, events, visits, screens, anomalies, max_stack_depth, max_presentation_depth, exit_screen, ended FROM sessions ORDER BY session"
        )
        #expect(sessions == ["a|Cook|70|9|4|3|0|3|0|DetailVC|1", "n|Other|30|4|2|2|0|0|1|DetailVC|1", "p|Cook|160|6|4|3|1|0|1|SettingsVC|0"])
        let anomalies = try Self.rows(
            database, "SELECT session, (timestamp - \(Self.start)) / 1000000, sequence, lsn, code, name, rule, fatal, controllers, message FROM anomalies")
        #expect(
            anomalies == [
                #"p|160|6|15|A2|present-while-presenting|R3c|0|h set2 set|Attempt to present "set2" on "h", which is already presenting "set": nothing happens."#
            ])
        let exits = try Self.rows(database, "SELECT session, timestamp, screen, reason FROM exits ORDER BY session, timestamp")
        #expect(
            exits == [
                "a|\(Self.at(15))|DetailVC|background", "a|\(Self.at(70))|DetailVC|end", "n|\(Self.midnight + 20_000_000)|DetailVC|end",
                "p|\(Self.at(160))|SettingsVC|end",
            ])
        let events = try Self.rows(database, "SELECT type, count(*) FROM events WHERE session = 'a' GROUP BY type ORDER BY 2 DESC, 1")
        #expect(events == ["nav.push|2", "app.background|1", "app.foreground|1", "nav.pop|1", "nav.set|1", "session.end|1", "session.start|1", "window.root|1"])
    }

    @Test("only the tables a query reads are loaded; filters keep sessions and a time window")
    func planAndFilters() throws {
        #expect(try SQLAnalyticsDatabase.plan("SELECT count(*) FROM sessions").tables == [.sessions])
        #expect(try SQLAnalyticsDatabase.plan("select events, screens from SESSIONS").tables == [.sessions], "a column named events is not the events table")
        #expect(try SQLAnalyticsDatabase.plan("SELECT count(*) FROM events").tables == [.events])
        #expect(
            try SQLAnalyticsDatabase.plan("WITH v AS (SELECT session FROM screen_visits) SELECT count(*) FROM v JOIN exits USING (session) WHERE 'events' <> ''")
                .tables == [.screenVisits, .exits])
        #expect(try SQLAnalyticsDatabase.plan("SELECT count(*) FROM screen_visits JOIN exits USING (session)").tables == [.screenVisits, .exits])
        #expect(try SQLAnalyticsDatabase.plan("SELECT exists(SELECT 1 FROM anomalies)").tables == [.anomalies])
        #expect(try SQLAnalyticsDatabase.plan("SELECT 1").tables.isEmpty)
        let partial = try Self.withLog { reader, _ in
            let database = try SQLAnalyticsDatabase()
            let report = try database.load(from: reader, tables: [.sessions])
            #expect(report.rows == [.sessions: 3])
            return database
        }
        #expect(try Self.rows(partial, "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM screen_visits), (SELECT count(*) FROM sessions)") == ["0|0|3"])
        let other = try Self.database(AnalyticsFilter(app: "Other"))
        #expect(try Self.rows(other, "SELECT DISTINCT session FROM screen_visits UNION SELECT session FROM sessions") == ["n"])
        let pad = try Self.database(AnalyticsFilter(version: "2.1", idiom: "pad"))
        #expect(try Self.rows(pad, "SELECT session, count(*) FROM events GROUP BY session") == ["p|6"])
        let late = try Self.database(AnalyticsFilter(since: Self.at(100), until: Self.at(140)))
        #expect(try Self.rows(late, #"SELECT session, "from", "to" FROM transitions"#) == ["p|HomeVC|LoginVC", "p|LoginVC|HomeVC"])
    }

    @Test("SQL errors name SQLite's message and position; one statement at a time")
    func errors() throws {
        let database = try SQLAnalyticsDatabase()
        func failure(_ sql: String) -> SQLQueryError? {
            do {
                _ = try SQLAnalyticsDatabase.plan(sql)
                return nil
            } catch { return error }
        }
        let syntax = try #require(failure("SELECT *\nFORM sessions"))
        #expect(syntax.message == #"near "FORM": syntax error"#)
        #expect(syntax.offset == 9 && syntax.lineAndColumn! == (2, 1))
        #expect(syntax.description == "SQL error at line 2, column 1 (byte offset 9): near \"FORM\": syntax error\n  FORM sessions\n  ^")
        let column = try #require(failure("SELECT screan FROM screen_visits"))
        #expect(column.message == "no such column: screan" && column.offset == 7)
        let table = try #require(failure("SELECT * FROM visits"))
        #expect(table.message == "no such table: visits")
        let two = try #require(failure("SELECT 1; SELECT 2"))
        #expect(two.message.contains("only one SQL statement") && two.offset == 9)
        #expect(failure("SELECT 1; ") == nil && failure("SELECT 1 -- done") == nil)
        #expect(failure("  ")?.message.contains("empty") == true)
        #expect(throws: SQLQueryError.self) { try database.fetchAll("SELECT abs(-9223372036854775808)") }
    }

    @Test("json keeps SQL types, csv quotes as RFC 4180 says, table aligns")
    func resultFormats() throws {
        let database = try Self.database().database
        let sql = #"SELECT 1 AS i, 1.5 AS r, 'x"y' AS t, NULL AS n, x'00ff10' AS b, '' AS e"#
        var json: [UInt8] = []
        var csv: [UInt8] = []
        try database.query(sql) { columns in
            SQLResultWriter(format: .csv, columns: columns).header(to: &csv)
        } row: { values in
            SQLResultWriter(format: .json, columns: ["i", "r", "t", "n", "b", "e"]).append(values, to: &json)
            SQLResultWriter(format: .csv, columns: ["i", "r", "t", "n", "b", "e"]).append(values, to: &csv)
        }
        #expect(String(decoding: json, as: UTF8.self) == #"{"i":1,"r":1.5,"t":"x\"y","n":null,"b":"AP8Q","e":""}"# + "\n")
        #expect(String(decoding: csv, as: UTF8.self) == "i,r,t,n,b,e\n1,1.5,\"x\"\"y\",,AP8Q,\"\"\n")
        let result = try database.fetchAll("SELECT session, device, events FROM sessions ORDER BY session")
        #expect(
            SQLResultWriter.renderTable(columns: result.columns, rows: result.rows) == """
                session  device      events
                a                         9
                n        iPhone16,2       4
                p        iPad14,1         6

                """)
    }

    @Test("export: Hive-style day partitions of zstd JSON Lines (several frames per file) that read back as the SQL rows")
    func exportJSONLines() throws {
        try Self.withLog { reader, dir in
            let out = dir.appendingPathComponent("export").path
            let report = try Exporter.export(from: reader, options: ExportOptions(directory: out, chunkSize: 300))
            #expect(
                report.paths == [
                    "anomalies/day=2025-11-21/part-00000.jsonl.zst",
                    "events/day=2025-11-21/part-00000.jsonl.zst", "events/day=2025-11-22/part-00000.jsonl.zst",
                    "exits/day=2025-11-21/part-00000.jsonl.zst", "exits/day=2025-11-22/part-00000.jsonl.zst",
                    "screen_visits/day=2025-11-21/part-00000.jsonl.zst", "screen_visits/day=2025-11-22/part-00000.jsonl.zst",
                    "sessions/day=2025-11-21/part-00000.jsonl.zst",
                    "transitions/day=2025-11-21/part-00000.jsonl.zst", "transitions/day=2025-11-22/part-00000.jsonl.zst",
                ])
            #expect(report.rows == [.events: 19, .screenVisits: 10, .transitions: 10, .sessions: 3, .anomalies: 1, .exits: 4])
            #expect(report.eventsRead == 19)
            let onDisk = try FileManager.default.subpathsOfDirectory(atPath: out).filter { $0.hasSuffix(".zst") || $0.hasSuffix(".tmp") }.sorted()
            #expect(onDisk == report.paths, "no .tmp file is left")
            let database = try SQLAnalyticsDatabase()
            try database.load(from: reader)
            var frames = 0
            for table in SQLTable.allCases {
                var exported: [String] = []
                for path in report.paths where path.hasPrefix(table.name + "/") {
                    let (text, count) = try Self.decompress(Data(contentsOf: URL(fileURLWithPath: out + "/" + path)))
                    frames += count
                    let day = path.split(separator: "/")[1].dropFirst(4)
                    for line in text.split(separator: "\n") {
                        let object = try JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8))
                        #expect(Set(object.keys) == Set(table.columns.map(\.name)))
                        let time = object[table.timeColumn]!.integer!
                        #expect(Exporter.dayString(Exporter.day(ofMicroseconds: time)) == day, "\(table.name): the row's day is its directory's")
                        exported.append(table.columns.map { object[$0.name]!.text }.joined(separator: "|"))
                    }
                }
                let sql = try database.fetchAll("SELECT * FROM \(table.name)").rows.map { row in
                    zip(row, table.columns).map { value, column in
                        if case .null = value { return "∅" }
                        if column.type == .boolean { return value == .integer(1) ? "true" : "false" }
                        return SQLResultWriter.plain(value)
                    }.joined(separator: "|")
                }
                #expect(exported.sorted() == sql.sorted(), "\(table.name)")
            }
            #expect(frames > report.paths.count, "files larger than a chunk hold several frames")
            // Key order and types as written.
            let (exits, _) = try Self.decompress(Data(contentsOf: URL(fileURLWithPath: out + "/exits/day=2025-11-21/part-00000.jsonl.zst")))
            #expect(
                exits.split(separator: "\n").first
                    == #"{"session":"a","app":"Cook","version":"2.0","idiom":"phone","device":"","timestamp":1763715615000000,"screen":"DetailVC","reason":"background"}"#)
            let (sessions, _) = try Self.decompress(Data(contentsOf: URL(fileURLWithPath: out + "/sessions/day=2025-11-21/part-00000.jsonl.zst")))
            #expect(sessions.contains(#""exit_screen":"SettingsVC","ended":false}"#))
            // The output is there: a second export refuses to mix with it, --overwrite replaces it.
            #expect(throws: ExportError.self) { try Exporter.export(from: reader, options: ExportOptions(directory: out)) }
            let again = try Exporter.export(from: reader, options: ExportOptions(directory: out, tables: [.sessions], overwrite: true))
            #expect(again.paths == ["sessions/day=2025-11-21/part-00000.jsonl.zst"])
            // gzip: the file is gzip (magic 1f 8b) and holds the same sessions.
            let gzipped = try Exporter.export(from: reader, options: ExportOptions(directory: out + "/gz", compression: .gzip, tables: [.sessions]))
            let gzipFile = try Data(contentsOf: URL(fileURLWithPath: out + "/gz/" + gzipped.paths[0]))
            #expect(gzipped.paths == ["sessions/day=2025-11-21/part-00000.jsonl.gz"] && gzipFile.prefix(2) == Data([0x1F, 0x8B]))
        }
    }

    @Test("export: unpartitioned, uncompressed CSV with a header line and RFC 4180 quoting")
    func exportCSV() throws {
        try Self.withLog { reader, dir in
            let out = dir.appendingPathComponent("csv").path
            let report = try Exporter.export(
                from: reader, options: ExportOptions(directory: out, format: .csv, compression: .none, partitioning: .none, tables: [.sessions, .anomalies]))
            #expect(report.paths == ["anomalies/part-00000.csv", "sessions/part-00000.csv"])
            let sessions = try String(contentsOfFile: out + "/sessions/part-00000.csv", encoding: .utf8)
            #expect(
                sessions == """
                    session,app,version,idiom,device,first,last,events,visits,screens,anomalies,max_stack_depth,max_presentation_depth,exit_screen,ended
                    a,Cook,2.0,phone,"",1763715600000000,1763715670000000,9,4,3,0,3,0,DetailVC,true
                    n,Other,1.0,phone,"iPhone16,2",1763769590000000,1763769620000000,4,2,2,0,0,1,DetailVC,true
                    p,Cook,2.1,pad,"iPad14,1",1763715600000000,1763715760000000,6,4,3,1,0,1,SettingsVC,false

                    """)
            let anomalies = try String(contentsOfFile: out + "/anomalies/part-00000.csv", encoding: .utf8)
            #expect(
                anomalies.hasSuffix(
                    #"p,Cook,2.1,pad,"iPad14,1",1763715760000000,6,15,A2,present-while-presenting,R3c,false,h set2 set,"Attempt to present ""set2"" on ""h"", which is already presenting ""set"": nothing happens.""#
                        + "\n"))
            #expect(report.bytesWritten == sessions.utf8.count + anomalies.utf8.count && report.uncompressedBytes == report.bytesWritten)
        }
    }

    @Test("a failed export leaves no partial file or directory behind")
    func failedExport() throws {
        try Self.withLog { (reader: LogReader, dir: URL) throws -> Void in
            let out = dir.appendingPathComponent("failed").path
            var written: [String] = []
            #expect(throws: TestFailure.self) {
                try Exporter.export(options: ExportOptions(directory: out, chunkSize: 100)) { sink in
                    var scanner = DerivedTableScanner(reader: reader)
                    try scanner.scan(into: &sink)
                    written = try FileManager.default.subpathsOfDirectory(atPath: out)
                    throw TestFailure("the log went away")
                }
            }
            #expect(written.contains { $0.hasSuffix(".jsonl.zst.tmp") }, "files were being written")
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(left.isEmpty)
        }
    }

    @Test("UTC days of µs times, before and after the epoch")
    func days() {
        #expect(Exporter.dayString(0) == "1970-01-01")
        #expect(Exporter.dayString(Exporter.day(ofMicroseconds: Self.start)) == "2025-11-21")
        #expect(Exporter.dayString(Exporter.day(ofMicroseconds: Self.midnight - 1)) == "2025-11-21")
        #expect(Exporter.dayString(Exporter.day(ofMicroseconds: Self.midnight)) == "2025-11-22")
        #expect(Exporter.dayString(Exporter.day(ofMicroseconds: -1)) == "1969-12-31")
        #expect(Exporter.dayString(11_016) == "2000-02-29")
        #expect(Exporter.dayString(-719_468) == "0000-03-01")
    }

    /// A file of concatenated zstd frames: its text and the number of frames.
    static func decompress(_ data: Data) throws -> (String, Int) {
        let bytes = [UInt8](data)
        let decompressor = try ZstdDecompressor()
        var text: [UInt8] = []
        var offset = 0
        var frames = 0
        while offset < bytes.count {
            let frame = try bytes[offset...].withUnsafeBytes { raw in
                Array(raw.prefix(try ZstdDecompressor.frameSize(in: raw)))
            }
            text += try decompressor.decompress(frame: frame)
            offset += frame.count
            frames += 1
        }
        return (String(decoding: text, as: UTF8.self), frames)
    }
}

/// A JSON value of an export row: null, a boolean, an integer or a string (decoded strictly:
/// `true` is not 1).
enum JSONValue: Decodable, Equatable {
    case null, bool(Bool), integer(Int64), string(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// As the SQL rows of the tests print it.
    var text: String {
        switch self {
        case .null: "∅"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .string(let value): value
        }
    }
}
