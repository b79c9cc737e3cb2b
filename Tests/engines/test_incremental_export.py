"""navlog export --incremental, killed: every row reaches the output exactly once.

A production-shaped log (`navlog-bench generate`, hundreds of live sessions, 3% of its events
delivered late, some in a later part than their session's end) arrives in four parts. Between parts, `navlog export --incremental` is started and killed with SIGKILL at a
random instant, 20 times (before it wrote anything, while it writes part files, while it renames
them, while it commits its state); then the runs are left to finish, the last one with `--idle 0s`
so that every session still open is exported. The union of the files in the output tree must be,
row for row and table by table, what one `navlog export` of the whole log writes: nothing lost,
nothing doubled, no temporary file left. Then DuckDB reads the incremental tree with the
statements navlog export --print-read prints, and counts the same rows.
"""

import collections
import json
import pathlib
import random
import shutil
import subprocess
import tempfile
import time

from navlog_stack import popen
from test_engines import BENCH, NAVLOG, TABLES, deliver_late, navlog, statements

ROUNDS = 20


def rows_of_tree(root):
    """Every row of every table under an export tree (zstd JSON Lines), as a Counter per table."""
    found = {table: collections.Counter() for table in TABLES}
    for table in TABLES:
        for path in sorted((root / table).rglob("*.jsonl.zst")):
            text = subprocess.run(["zstd", "-dcq", str(path)], capture_output=True, check=True).stdout.decode()
            partition = "/".join(part for part in path.relative_to(root / table).parts[:-1])
            for line in text.splitlines():
                found[table][(partition, line)] += 1
    return found


def test_killed_incremental_runs_leave_every_row_exactly_once():
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-incremental-"))
    try:
        source = work / "all.jsonl"
        with open(source, "w") as out:
            subprocess.run([BENCH, "generate", "8000", "23", "--live", "300"], stdout=out, check=True, timeout=300)
        # Late delivery: some events of a session arrive in a later part than its session.end.
        deliver_late(source, seed=23, fraction=0.03, most=1500)
        lines = source.read_text().splitlines(keepends=True)
        parts = []
        for number in range(4):
            part = work / f"part{number}.jsonl"
            part.write_text("".join(lines[number * len(lines) // 4:(number + 1) * len(lines) // 4]))
            parts.append(part)
        data, out, state = work / "data", work / "out", work / "state.json"
        command = [NAVLOG, "export", "--data-dir", str(data), "--to", str(out), "--incremental", "--state", str(state)]
        rng = random.Random(16)
        navlog("ingest", "--data-dir", str(data), str(parts[0]))
        next_part = 1
        killed_with_files = 0
        for round_number in range(ROUNDS):
            if next_part < len(parts) and round_number % 6 == 5:
                navlog("ingest", "--data-dir", str(data), str(parts[next_part]))
                next_part += 1
            process = popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0.0, 0.9))
            process.kill()
            process.wait()
            if any(out.rglob("part-r*")):
                killed_with_files += 1
        while next_part < len(parts):
            navlog("ingest", "--data-dir", str(data), str(parts[next_part]))
            next_part += 1
        finished = navlog(*command[1:])
        assert "run " in finished.stderr or "nothing new" in finished.stderr, finished.stderr
        flushed = navlog(*command[1:], "--idle", "0s")
        assert "session(s) completed" in flushed.stderr, flushed.stderr
        again = navlog(*command[1:], "--idle", "0s")
        assert "nothing new" in again.stderr, again.stderr
        assert killed_with_files > 0, "no kill landed while the export was writing: the test proved nothing"

        leftovers = [str(p) for p in out.rglob("*.tmp")]
        assert leftovers == [], f"temporary files left: {leftovers}"
        saved = json.loads(state.read_text())
        assert saved.get("pending") is None and saved["exportedThroughLSN"] == len(lines)

        full = work / "full"
        navlog("export", "--data-dir", str(data), "--to", str(full))
        want, got = rows_of_tree(full), rows_of_tree(out)
        for table in TABLES:
            doubled = [row for row, count in got[table].items() if count > 1]
            assert not doubled, f"{table}: {len(doubled)} row(s) written more than once, e.g. {doubled[0]}"
            missing = want[table] - got[table]
            extra = got[table] - want[table]
            assert not missing and not extra, (
                f"{table}: {sum(missing.values())} row(s) missing (e.g. {next(iter(missing), None)}), "
                f"{sum(extra.values())} not in the full export (e.g. {next(iter(extra), None)})")
        assert sum(got["events"].values()) == len(lines)

        import duckdb

        con = duckdb.connect()
        for statement in statements(navlog("export", "--to", str(out), "--print-read", "duckdb").stdout):
            con.execute(statement)
        for table in TABLES:
            assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == sum(want[table].values())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_run_with_other_options_or_layout_is_refused(tmp_path):
    """One tree, one layout: a state file written for other options, or a tree with(out) host
    partitions, is refused with a message that says which option differs and what to do."""
    data, out, state = tmp_path / "data", tmp_path / "out", tmp_path / "state.json"
    navlog("ingest", "--data-dir", str(data), str(pathlib.Path(__file__).parent / "edge-cases.jsonl"))
    navlog("export", "--data-dir", str(data), "--to", str(out), "--incremental", "--state", str(state))
    other = navlog("export", "--data-dir", str(data), "--to", str(out), "--incremental", "--state", str(state), "--format", "csv", check=False)
    assert other.returncode == 1
    assert "belongs to an export with --format jsonl, not csv" in other.stderr, other.stderr
    host = navlog("export", "--data-dir", str(data), "--to", str(out), "--host", "h1", "--table", "events", check=False)
    assert host.returncode == 1
    assert "holds an export without host= partitions" in host.stderr and "export without --host" in host.stderr, host.stderr
    incremental_and_filter = navlog("export", "--data-dir", str(data), "--to", str(out), "--incremental", "--state", str(state), "--app", "Edge", check=False)
    assert incremental_and_filter.returncode != 0 and "--incremental exports every session" in incremental_and_filter.stderr
