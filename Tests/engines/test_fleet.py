"""A fleet: three navlogd hosts of one app export into one tree, and Spark (the PySpark job of
tools/spark, through spark-submit) and ClickHouse (chDB) over the union give navlog's answers.

A production-shaped log is dealt to three hosts by session; a few sessions move host halfway
(their app reconnected elsewhere), so two hosts hold parts of them. Each host has its own data
directory and runs its own `navlog export --incremental --host NAME` into the shared tree. navlog's
own answer for the fleet is the union of what `navlog query sql` gives on each host; a moved
session is one session in the totals. Also here: one table-day in several part files is read by
Spark as several tasks, and the job's funnel equals `navlog query funnel`.
"""

import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from test_engines import BENCH, ClickHouse, ROOT, Spark, deliver_late, json_lines, navlog, statements

HOSTS = ["host-a", "host-b", "host-c"]
JOB = ROOT / "tools" / "spark" / "navlog_job.py"


@pytest.fixture(scope="module")
def fleet():
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-fleet-"))
    source = work / "all.jsonl"
    with open(source, "w") as out:
        subprocess.run([BENCH, "generate", "9000", "31", "--live", "300"], stdout=out, check=True, timeout=300)
    deliver_late(source, seed=31)
    events = [json.loads(line) for line in source.read_text().splitlines()]
    ids = sorted({e["session"] for e in events})
    moved = set(ids[:: max(1, len(ids) // 5)][:5])
    seen = collections.Counter(e["session"] for e in events)
    count = collections.Counter()
    files = {host: open(work / f"{host}.jsonl", "w") for host in HOSTS}
    for event in events:
        session = event["session"]
        home = ids.index(session) % 3
        count[session] += 1
        if session in moved and count[session] > seen[session] // 2:
            home = (home + 1) % 3
        files[HOSTS[home]].write(json.dumps(event) + "\n")
    for f in files.values():
        f.close()
    tree = work / "tree"
    data = {}
    for host in HOSTS:
        data[host] = work / host / "data"
        navlog("ingest", "--data-dir", str(data[host]), str(work / f"{host}.jsonl"))
        state = work / host / "export-state.json"
        navlog("export", "--data-dir", str(data[host]), "--to", str(tree), "--incremental", "--state", str(state), "--host", host)
        navlog("export", "--data-dir", str(data[host]), "--to", str(tree), "--incremental", "--state", str(state), "--host", host, "--idle", "0s")

    def rows(sql):
        out = []
        for host in HOSTS:
            out += json_lines(navlog("query", "sql", "--data-dir", str(data[host]), "--format", "json", sql).stdout)
        return out

    visits = rows("SELECT session, screen, storyboard_id, dwell FROM screen_visits")
    screens = collections.defaultdict(lambda: [0, set(), 0])
    for v in visits:
        entry = screens[(v["screen"], v["storyboard_id"])]
        entry[0] += 1
        entry[1].add(v["session"])
        entry[2] += v["dwell"]
    moves = collections.Counter((t["from"], t["to"], t["how"]) for t in rows('SELECT "from", "to", how FROM transitions'))
    session_rows = rows("SELECT session, events, visits, anomalies, ended FROM sessions")
    per_session = collections.defaultdict(lambda: [0, 0, 0, 0])
    for s in session_rows:
        entry = per_session[s["session"]]
        entry[0] += s["events"]
        entry[1] += s["visits"]
        entry[2] += s["anomalies"]
        entry[3] = max(entry[3], s["ended"])
    want = {
        "screens": sorted(((k[0], k[1], v[0], len(v[1]), v[2]) for k, v in screens.items()), key=repr),
        "transitions": sorted((k[0] or "", k[1], k[2], v) for k, v in moves.items()),
        "sessions": (len(per_session), sum(v[0] for v in per_session.values()), sum(v[1] for v in per_session.values()),
                     sum(v[2] for v in per_session.values()), sum(v[3] for v in per_session.values())),
    }
    # The three logs together: every event in one data directory, replayed as one log.
    merged = work / "merged" / "data"
    navlog("ingest", "--data-dir", str(merged), str(source))
    yield {"work": work, "tree": tree, "data": data, "want": want, "moved": moved, "sessions": len(ids), "events": len(events),
           "host_session_rows": len(session_rows), "merged": merged}
    shutil.rmtree(work, ignore_errors=True)


def test_fleet_tree_has_every_host(fleet):
    hosts = sorted(p.name for p in (fleet["tree"] / "screen_visits").iterdir() if p.name.startswith("host="))
    assert hosts == [f"host={h}" for h in HOSTS]
    # A moved session has a row on each of its two hosts: the totals must count it once.
    assert fleet["host_session_rows"] == fleet["sessions"] + len(fleet["moved"])
    assert fleet["want"]["sessions"][0] == fleet["sessions"]


def test_spark_job_over_the_fleet_equals_navlog(fleet):
    out = fleet["work"] / "job-out"
    submit = pathlib.Path(sys.executable).parent / "spark-submit"
    command = [str(submit) if submit.exists() else "spark-submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false",
               str(JOB), str(fleet["tree"]), "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=fleet["work"])
    assert result.returncode == 0, result.stderr[-3000:]

    def read(name):
        lines = []
        for path in sorted((out / name).glob("part-*.json")):
            lines += json_lines(path.read_text())
        return lines

    screens = sorted(((r["screen"], r.get("storyboard_id"), r["views"], r["sessions"], r["dwell_total"]) for r in read("screens")), key=repr)
    assert screens == fleet["want"]["screens"]
    moves = sorted((r.get("from") or "", r["to"], r["how"], r["count"]) for r in read("transitions"))
    assert moves == fleet["want"]["transitions"]
    [sessions] = read("sessions")
    assert (sessions["sessions"], sessions["events"], sessions["visits"], sessions["anomalies"], sessions["ended"]) == fleet["want"]["sessions"]
    assert sessions["events"] == fleet["events"]


def test_clickhouse_over_the_fleet_equals_navlog(fleet):
    click = ClickHouse()
    script = navlog("export", "--to", str(fleet["tree"]), "--print-read", "clickhouse").stdout
    assert "host, day" in script
    click.run(script)
    screens = sorted(click.query("SELECT screen, storyboard_id, count(), uniqExact(session), sum(dwell) FROM screen_visits GROUP BY screen, storyboard_id"), key=repr)
    assert screens == fleet["want"]["screens"]
    moves = sorted(click.query("SELECT ifNull(`from`, ''), `to`, how, count() FROM transitions GROUP BY 1, 2, 3"))
    assert moves == fleet["want"]["transitions"]
    assert click.query("SELECT uniqExact(session), sum(events) FROM sessions") == [(fleet["sessions"], fleet["events"])]
    assert click.query("SELECT count(DISTINCT host) FROM events") == [(3,)]


def test_large_day_is_read_as_several_tasks(fleet, tmp_path):
    """Part files of bounded size: a table-day in several files is several Spark tasks (and the
    same rows); in one file (zstd is not splittable) it is one."""
    data = fleet["data"]["host-a"]
    small, whole = tmp_path / "small-parts", tmp_path / "one-part"
    navlog("export", "--data-dir", str(data), "--to", str(small), "--table", "events", "--part-size", "64K")
    navlog("export", "--data-dir", str(data), "--to", str(whole), "--table", "events")
    parts = list((small / "events").rglob("part-*.jsonl.zst"))
    days = {p.parent for p in parts}
    assert len(parts) > len(days) >= 1
    spark = Spark()
    spark.run(navlog("export", "--to", str(small), "--print-read", "spark", "--table", "events").stdout)
    frame = spark.spark.table("events")
    assert frame.rdd.getNumPartitions() > 1
    stored = json_lines(navlog("query", "sql", "--data-dir", str(data), "--format", "json", "SELECT count(*) AS n FROM events").stdout)[0]["n"]
    assert frame.count() == stored
    spark.run(navlog("export", "--to", str(whole), "--print-read", "spark", "--table", "events").stdout)
    one = spark.spark.table("events")
    assert one.rdd.getNumPartitions() == len(days)
    assert one.count() == frame.count()


def test_job_funnel_equals_navlog_query_funnel(fleet, tmp_path):
    data = fleet["data"]["host-b"]
    tree = tmp_path / "one-host"
    navlog("export", "--data-dir", str(data), "--to", str(tree))
    top = json_lines(navlog("query", "screens", "--data-dir", str(data), "--format", "json").stdout)
    steps = [row["screen"] for row in top[:3]]
    want = [(r["step"], r["screen"], r["sessions"]) for r in json_lines(navlog("query", "funnel", "--data-dir", str(data), "--format", "json", *steps).stdout)]
    sys.path.insert(0, str(JOB.parent))
    import navlog_job

    spark = Spark().spark
    got = [tuple(row) for row in navlog_job.funnel(navlog_job.table(spark, str(tree), "screen_visits"), steps).collect()]
    assert got == want


def test_fleet_equals_navlog_over_the_three_logs_together(fleet):
    """navlog over all three hosts' events in one log: the same sessions and events, and for
    every session that stayed on one host the same views, dwell and transitions as ClickHouse
    over the fleet's tree. A moved session is one session in both; its screen views are derived
    on each host from the part of it that host saw (navlog per host has no other), so they are
    compared per host above, not here."""
    click = ClickHouse()
    click.run(navlog("export", "--to", str(fleet["tree"]), "--print-read", "clickhouse").stdout)
    moved = ", ".join("'" + m.replace("'", "''") + "'" for m in sorted(fleet["moved"]))
    merged = str(fleet["merged"])

    def merged_rows(sql):
        return [tuple(r.values()) for r in json_lines(navlog("query", "sql", "--data-dir", merged, "--format", "json", sql).stdout)]

    assert merged_rows("SELECT count(*), sum(events) FROM sessions") == click.query("SELECT uniqExact(session), sum(events) FROM sessions")
    keep = f"WHERE session NOT IN ({moved})"
    want = sorted(merged_rows(f"SELECT screen, count(*), count(DISTINCT session), sum(dwell) FROM screen_visits {keep} GROUP BY screen"), key=repr)
    got = sorted(click.query(f"SELECT screen, count(), uniqExact(session), sum(dwell) FROM screen_visits {keep} GROUP BY screen"), key=repr)
    assert got == want
    want = sorted(merged_rows(f'SELECT ifnull("from", \'\'), "to", how, count(*) FROM transitions {keep} GROUP BY 1, 2, 3'), key=repr)
    got = sorted(click.query(f"SELECT ifNull(`from`, ''), `to`, how, count() FROM transitions {keep} GROUP BY 1, 2, 3"), key=repr)
    assert got == want
