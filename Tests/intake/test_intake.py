"""`navlog intake` through real HTTP on loopback, in front of a real navlogd on a real socket.

Each test ends by reading the log back (`navlog cat`): every acknowledged event stored exactly
once, with the key that sent it (`_key`), and nothing that an answer said was not stored.
The expected counts come from the bodies the tests write, never from the intake's answers.

Run by tools/test after the Swift tests, against the debug build (NAVLOG_BIN_DIR).
"""

import gzip
import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
import zlib

import pytest

from navlog_stack import NAVLOG, ROOT, Stack
from nginx_support import self_signed

SECRET = "s3cret-for-the-ios-test-key"
OTHER_SECRET = "another-secret-for-android-key"


def event(session, seq, kind="mark", **fields):
    line = {"type": kind, "session": session, "ts": 1_763_715_600_000_000 + seq, "seq": seq}
    if kind == "mark":
        line["name"] = f"m{seq}"
    line.update(fields)
    return json.dumps(line)


def body_of(lines):
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def stack(tmp_path):
    created = []

    def make(**kwargs):
        directory = tmp_path / f"stack{len(created)}"
        directory.mkdir()
        made = Stack(directory, SECRET, **kwargs)
        created.append(made)
        return made

    yield make
    for made in created:
        made.close()


def keyed(events):
    return {(e["session"], e["seq"]): e.get("_key") for e in events}


# --- Answers ----------------------------------------------------------------------------------


def test_good_body_stored_durably_with_its_key_and_a_resend_is_duplicates(stack):
    s = stack()
    lines = [event("a", n) for n in range(1, 51)]
    status, answer, _ = s.post(gzip.compress(body_of(lines)), encoding="gzip")
    assert (status, answer) == (200, {"stored": 50, "duplicates": 0, "rejected": []})
    status, answer, _ = s.post(gzip.compress(body_of(lines)), encoding="gzip")
    assert (status, answer) == (200, {"stored": 0, "duplicates": 50, "rejected": []})
    events = s.events()
    assert len(events) == 50
    assert {e["_key"] for e in events} == {"ios-test"}
    assert [e["seq"] for e in events] == list(range(1, 51))


def test_zstd_and_plain_bodies(stack):
    s = stack()
    plain = body_of([event("z", n) for n in range(1, 11)])
    compressed = subprocess.run(["zstd", "-q", "-c"], input=body_of([event("z", n) for n in range(11, 21)]), capture_output=True, check=True).stdout
    assert s.post(plain)[:2] == (200, {"stored": 10, "duplicates": 0, "rejected": []})
    assert s.post(compressed, encoding="zstd")[:2] == (200, {"stored": 10, "duplicates": 0, "rejected": []})
    # A last line without its newline is still a line.
    assert s.post(event("z", 21).encode())[:2] == (200, {"stored": 1, "duplicates": 0, "rejected": []})
    assert sorted(e["seq"] for e in s.events()) == list(range(1, 22))


def test_bad_lines_rejected_one_by_one_and_the_good_ones_stored(stack):
    s = stack()
    lines = [
        event("b", 1),
        '{"type":"nav.push","session":"b","seq":2}',  # no nav, no vc
        "",  # blank: a line, skipped
        '{"type":"mark","session":"b","name":"x"}',  # no seq: a relayed event needs one
        "not json",
        event("b", 6),
    ]
    status, answer, _ = s.post(body_of(lines))
    assert status == 200
    assert answer["stored"] == 2 and answer["duplicates"] == 0
    rejected = {r["line"]: r for r in answer["rejected"]}
    assert sorted(rejected) == [2, 4, 5], answer
    assert rejected[4]["field"] == "seq" and "seq" in rejected[4]["reason"]
    assert all(r["reason"] and r["code"] for r in answer["rejected"])
    assert sorted(e["seq"] for e in s.events()) == [1, 6]


def test_a_device_cannot_forge_its_key_or_speak_to_navlogd(stack):
    s = stack(keys=[{"id": "ios-test", "secret": SECRET}, {"id": "admin", "secret": OTHER_SECRET}])
    lines = [
        event("f", 1),
        '{"relay":"admin"}',
        event("f", 3),
        '{"control":"stats"}',
        '{"hello":1,"ack":"none"}',
        event("f", 6, _key="admin", _uid=0),
    ]
    status, answer, _ = s.post(body_of(lines))
    assert status == 200 and answer["stored"] == 3, answer
    assert [(r["line"], r["code"], r["field"]) for r in answer["rejected"]] == [(2, "forbidden", "relay"), (4, "forbidden", "control"), (5, "forbidden", "hello")]
    assert keyed(s.events()) == {("f", 1): "ios-test", ("f", 3): "ios-test", ("f", 6): "ios-test"}


def test_no_key_wrong_key_and_a_key_revoked_by_sighup_store_nothing(stack):
    s = stack(keys=[{"id": "ios-test", "secret": SECRET}, {"id": "android", "secret": OTHER_SECRET}])
    body = body_of([event("k", 1)])
    status, answer, headers = s.post(body, authorize=False)
    assert status == 401 and answer["error"] == "unauthorized" and "Bearer" in headers.get("WWW-Authenticate", "")
    assert s.post(body, secret="not-a-key-of-this-intake")[0] == 401
    # One keep-alive connection across the reload: it is not dropped.
    connection = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    assert s.post(body_of([event("k", 2)]), secret=OTHER_SECRET, connection=connection)[0] == 200
    s.write_keys([{"id": "ios-test", "secret": SECRET}])
    s.intake.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while time.time() < deadline and s.post(body_of([event("k", 3)]), secret=OTHER_SECRET, connection=connection)[0] != 401:
        time.sleep(0.1)
    assert s.post(body_of([event("k", 4)]), secret=OTHER_SECRET, connection=connection)[0] == 401
    assert s.post(body_of([event("k", 5)]), secret=SECRET, connection=connection)[0] == 200
    connection.close()
    # A broken file keeps the keys in force.
    s.keys.write_text("{not json")
    s.intake.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert s.post(body_of([event("k", 6)]), secret=SECRET)[0] == 200
    seqs = sorted(e["seq"] for e in s.events())
    assert 1 not in seqs and 4 not in seqs and {2, 5, 6} <= set(seqs)


def test_a_key_file_open_to_others_is_refused_at_start(tmp_path):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"id": "ios-test", "secret": SECRET}]}))
    os.chmod(keys, 0o644)
    result = subprocess.run([NAVLOG, "intake", "--socket", str(tmp_path / "none.sock"), "--listen", "127.0.0.1:0", "--keys", str(keys)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "open to other users" in result.stderr and "chmod o-rwx" in result.stderr, result.stderr


def test_bodies_that_do_not_decode_are_400_and_store_nothing(stack):
    s = stack()
    good = gzip.compress(body_of([event("d", n) for n in range(1, 200)]))
    status, answer, _ = s.post(body_of([event("d", 1)]), encoding="gzip")
    assert status == 400 and answer["error"] == "malformed-body" and "gzip" in answer["reason"], answer
    status, answer, _ = s.post(good[: len(good) // 2], encoding="gzip")
    assert status == 400 and "truncated" in answer["reason"], answer
    status, answer, _ = s.post(b"\x28\xb5\x2f\xfd garbage", encoding="zstd")
    assert status == 400 and "zstd" in answer["reason"], answer
    assert s.post(body_of([event("d", 1)]), encoding="br")[0] == 415
    assert s.events() == []


def test_limits_are_413_and_store_nothing(stack):
    s = stack(intake_args=["--max-body-bytes", str(4 << 20), "--max-line-bytes", "4096"])
    # A line over the limit inside an otherwise good body.
    lines = [event("l", 1), event("l", 2, kind="mark", name="x" * 5000), event("l", 3)]
    status, answer, _ = s.post(body_of(lines))
    assert status == 413 and answer["error"] == "line-too-long" and answer["line"] == 2, answer
    # A 100 MB body, announced and streamed.
    big = b"x" * (100 << 20)
    status, answer, _ = s.post(big)
    assert status == 413 and answer["error"] == "too-large", answer
    assert s.events() == []


def test_a_gzip_bomb_is_refused_while_inflating_and_the_intake_stays_small(stack, tmp_path):
    s = stack()
    # 1 GiB of zeros, gzip -9: about 1 MB on the wire.
    bomb = tmp_path / "bomb.gz"
    with open(bomb, "wb") as out:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = b"\0" * (1 << 20)
        for _ in range(1024):
            out.write(compressor.compress(chunk))
        out.write(compressor.flush())
    status, answer, _ = s.post(bomb.read_bytes(), encoding="gzip")
    assert status == 413 and "bomb" in answer["reason"], answer
    with open(f"/proc/{s.intake.pid}/status") as status_file:
        peak = next(int(line.split()[1]) for line in status_file if line.startswith("VmHWM:"))
    assert peak < 256 * 1024, f"the intake's peak RSS was {peak} KiB"
    assert s.post(body_of([event("g", 1)]))[0] == 200


def test_rate_limits_answer_429_with_retry_after_and_store_nothing(stack):
    s = stack(keys=[{"id": "ios-test", "secret": SECRET, "eventsPerSecond": 10, "burst": 20}])
    assert s.post(body_of([event("r", n) for n in range(1, 21)]))[0] == 200
    status, answer, headers = s.post(body_of([event("r", n) for n in range(21, 31)]))
    assert status == 429 and int(headers["Retry-After"]) >= 1 and answer["error"] == "rate-limited", answer
    assert sorted(e["seq"] for e in s.events()) == list(range(1, 21))
    # Per client address too.
    t = stack(intake_args=["--address-rate", "5", "--address-burst", "5"])
    assert t.post(body_of([event("p", n) for n in range(1, 6)]))[0] == 200
    status, answer, headers = t.post(body_of([event("p", 6)]))
    assert status == 429 and "127.0.0.1" in answer["reason"] and "Retry-After" in headers


def test_navlogd_away_is_503_and_the_intake_reconnects_by_itself(stack):
    s = stack()
    assert s.post(body_of([event("u", 1)]))[0] == 200
    s.stop("daemon")
    status, answer, headers = s.post(body_of([event("u", 2)]))
    assert status == 503 and "Retry-After" in headers and "Nothing of the body was stored" in answer["reason"], answer
    health = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    health.request("GET", "/healthz")
    assert health.getresponse().status == 503
    s.start_daemon()
    assert s.post(body_of([event("u", 2)]))[:2] == (200, {"stored": 1, "duplicates": 0, "rejected": []})
    assert sorted(e["seq"] for e in s.events()) == [1, 2]


def test_disk_full_is_503_then_traffic_resumes_and_nothing_is_lost(stack):
    s = stack()
    assert s.post(body_of([event("full", n) for n in range(1, 11)]))[0] == 200
    subprocess.run(["prlimit", "--pid", str(s.daemon.pid), "--fsize=1:"], check=True)
    statuses = []
    sent = 10
    deadline = time.time() + 60
    while time.time() < deadline:
        lines = [event("full", n, name="y" * 200) for n in range(sent + 1, sent + 201)]
        status, answer, headers = s.post(gzip.compress(body_of(lines)), encoding="gzip")
        statuses.append(status)
        if status == 200:
            sent += 200
            continue
        assert status == 503 and answer["error"] == "store-unavailable" and "Retry-After" in headers, answer
        break
    assert statuses[-1] == 503, statuses
    subprocess.run(["prlimit", "--pid", str(s.daemon.pid), "--fsize=unlimited:"], check=True)
    # The client resends the refused body until it is taken (navlogd retries its writes by itself).
    deadline = time.time() + 60
    while True:
        status, answer, _ = s.post(gzip.compress(body_of(lines)), encoding="gzip")
        if status == 200:
            break
        assert time.time() < deadline, answer
        time.sleep(0.5)
    seqs = [e["seq"] for e in s.events()]
    assert sorted(seqs) == list(range(1, sent + 201)), "each event once, none lost"


# --- Connections --------------------------------------------------------------------------------


def test_a_slow_client_is_closed_and_others_are_served_meanwhile(stack):
    s = stack(intake_args=["--head-timeout", "2"])
    slow = socket.create_connection(("127.0.0.1", s.port))
    request = b"POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SECRET.encode() + b"\r\nContent-Length: 10\r\n\r\n"
    closed_after = None
    started = time.time()
    served = []

    def other_client():
        served.append(s.post(body_of([event("o", 1)]), timeout=10)[0])

    for index, byte in enumerate(request):
        try:
            slow.send(bytes([byte]))
        except OSError:
            closed_after = time.time() - started
            break
        if index == 1:
            threading.Thread(target=other_client).start()
        slow.settimeout(0.5)
        try:
            if slow.recv(1) == b"":
                closed_after = time.time() - started
                break
        except socket.timeout:
            pass
    slow.close()
    assert closed_after is not None and closed_after < 6, f"the slow connection was not closed ({closed_after})"
    time.sleep(0.5)
    assert served == [200]


def test_pipelined_requests_and_keep_alive(stack):
    s = stack()
    bodies = [body_of([event("pipe", n)]) for n in (1, 2, 3)]
    raw = b"".join(
        b"POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SECRET.encode() + b"\r\nContent-Length: " + str(len(b)).encode() + b"\r\n\r\n" + b
        for b in bodies)
    with socket.create_connection(("127.0.0.1", s.port), timeout=30) as connection:
        connection.sendall(raw)
        received = b""
        while received.count(b"HTTP/1.1 200") < 3:
            chunk = connection.recv(65536)
            assert chunk, received
            received += chunk
    assert received.count(b'"stored":1') == 3
    # A request that lies about its length: the connection ends, nothing half-read is stored.
    with socket.create_connection(("127.0.0.1", s.port), timeout=30) as connection:
        connection.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SECRET.encode() + b"\r\nContent-Length: 1000\r\n\r\n" + bodies[0])
        connection.shutdown(socket.SHUT_WR)
        connection.settimeout(10)
        rest = connection.recv(65536)
    assert b"200" not in rest.split(b"\r\n")[0]
    # Garbage instead of HTTP.
    with socket.create_connection(("127.0.0.1", s.port), timeout=30) as connection:
        connection.sendall(b"\x16\x03\x01 this is not http\r\n\r\n")
        connection.settimeout(10)
        first = connection.recv(65536)
    assert first == b"" or first.startswith(b"HTTP/1.1 400")
    assert sorted(e["seq"] for e in s.events()) == [1, 2, 3]


def test_tls_directly_with_curl(stack, tmp_path):
    cert, key = self_signed(tmp_path)
    s = stack(intake_args=["--tls-cert", str(cert), "--tls-key", str(key)])
    body = tmp_path / "events.jsonl.gz"
    body.write_bytes(gzip.compress(body_of([event("tls", n) for n in range(1, 6)])))
    result = subprocess.run(
        ["curl", "-sS", "--cacert", str(cert), "--data-binary", f"@{body}", "-H", "Content-Encoding: gzip", "-H", f"Authorization: Bearer {SECRET}",
         f"https://127.0.0.1:{s.port}/v1/events"], capture_output=True, text=True, timeout=60)
    assert json.loads(result.stdout) == {"stored": 5, "duplicates": 0, "rejected": []}, result.stderr
    plain = subprocess.run(["curl", "-sS", f"http://127.0.0.1:{s.port}/healthz"], capture_output=True, text=True, timeout=30)
    assert plain.returncode != 0 or "ok" not in plain.stdout


def test_the_readme_curl_line(stack, tmp_path):
    """README's one-line example, run as written there (only the address, key and file vary)."""
    s = stack()
    readme = (ROOT / "README.md").read_text()
    line = next(l.strip() for l in readme.splitlines() if l.strip().startswith("curl --data-binary @events.jsonl.gz"))
    (tmp_path / "events.jsonl.gz").write_bytes(gzip.compress(body_of([event("readme", n) for n in range(1, 4)])))
    command = line.replace("$NAVLOG_KEY", SECRET).replace("https://intake.example.com", f"http://127.0.0.1:{s.port}")
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert json.loads(result.stdout) == {"stored": 3, "duplicates": 0, "rejected": []}, (command, result.stderr)


# --- Faults under load --------------------------------------------------------------------------


def chaos(stack, seconds, clients=6, sessions_per_client=20):
    """Clients resend every batch until it is answered 200 while the intake is killed with
    SIGKILL and navlogd is killed and restarted; at the end the log must hold every event that
    was acknowledged, each (session, seq) once."""
    s = stack()
    stop_at = time.time() + seconds
    acknowledged = set()
    lock = threading.Lock()
    statuses = {}

    def client(number):
        seq = {f"c{number}-s{k}": 0 for k in range(sessions_per_client)}
        names = list(seq)
        turn = 0
        while time.time() < stop_at:
            session = names[turn % len(names)]
            turn += 1
            batch = [(session, seq[session] + n) for n in range(1, 26)]
            seq[session] += 25
            body = gzip.compress(body_of([event(session, n) for session, n in batch]))
            while True:
                try:
                    status = s.post(body, encoding="gzip", timeout=10)[0]
                except OSError:
                    status = "connection"
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    with lock:
                        acknowledged.update(batch)
                    break
                if time.time() > stop_at + 60:
                    return
                time.sleep(0.05)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    round_number = 0
    while time.time() < stop_at - 1:
        time.sleep(0.7)
        if round_number % 2 == 0:
            s.stop("intake", signal.SIGKILL)
            s.start_intake()
        else:
            s.stop("daemon", signal.SIGKILL)
            time.sleep(0.2)
            s.start_daemon()
        round_number += 1
    for thread in threads:
        thread.join(timeout=180)
    s.close()
    stored = [(e["session"], e["seq"]) for e in s.events()]
    assert len(stored) == len(set(stored)), "an event stored twice"
    missing = acknowledged - set(stored)
    assert not missing, f"{len(missing)} acknowledged events are not in the log"
    assert all(e["_key"] == "ios-test" for e in s.events())
    return statuses, len(acknowledged), round_number


def test_chaos_intake_killed_and_navlogd_restarted_under_load(stack):
    seconds = float(os.environ.get("NAVLOG_INTAKE_CHAOS_SECONDS", "12"))
    statuses, acknowledged, rounds = chaos(stack, seconds)
    print(f"chaos: {rounds} kills over {seconds} s, {acknowledged} events acknowledged, answers {statuses}")
    assert acknowledged > 0 and rounds >= 4


def test_a_key_limited_to_some_apps_cannot_start_sessions_of_others(stack):
    s = stack(keys=[{"id": "ios-test", "secret": SECRET, "apps": ["Cookbook"]}])
    start = lambda session, app: event(session, 1, kind="session.start", app=app, version="1", build="1", os="iOS 17", device="iPhone", idiom="phone")
    assert s.post(body_of([start("mine", "Cookbook"), event("mine", 2)]))[:2] == (200, {"stored": 2, "duplicates": 0, "rejected": []})
    status, answer, _ = s.post(body_of([event("theirs", 1), start("theirs", "Banking")]))
    assert status == 403 and answer["error"] == "app-not-allowed" and answer["line"] == 2 and "Banking" in answer["reason"], answer
    assert {e["session"] for e in s.events()} == {"mine"}


def test_metrics_count_what_the_intake_did(stack):
    s = stack()
    assert s.post(gzip.compress(body_of([event("mx", n) for n in range(1, 11)] + ["nope"])), encoding="gzip")[0] == 200
    assert s.post(body_of([event("mx", 1)]))[0] == 200
    assert s.post(b"x", authorize=False)[0] == 401
    connection = http.client.HTTPConnection("127.0.0.1", s.metrics_port, timeout=10)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    assert values["navlog_intake_events_stored_total"] == 10
    assert values["navlog_intake_events_duplicate_total"] == 1
    assert values["navlog_intake_lines_rejected_total"] == 1
    assert values['navlog_intake_requests_total{status="200"}'] == 2
    assert values['navlog_intake_requests_total{status="401"}'] == 1
    assert values["navlog_intake_request_duration_seconds_count"] == 3
    assert values['navlog_intake_body_bytes_total{form="decoded"}'] > values['navlog_intake_body_bytes_total{form="sent"}'] > 0


def test_a_slow_head_after_an_early_answer_is_closed_too(stack):
    """A 401 goes out before the body is read; the next request on the connection still has
    --head-timeout to send its head."""
    s = stack(intake_args=["--head-timeout", "2"])
    with socket.create_connection(("127.0.0.1", s.port), timeout=30) as connection:
        connection.sendall(b"POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-wrong-wrong\r\nContent-Length: 5\r\n\r\n")
        first = connection.recv(65536)
        assert first.startswith(b"HTTP/1.1 401"), first
        connection.sendall(b"abcde")
        started = time.time()
        closed_after = None
        for byte in b"POST /v1/events HTTP/1.1\r\nHost: x\r\n":
            try:
                connection.send(bytes([byte]))
                connection.settimeout(0.5)
                if connection.recv(1) == b"":
                    closed_after = time.time() - started
                    break
            except socket.timeout:
                continue
            except OSError:
                closed_after = time.time() - started
                break
    assert closed_after is not None and closed_after < 6, closed_after
