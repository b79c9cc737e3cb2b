"""navlog export read by the real engines: Apache Spark (PySpark, local[2]), ClickHouse (chDB)
and DuckDB load the files exactly as navlog writes them, with the statements `navlog export
--print-read ENGINE` prints (the ones docs/ANALYTICS-TABLES.md shows), and give navlog's answers.

Two logs: a production-shaped one from `navlog-bench generate` (hundreds of live sessions, mixed
recording styles), 3% of its events delivered late (after up to 400 others) and Tests/engines/edge-cases.jsonl, written by hand for what
engines get wrong: a client that sends no `seq` (so the first day's integer columns are all null),
an app version `1.10`, a screen whose class is "", strings with commas, quotes, newlines, tabs and
backslashes, a session id with a comma and quotes. For every table each engine returns every row
navlog has (`navlog query sql "SELECT * FROM TABLE"`), value for value; and the aggregate answers
(views, sessions and dwell per screen, transitions, session counts) equal `navlog query`'s.

Run by tools/test after the Swift tests, against the debug build's binaries (NAVLOG_BIN_DIR).
tools/setup-deps --test installs PySpark, Java, chDB and DuckDB; the tests never skip.
"""

import json
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from navlog_stack import BENCH, NAVLOG, ROOT  # Tests/conftest.py puts Tests/support on the path

HERE = pathlib.Path(__file__).resolve().parent


FORMATS = [("jsonl", "zstd"), ("jsonl", "gzip"), ("csv", "none"), ("csv", "zstd")]
TABLES = ["events", "screen_visits", "transitions", "sessions", "anomalies", "exits"]


def navlog(*args, check=True, input=None):
    result = subprocess.run([NAVLOG, *args], capture_output=True, text=True, timeout=600, input=input)
    if check and result.returncode != 0:
        raise AssertionError(f"navlog {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def statements(text):
    """The SQL statements of --print-read's output (comments dropped)."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    return [part.strip() for part in body.split(";\n") if part.strip().rstrip(";")]


def deliver_late(path, seed, fraction=0.03, most=400):
    """Rewrites a generated NDJSON file as production delivers it (../shared/workload.md): a
    share of the events arrive late, after up to `most` later events (a batch of a session
    retried or delayed), so sessions are stored out of seq order."""
    import random

    rng = random.Random(seed)
    lines = path.read_text().splitlines(keepends=True)
    delayed = []
    out = []
    for number, line in enumerate(lines):
        if rng.random() < fraction:
            delayed.append((number + rng.randint(1, most), line))
        else:
            out.append(line)
        due = [entry for entry in delayed if entry[0] <= number]
        for entry in due:
            out.append(entry[1])
            delayed.remove(entry)
    out += [line for _, line in sorted(delayed)]
    assert len(out) == len(lines)
    path.write_text("".join(out))


def norm(value):
    if isinstance(value, bool):
        return int(value)
    return value


class Data:
    """A data directory, its exports in each format, and navlog's own answers."""

    def __init__(self, work, name, source):
        self.dir = work / name
        self.data = self.dir / "data"
        navlog("ingest", "--data-dir", str(self.data), str(source))
        self.exports = {}
        for fmt, compress in FORMATS:
            out = self.dir / f"export-{fmt}-{compress}"
            navlog("export", "--data-dir", str(self.data), "--to", str(out), "--format", fmt, "--compress", compress)
            self.exports[(fmt, compress)] = out
        self.rows = {}
        self.columns = {}
        for table in TABLES:
            rows = json_lines(navlog("query", "sql", "--data-dir", str(self.data), "--format", "json", f"SELECT * FROM {table}").stdout)
            self.rows[table] = sorted((tuple(norm(v) for v in row.values()) for row in rows), key=repr)
        # The column order of SELECT *, from the schema file the export ships beside each table.
        first = self.exports[FORMATS[0]]
        self.columns = {table: [part.split("`")[1] for part in (first / table / "_schema.spark").read_text().strip().split(", ")] for table in TABLES}
        self.screens = json_lines(navlog("query", "screens", "--data-dir", str(self.data), "--format", "json").stdout)
        self.transitions = json_lines(navlog("query", "transitions", "--data-dir", str(self.data), "--format", "json").stdout)
        self.session_count = len(json_lines(navlog("sessions", "--data-dir", str(self.data), "--format", "json").stdout))

    def read(self, key, engine):
        return navlog("export", "--to", str(self.exports[key]), "--format", key[0], "--compress", key[1], "--print-read", engine).stdout


@pytest.fixture(scope="module")
def logs():
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-engines-"))
    generated = work / "generated.jsonl"
    with open(generated, "w") as out:
        subprocess.run([BENCH, "generate", "12000", "11", "--live", "500"], stdout=out, check=True, timeout=300)
    deliver_late(generated, seed=11)
    result = {"edge": Data(work, "edge", HERE / "edge-cases.jsonl"), "workload": Data(work, "workload", generated)}
    yield result
    shutil.rmtree(work, ignore_errors=True)


# --- the engines ------------------------------------------------------------------------------


class DuckDB:
    name = "duckdb"

    def __init__(self):
        import duckdb

        self.con = duckdb.connect()

    def run(self, script):
        for statement in statements(script):
            self.con.execute(statement)

    def query(self, sql):
        return [tuple(norm(v) for v in row) for row in self.con.execute(sql).fetchall()]


class ClickHouse:
    name = "clickhouse"

    def __init__(self):
        from chdb import session

        self.session = session.Session()
        self.session.query("SET output_format_json_quote_64bit_integers = 0")

    def run(self, script):
        for statement in statements(script):
            self.session.query(statement)

    def query(self, sql):
        text = self.session.query(sql, "JSONCompactEachRow").bytes().decode()
        return [tuple(norm(v) for v in json.loads(line)) for line in text.splitlines() if line.strip()]


class Spark:
    name = "spark"
    _session = None

    def __init__(self):
        if Spark._session is None:
            from pyspark.sql import SparkSession

            Spark._session = (SparkSession.builder.master("local[2]").appName("navlog-engines-test")
                              .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
                              .config("spark.driver.memory", "1g").getOrCreate())
            Spark._session.sparkContext.setLogLevel("ERROR")
        self.spark = Spark._session

    def run(self, script):
        for statement in statements(script):
            self.spark.sql(statement)

    def query(self, sql):
        return [tuple(norm(v) for v in row) for row in self.spark.sql(sql).collect()]


ENGINES = {"duckdb": DuckDB, "clickhouse": ClickHouse, "spark": Spark}


def quoted(engine, column):
    return f"`{column}`" if engine == "spark" or engine == "clickhouse" else f'"{column}"'


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("log", ["edge", "workload"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f[0]}-{f[1]}")
def test_every_row_loads_exactly(logs, engine, log, fmt):
    """Each engine reads every row of every table, value for value, as navlog query sql has it."""
    data = logs[log]
    db = ENGINES[engine]()
    db.run(data.read(fmt, engine))
    for table in TABLES:
        columns = ", ".join(quoted(engine, c) for c in data.columns[table])
        got = sorted(db.query(f"SELECT {columns} FROM {table}"), key=repr)
        want = data.rows[table]
        assert len(got) == len(want), f"{engine} {log} {fmt} {table}: {len(got)} rows, navlog has {len(want)}"
        for g, w in zip(got, want):
            assert g == w, f"{engine} {log} {fmt} {table}: {g!r} != navlog's {w!r}"


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("log", ["edge", "workload"])
def test_reports_equal_navlog_query(logs, engine, log):
    """Views, sessions and dwell per screen, transitions and the session count over the default
    export equal navlog query screens / transitions and navlog sessions."""
    data = logs[log]
    db = ENGINES[engine]()
    db.run(data.read(("jsonl", "zstd"), engine))
    distinct = "uniqExact(session)" if engine == "clickhouse" else "count(DISTINCT session)"
    screens = db.query(f"SELECT screen, storyboard_id, count(*), {distinct}, sum(dwell) FROM screen_visits GROUP BY screen, storyboard_id")
    want = [(s["screen"], s["storyboardID"], s["views"], s["sessions"], s["dwellTotal"]) for s in data.screens]
    assert sorted(screens, key=repr) == sorted(want, key=repr)
    q = lambda c: quoted(engine, c)
    moves = db.query(f"SELECT {q('from')}, {q('to')}, how, count(*) FROM transitions GROUP BY {q('from')}, {q('to')}, how")
    want = [(t["from"], t["to"], t["how"], t["count"]) for t in data.transitions]
    assert sorted(moves, key=repr) == sorted(want, key=repr)
    assert db.query(f"SELECT {distinct} FROM sessions") == [(data.session_count,)]
    assert db.query(f"SELECT {distinct} FROM events") == [(data.session_count,)]


def test_day_partition_and_times(logs):
    """The day partition is the UTC day of the row's main time, and µs times are timestamps
    through timestamp_micros (Spark), make_timestamp (DuckDB) and fromUnixTimestamp64Micro
    (ClickHouse), as the docs say."""
    data = logs["edge"]
    spark = Spark()
    spark.run(data.read(("jsonl", "zstd"), "spark"))
    rows = spark.query("SELECT CAST(day AS STRING), CAST(timestamp_micros(start) AS STRING) FROM screen_visits WHERE `index` = 0 ORDER BY start")
    assert rows == [("2025-11-20", "2025-11-20 00:00:00.2"), ("2025-11-21", "2025-11-21 00:00:00.2")]
    duck = DuckDB()
    duck.run(data.read(("jsonl", "zstd"), "duckdb"))
    assert duck.query("SELECT CAST(day AS VARCHAR), CAST(make_timestamp(start) AS VARCHAR) FROM screen_visits WHERE \"index\" = 0 ORDER BY start") == [
        ("2025-11-20", "2025-11-20 00:00:00.2"), ("2025-11-21", "2025-11-21 00:00:00.2")]
    click = ClickHouse()
    click.run(data.read(("jsonl", "zstd"), "clickhouse"))
    assert click.query("SELECT toString(day), toString(fromUnixTimestamp64Micro(start, 'UTC')) FROM screen_visits WHERE `index` = 0 ORDER BY start") == [
        ("2025-11-20", "2025-11-20 00:00:00.200000"), ("2025-11-21", "2025-11-21 00:00:00.200000")]


def test_spark_metastore_table_sees_partitions_after_repair(logs, tmp_path):
    """The persistent-table form of the docs: a partitioned table over the export's absolute
    path has its rows once MSCK REPAIR TABLE has found the day partitions."""
    data = logs["edge"]
    spark = Spark().spark
    ddl = navlog("export", "--to", str(data.exports[("jsonl", "zstd")]), "--print-read", "spark").stdout
    assert "screen_visits" in ddl
    columns = (data.exports[("jsonl", "zstd")] / "screen_visits" / "_schema.spark").read_text().strip()
    location = str(data.exports[("jsonl", "zstd")] / "screen_visits")
    spark.sql("DROP TABLE IF EXISTS navlog_visits_table")
    spark.sql(f"CREATE TABLE navlog_visits_table ({columns}, day DATE) USING json PARTITIONED BY (day) LOCATION '{location}'")
    spark.sql("MSCK REPAIR TABLE navlog_visits_table")
    assert spark.sql("SELECT count(*) FROM navlog_visits_table").collect()[0][0] == len(data.rows["screen_visits"])
    spark.sql("DROP TABLE navlog_visits_table")


@pytest.mark.parametrize("engine", list(ENGINES))
def test_docs_show_the_statements_navlog_prints(engine, tmp_path):
    """docs/ANALYTICS-TABLES.md shows what `navlog export --print-read` prints, so the docs'
    read statements are the ones these tests run."""
    docs = (ROOT / "docs" / "ANALYTICS-TABLES.md").read_text()
    printed = subprocess.run([NAVLOG, "export", "--to", "/srv/navlog-export", "--print-read", engine, "--table", "screen_visits", "--table", "transitions"],
                             capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    for line in printed.splitlines():
        assert line in docs, f"docs/ANALYTICS-TABLES.md lacks this line of navlog export --print-read {engine}:\n{line}"
