import Foundation
import NavlogTesting
import NavlogWorkload
import Testing

/// `navlog export` read by DuckDB as it is, and `navlog query sql`, run as a user runs them: the
/// same screens, transitions and funnel computed by DuckDB over the export and by navlog (SQL,
/// and the `navlog query` reports) agree.
@Suite("navlog export read by DuckDB, and navlog query sql, end to end")
struct ExportDuckDBTests {
    /// Whether Python can import duckdb (tools/setup-deps --test installs it).
    static let duckDBAvailable: Bool = {
        guard let result = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import duckdb"]) else { return false }
        return result.status == 0
    }()

    /// A data directory of a few thousand generated events, ingested by `navlog ingest`.
    static func ingest(into dir: URL, events: Int = 4_000) throws -> String {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 2_025))
        let file = dir.appendingPathComponent("events.jsonl")
        try Data(generator.ndjson(events: events)).write(to: file)
        let data = dir.appendingPathComponent("data").path
        let ingest = try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path])
        #expect(ingest.status == 0, "\(ingest.errorOutput)")
        return data
    }

    /// JSON Lines printed by navlog, as rows of the given keys (values as text; null as ∅).
    static func rows(_ output: String, _ keys: [String]) throws -> [String] {
        try output.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return keys.map { cell(object[$0] as Any) }.joined(separator: "|")
        }.sorted()
    }

    /// A JSON value as text: strings as they are, integers in decimal, null as ∅.
    static func cell(_ value: Any) -> String {
        if value is NSNull { return "∅" }
        if let text = value as? String { return text }
        if let number = value as? NSNumber { return "\(number.int64Value)" }
        return "\(value)"
    }

    /// The DuckDB side: reads the export and prints {"screens", "transitions", "funnel"} as JSON.
    static let duckDBScript = #"""
        import duckdb, json, sys
        out, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
        con = duckdb.connect()
        visits = f"read_json('{out}/screen_visits/*/*.jsonl.zst', hive_partitioning = true)"
        transitions = f"read_json('{out}/transitions/*/*.jsonl.zst', hive_partitioning = true)"
        screens = con.execute(f"""
            SELECT screen, storyboard_id, count(*) AS views, count(DISTINCT session) AS sessions, sum(dwell) AS dwell_total
            FROM {visits} GROUP BY screen, storyboard_id""").fetchall()
        moves = con.execute(f'SELECT "from", "to", how, count(*) FROM {transitions} GROUP BY ALL').fetchall()
        types = con.execute(f"SELECT type, count(*) FROM read_json('{out}/events/*/*.jsonl.zst', hive_partitioning = true) GROUP BY 1").fetchall()
        funnel = con.execute(f"""
            WITH v AS (SELECT session, screen, "index" FROM {visits}),
                 first_a AS (SELECT session, min("index") AS at FROM v WHERE screen = $a GROUP BY session)
            SELECT (SELECT count(*) FROM first_a),
                   (SELECT count(DISTINCT v.session) FROM v JOIN first_a f ON f.session = v.session
                    WHERE v.screen = $b AND v."index" > f.at)""", {"a": a, "b": b}).fetchone()
        days = con.execute(f"SELECT DISTINCT CAST(day AS VARCHAR) FROM {visits}").fetchall()
        def text(value):
            return "∅" if value is None else str(value)
        print(json.dumps({
            "screens": sorted("|".join(text(v) for v in row) for row in screens),
            "transitions": sorted("|".join(text(v) for v in row) for row in moves),
            "funnel": [int(funnel[0]), int(funnel[1])],
            "types": sorted(f"{row[0]}|{row[1]}" for row in types),
            "days": sorted(row[0] for row in days),
        }))
        """#

    @Test(
        "DuckDB reads the zstd JSON Lines partitions as they are: screens, transitions and a funnel equal navlog's answers",
        .enabled(if: duckDBAvailable, "needs Python's duckdb (tools/setup-deps --test installs it)"))
    func duckDBAgrees() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir)
            let out = dir.appendingPathComponent("export").path
            let export = try ProcessRunner.navlog(["export", "--data-dir", data, "--to", out, "--format", "jsonl", "--compress", "zstd"])
            #expect(export.status == 0, "\(export.errorOutput)")
            #expect(export.errorOutput.contains(" rows/s; ") && export.errorOutput.contains(" bytes written ("), "\(export.errorOutput)")
            #expect(FileManager.default.fileExists(atPath: out + "/screen_visits/day=2025-11-21/part-00000.jsonl.zst"))

            func sql(_ query: String) throws -> String {
                let result = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "--format", "json", query])
                #expect(result.status == 0, "\(query): \(result.errorOutput)")
                return result.output
            }
            let screens = try Self.rows(
                sql(
                    "SELECT screen, storyboard_id, count(*) AS views, count(DISTINCT session) AS sessions, sum(dwell) AS dwell_total FROM screen_visits GROUP BY screen, storyboard_id"
                ), ["screen", "storyboard_id", "views", "sessions", "dwell_total"])
            let transitions = try Self.rows(
                sql(#"SELECT "from", "to", how, count(*) AS count FROM transitions GROUP BY 1, 2, 3"#), ["from", "to", "how", "count"])
            #expect(screens.count > 5 && transitions.count > 10, "the workload moves between screens")

            // The funnel's two screens: the move between two screens (not UIKit's containers) made
            // in the most sessions.
            let popular = try Self.rows(
                sql(
                    #"SELECT "from", "to", count(DISTINCT session) AS sessions FROM transitions WHERE "from" NOT LIKE 'UI%' AND "to" NOT LIKE 'UI%' AND "from" <> "to" GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 1"#
                ), ["from", "to"])
            let pair = try #require(popular.first).split(separator: "|").map(String.init)
            let (a, b) = (pair[0], pair[1])
            let funnelOutput = try sql(
                #"""
                SELECT (SELECT count(DISTINCT session) FROM screen_visits WHERE screen = '\#(a)') AS reached_a,
                       (SELECT count(DISTINCT x.session) FROM screen_visits x
                         WHERE x.screen = '\#(a)' AND EXISTS (SELECT 1 FROM screen_visits y
                           WHERE y.session = x.session AND y.screen = '\#(b)' AND y."index" > x."index")) AS reached_b
                """#)
            let funnel = try Self.rows(funnelOutput, ["reached_a", "reached_b"])
            let reached = try #require(funnel.first).split(separator: "|").compactMap { Int($0) }
            #expect(reached.count == 2 && reached[1] > 0 && reached[1] <= reached[0], "\(a) → \(b): \(funnel)")

            let script = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.duckDBScript, out, a, b], timeout: 300)
            try #require(script.status == 0, "\(script.errorOutput)")
            let duck = try #require(try JSONSerialization.jsonObject(with: script.standardOutput) as? [String: Any])
            #expect(duck["screens"] as? [String] == screens)
            #expect(duck["transitions"] as? [String] == transitions)
            #expect((duck["funnel"] as? [Any])?.map(Self.cell).joined(separator: "|") == funnel.first)
            #expect(duck["days"] as? [String] == ["2025-11-21"], "hive_partitioning adds the day column from the path")
            // The events table (read from the log as the query runs, grouped) against the export's.
            let types = try Self.rows(sql("SELECT type, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC, 1"), ["type", "n"])
            #expect(types.count > 10 && types.sorted() == duck["types"] as? [String], "events per type")

            // navlog's own reports, where this build has them.
            let help = try ProcessRunner.navlog(["query", "--help"]).output
            if help.contains("screens") {
                let report = try ProcessRunner.navlog(["query", "screens", "--data-dir", data, "--format", "json"])
                #expect(report.status == 0, "\(report.errorOutput)")
                let rows = try Self.rows(report.output, ["screen", "storyboardID", "views", "sessions", "dwellTotal"])
                #expect(rows == screens, "navlog query screens")
            }
            if help.contains("transitions") {
                let report = try ProcessRunner.navlog(["query", "transitions", "--data-dir", data, "--format", "json"])
                #expect(report.status == 0, "\(report.errorOutput)")
                #expect(try Self.rows(report.output, ["from", "to", "how", "count"]) == transitions, "navlog query transitions")
            }
            if help.contains("funnel") {
                let report = try ProcessRunner.navlog(["query", "funnel", "--data-dir", data, "--format", "json", a, b])
                #expect(report.status == 0, "\(report.errorOutput)")
                let steps = report.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                #expect(steps.map { Self.cell($0["sessions"] as Any) }.joined(separator: "|") == funnel.first, "navlog query funnel")
            }
        }
    }

    @Test("navlog query sql: --schema, csv and table output, and SQL errors that name the position and exit 1")
    func querySQL() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = try Self.ingest(into: dir, events: 1_500)
            let schema = try ProcessRunner.navlog(["query", "sql", "--schema"])
            #expect(schema.status == 0)
            for table in ["events", "screen_visits", "transitions", "sessions", "anomalies", "exits"] {
                #expect(schema.output.contains("\n\(table): ") || schema.output.hasPrefix("\(table): "), "\(table)")
            }
            let csv = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "--format", "csv", "SELECT count(*) AS sessions, sum(ended) AS ended FROM sessions"])
            #expect(csv.status == 0, "\(csv.errorOutput)")
            let lines = csv.output.split(separator: "\n")
            #expect(lines.first == "sessions,ended" && lines.count == 2)
            let table = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "SELECT 'a' AS name, 12 AS n UNION ALL SELECT 'bcd', 3 ORDER BY 2"])
            #expect(table.output == "name   n\nbcd    3\na     12\n")
            let events = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "--format", "json", "SELECT count(*) AS n FROM events"])
            #expect(events.output == #"{"n":1500}"# + "\n")

            let syntax = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "SELECT screen, FROM screen_visits"])
            #expect(syntax.status == 1)
            #expect(
                syntax.errorOutput
                    == #"navlog query sql: SQL error at line 1, column 16 (byte offset 15): near "FROM": syntax error"#
                    + "\n  SELECT screen, FROM screen_visits\n                 ^\n",
                "\(syntax.errorOutput)")
            let column = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "SELECT from FROM transitions"])
            #expect(column.status == 1 && column.errorOutput.contains("syntax error"), "from is a keyword: quote it")
            let missing = try ProcessRunner.navlog(["query", "sql", "--data-dir", dir.appendingPathComponent("nothing").path, "SELECT count(*) FROM sessions"])
            #expect(missing.status == 1 && missing.errorOutput.hasPrefix("navlog query sql: "), "\(missing.errorOutput)")
            // gzip: runs of complete gzip members, which DuckDB reads like zstd.
            let gzipDirectory = dir.appendingPathComponent("gz").path
            let gzip = try ProcessRunner.navlog(["export", "--data-dir", data, "--to", gzipDirectory, "--compress", "gzip", "--table", "screen_visits"])
            #expect(gzip.status == 0, "\(gzip.errorOutput)")
            // Read back by DuckDB when Python has it (tools/setup-deps --test installs it; the rest of
            // this test needs no DuckDB).
            guard Self.duckDBAvailable else { return }
            let counted = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                [
                    "python3", "-c",
                    "import duckdb, sys; print(duckdb.sql(f\"SELECT count(*) FROM read_json('{sys.argv[1]}/screen_visits/*/*.jsonl.gz', hive_partitioning=true)\").fetchall()[0][0])",
                    gzipDirectory,
                ])
            let expected = try ProcessRunner.navlog(["query", "sql", "--data-dir", data, "--format", "csv", "SELECT count(*) FROM screen_visits"])
            #expect(counted.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected.output.split(separator: "\n").last.map(String.init), "\(counted.errorOutput)")
        }
    }
}
