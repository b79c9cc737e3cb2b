"""A fleet behind nginx (tools/intake/nginx-fleet.conf.in, docs/INTAKE-DEPLOY.md): three intake +
navlogd pairs on loopback, nginx in front with `hash $http_x_navlog_session consistent;`, so that
every request of a session lands on one pair without nginx reading the body.

1,000 production-shaped sessions (navlog-bench generate) are sent over TLS as interleaved
requests, each one gzip batch of one session's consecutive events with the session in
X-Navlog-Session, by 8 client connections at once. Halfway through, one pair (intake, then its
navlogd) is stopped. The client resends what is answered 502/503/504 or fails to connect
(exactly-once is by (session, seq), so a resend is safe), up to a bound.

Checked, by reading each host's log with `navlog cat`: every event sent is stored, each once in
its host; a session of a pair that kept running is on exactly one host; only sessions of the
stopped pair are split, over it and one other host (nginx's consistent hash re-maps its sessions
and only its); `navlog export --incremental --host` of the three hosts into one tree has every
event exactly once (the union of the hosts), a split session under two host= partitions.
What happened is printed (pytest -s) and, with NAVLOG_FLEET_REPORT=FILE, written as JSON.
"""

import collections
import http.client
import json
import os
import pathlib
import shutil
import signal
import ssl
import tempfile
import threading
import time

import pytest

from nginx_support import (Intake, Navlogd, Nginx, free_port, generate, gzip_lines, intake_body_limit, navlog, nginx_binary, render,
                           self_signed, wait_for_port)

SECRET = "fleet-test-secret-0123456789abcdef"
SESSIONS = 1000
BATCH = 16
CLIENTS = 8
HOSTS = ["host-a", "host-b", "host-c"]
STOPPED = 1  # host-b is stopped halfway
RESEND_STATUSES = {502, 503, 504}
MAX_ATTEMPTS = 60


def batches_of(events):
    """The first SESSIONS sessions' events, cut into batches of up to BATCH consecutive events of one
    session, in the order of the generated stream (sessions interleaved as in production)."""
    chosen, wanted = [], set()
    for e in events:
        if e["session"] not in wanted:
            chosen.append(e["session"])
            wanted.add(e["session"])
            if len(chosen) == SESSIONS:
                break
    open_batch = {}
    out = []
    for e in events:
        s = e["session"]
        if s not in wanted:
            continue
        batch = open_batch.setdefault(s, [])
        batch.append(e)
        if len(batch) == BATCH:
            out.append((s, batch))
            open_batch[s] = []
    out += [(s, b) for s, b in open_batch.items() if b]
    return out, chosen


class Client:
    """CLIENTS threads, each with one keep-alive HTTPS connection through nginx, taking the next
    batch in order; 502/503/504 and connection failures are resent after a short pause."""

    def __init__(self, port, cafile, batches):
        self.port = port
        self.context = ssl.create_default_context(cafile=str(cafile))
        self.batches = batches
        self.bodies = [gzip_lines(b) for _, b in batches]
        self.next = 0
        self.lock = threading.Lock()
        self.answered = 0
        self.outcome = [None] * len(batches)  # (final status, attempts, statuses seen)
        self.failures = []

    def take(self):
        with self.lock:
            if self.next >= len(self.batches):
                return None
            i = self.next
            self.next += 1
            return i

    def connect(self):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=60)

    def worker(self):
        conn = self.connect()
        while True:
            i = self.take()
            if i is None:
                break
            session, events = self.batches[i]
            seen = []
            for attempt in range(1, MAX_ATTEMPTS + 1):
                try:
                    conn.request("POST", "/v1/events", body=self.bodies[i], headers={
                        "Authorization": f"Bearer {SECRET}", "Content-Encoding": "gzip",
                        "Content-Type": "application/x-ndjson", "X-Navlog-Session": session})
                    response = conn.getresponse()
                    body = response.read()
                    seen.append(response.status)
                    if response.status in RESEND_STATUSES:
                        time.sleep(0.2)
                        continue
                    if response.status != 200:
                        self.failures.append((session, response.status, body[:300]))
                    elif json.loads(body)["stored"] + json.loads(body)["duplicates"] != len(events):
                        self.failures.append((session, "counts", body[:300]))
                    break
                except (OSError, http.client.HTTPException) as error:
                    seen.append(type(error).__name__)
                    conn.close()
                    conn = self.connect()
                    time.sleep(0.2)
            else:
                self.failures.append((session, "gave up", seen))
            self.outcome[i] = (seen[-1], len(seen), seen)
            with self.lock:
                self.answered += 1
        conn.close()

    def run(self, halfway):
        # Daemon threads: a failing test does not wait for them (each stops by itself anyway).
        threads = [threading.Thread(target=self.worker, daemon=True) for _ in range(CLIENTS)]
        for t in threads:
            t.start()
        fired = False
        while any(t.is_alive() for t in threads):
            if not fired and self.answered >= len(self.batches) // 2:
                fired = True
                halfway(self.answered)
            time.sleep(0.01)
        for t in threads:
            t.join()


def stopped_host_of(where, session):
    return HOSTS[STOPPED] in where[session]


def read_export_events(tree):
    """(host, session, sequence) rows of the events table in an exported tree (JSON Lines, no compression)."""
    rows = []
    for path in sorted((tree / "events").rglob("*.jsonl")):
        host = next(part.split("=", 1)[1] for part in path.parts if part.startswith("host="))
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append((host, row["session"], row["sequence"]))
    return rows


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_session_lands_on_one_pair_and_a_stopped_pairs_sessions_move(how, capsys):
    """how: the pair is stopped (SIGTERM: the intake answers what it has, navlogd drains) or
    crashes (SIGKILL of both, as a machine that dies)."""
    nginx_binary()
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-fleet-"))
    daemons, intakes, nginx = [], [], None
    try:
        for host in HOSTS:
            daemon = Navlogd(work / host / "navlogd")
            daemons.append(daemon)
            intakes.append(Intake(work / host / "intake", daemon, SECRET, trusted_proxy="127.0.0.1"))
        cert, key = self_signed(work)
        port = free_port()
        servers = "\n".join(f"    server {i.address} max_fails=1 fail_timeout=30s;" for i in intakes)
        conf = render("nginx-fleet.conf.in", LISTEN=f"127.0.0.1:{port}", SERVER_NAME="localhost", TLS_CERT=cert, TLS_KEY=key,
                      INTAKE_SERVERS=servers, MAX_BODY=intake_body_limit(), LOG_DIR=work / "nginx" / "logs")
        nginx = Nginx(work / "nginx", conf)
        wait_for_port(port)

        events = generate(60_000, 20251127, live=1000, mean_events=50)
        batches, sessions = batches_of(events)
        assert len(sessions) == SESSIONS
        sent = {(e["session"], e["seq"]) for _, b in batches for e in b}
        stop_info = {}

        def halfway(answered):
            started = time.time()
            stop_info["answeredBefore"] = answered
            sig = signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL
            stop_info["intakeExit"] = intakes[STOPPED].stop(sig)
            stop_info["navlogdExit"] = daemons[STOPPED].stop(sig)
            stop_info["stopSeconds"] = round(time.time() - started, 3)

        client = Client(port, cert, batches)
        started = time.time()
        client.run(halfway)
        seconds = time.time() - started
        assert not client.failures, client.failures[:10]

        # Where every event is: each host's log, read with navlog cat (the stopped one's too).
        for i, intake in enumerate(intakes):
            if i != STOPPED:
                intake.stop()
        for i, daemon in enumerate(daemons):
            if i != STOPPED:
                daemon.stop()
        where = collections.defaultdict(set)  # session -> hosts
        copies = collections.Counter()  # (session, seq) -> hosts holding it
        per_host = {}
        for host, daemon in zip(HOSTS, daemons):
            stored = daemon.events()
            keys = [(e["session"], e["seq"]) for e in stored]
            assert len(keys) == len(set(keys)), f"{host} stored an event twice"
            per_host[host] = len(keys)
            for session, seq in keys:
                where[session].add(host)
                copies[(session, seq)] += 1
        stored_union = set(copies)
        assert sent == stored_union, f"missing {len(sent - stored_union)}, unexpected {len(stored_union - sent)}"
        # Stored on two hosts: only a crash can do that (a request navlogd had stored when the
        # intake died unanswered, resent by the client to the next pair), and only for the crashed
        # pair's sessions.
        assert all(stopped_host_of(where, s) for (s, _), n in copies.items() if n > 1)
        split = {s for s, hosts in where.items() if len(hosts) > 1}
        stopped_host = HOSTS[STOPPED]
        on_stopped = {s for s, hosts in where.items() if stopped_host in hosts}
        # Only the stopped pair's sessions moved, each to one other host.
        assert all(stopped_host in where[s] and len(where[s]) == 2 for s in split), {s: where[s] for s in split}
        assert all(len(hosts) == 1 for s, hosts in where.items() if s not in on_stopped)
        moved_to = collections.Counter(h for s in split for h in where[s] if h != stopped_host)
        cross_host_copies = sum(1 for n in copies.values() if n > 1)
        resent = [o for o in client.outcome if o[1] > 1]
        resent_statuses = collections.Counter(str(x) for o in resent for x in o[2][:-1])

        # navlog export --host of each host into one tree: the union has every event once. An
        # incremental run exports an event once its session's session.start is stored on that host
        # or the session is complete there (no event for --idle, 30m): the part of a split
        # session on the host it moved to has no start there, so it waits, and only it. A run
        # with --idle 0s (what the timer's runs do once the session is idle) completes it.
        tree = work / "tree"

        def export(*extra):
            for host, daemon in zip(HOSTS, daemons):
                state = work / host / "export-state.json"
                navlog("export", "--data-dir", daemon.data, "--to", str(tree), "--table", "events", "--compress", "none",
                       "--incremental", "--state", str(state), "--host", host, *extra)
            return read_export_events(tree)

        first_rows = export()
        held_back = sent - {(s, q) for _, s, q in first_rows}
        held_back_sessions = {s for s, _ in held_back}
        assert held_back_sessions <= split, "only events of split sessions wait for completion"
        rows = export("--idle", "0s")
        row_keys = collections.Counter((s, q) for _, s, q in rows)
        assert set(row_keys) == sent, "the union of the hosts' exports has every event"
        assert sum(1 for n in row_keys.values() if n > 1) == sum(1 for n in copies.values() if n > 1), "and twice what two hosts hold"
        hosts_of_split = {s: sorted({h for h, s2, _ in rows if s2 == s}) for s in split}
        assert all(len(h) == 2 for h in hosts_of_split.values())
        distinct_sessions = len({s for _, s, _ in rows})
        assert distinct_sessions == SESSIONS

        report = dict(
            sessions=SESSIONS, requests=len(batches), events=len(sent), clients=CLIENTS, seconds=round(seconds, 1),
            stoppedPair=stopped_host, stop=stop_info, storedPerHost=per_host,
            sessionsPerHost={h: sum(1 for hs in where.values() if h in hs) for h in HOSTS},
            sessionsOfStoppedPair=len(on_stopped), sessionsSplitOverTwoHosts=len(split), splitSessionsMovedTo=dict(moved_to),
            sessionsOnOneHost=SESSIONS - len(split), eventsOnTwoHosts=cross_host_copies,
            requestsResent=len(resent), resentBecause=dict(resent_statuses),
            maxAttempts=max(o[1] for o in client.outcome),
            exportFirstRunRows=len(first_rows), exportFirstRunHeldBack=len(held_back), exportHeldBackSessions=len(held_back_sessions),
            exportRows=len(rows), exportDistinctSessions=distinct_sessions,
        )
        report = dict(stoppedWith=how, **report)
        with capsys.disabled():
            print(f"\nfleet through nginx (hash $http_x_navlog_session consistent), one pair stopped with {how}:")
            print(json.dumps(report, indent=1))
        if os.environ.get("NAVLOG_FLEET_REPORT"):
            with open(os.environ["NAVLOG_FLEET_REPORT"], "a") as f:
                f.write(json.dumps(report) + "\n")
        if how == "SIGTERM":
            # Nothing was stored twice across hosts: the stopped intake answered what it had before exiting.
            assert cross_host_copies == 0, report
    finally:
        if nginx:
            nginx.stop()
        for intake in intakes:
            intake.stop()
        for daemon in daemons:
            daemon.stop()
        if not os.environ.get("NAVLOG_KEEP_FLEET"):
            shutil.rmtree(work, ignore_errors=True)
