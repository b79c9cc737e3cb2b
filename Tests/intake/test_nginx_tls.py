"""nginx terminating TLS in front of one `navlog intake` (tools/intake/nginx-tls.conf.in, the
configuration docs/INTAKE-DEPLOY.md describes): a client posts over HTTPS with curl --cacert
and a self-signed certificate, the events land in navlogd's log, and the intake counts the rate
limit under the client's real address, which it takes from nginx's X-Forwarded-For (nginx is a
--trusted-proxy), never from what the client itself puts in that header.

Everything runs on loopback in a temporary directory; nginx from Debian's package with its own
prefix. Skipped, saying so, only when nginx cannot be installed.
"""

import collections
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from nginx_support import (ROOT, Intake, Navlogd, Nginx, free_port, generate, gzip_lines, intake_body_limit, nginx_binary,
                           render, self_signed, stored_key, wait_for_port)

SECRET = "tls-test-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def stack():
    nginx_binary()
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-nginx-tls-"))
    daemon = Navlogd(work / "navlogd")
    # A small per-address budget (100 events, 1 a second), so that the test can see which address
    # the intake counts a request under.
    intake = Intake(work / "intake", daemon, SECRET, trusted_proxy="127.0.0.1", extra=["--address-rate", "1", "--address-burst", "100"])
    cert, key = self_signed(work)
    port = free_port()
    limit = intake_body_limit()
    conf = render("nginx-tls.conf.in", LISTEN=f"127.0.0.1:{port}", SERVER_NAME="localhost", TLS_CERT=cert, TLS_KEY=key,
                  INTAKE=intake.address, MAX_BODY=limit, LOG_DIR=work / "nginx" / "logs")
    nginx = Nginx(work / "nginx", conf)
    wait_for_port(port)
    yield dict(work=work, daemon=daemon, intake=intake, nginx=nginx, cert=cert, port=port, limit=limit)
    nginx.stop()
    intake.stop()
    daemon.stop()
    shutil.rmtree(work, ignore_errors=True)


def post(stack, body_path, source="127.0.0.1", headers=(), secret=SECRET, path="/v1/events"):
    """curl over HTTPS through nginx, checking the certificate against the self-signed one."""
    out = stack["work"] / "answer.json"
    arguments = ["curl", "-sS", "--cacert", str(stack["cert"]), "--resolve", f"localhost:{stack['port']}:127.0.0.1",
                 "--interface", source, "-o", str(out), "-w", "%{http_code} %{ssl_verify_result} %{http_version}",
                 "-X", "POST", "-H", "Content-Type: application/x-ndjson", "-H", "Content-Encoding: gzip",
                 "--data-binary", f"@{body_path}", f"https://localhost:{stack['port']}{path}"]
    if secret:
        arguments += ["-H", f"Authorization: Bearer {secret}"]
    for header in headers:
        arguments += ["-H", header]
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"curl failed: {result.stderr}"
    status, verify, version = result.stdout.split()
    body = out.read_text() if out.exists() else ""
    return int(status), int(verify), version, body


def test_events_posted_over_tls_are_stored(stack):
    events = [json.loads(line) for line in (ROOT / "tools" / "demo-sample.jsonl").read_text().splitlines() if line.strip()]
    by_session = collections.defaultdict(list)
    for e in events:
        by_session[e["session"]].append(e)
    sent = set()
    for n, (session, session_events) in enumerate(by_session.items()):
        body = stack["work"] / "batch.gz"
        body.write_bytes(gzip_lines(session_events))
        # A device each, from an address of its own (127.0.1.N).
        status, verify, version, answer = post(stack, body, source=f"127.0.1.{n + 1}", headers=[f"X-Navlog-Session: {session}"])
        assert status == 200, answer
        assert verify == 0, "curl verified nginx's certificate against --cacert"
        assert json.loads(answer)["stored"] == len(session_events), answer
        sent |= {stored_key(e) for e in session_events}
    stored = {stored_key(e) for e in stack["daemon"].events()}
    assert sent <= stored
    print(f"\nover TLS through nginx: {len(sent)} events of {len(by_session)} sessions stored (HTTP/{version})")


def test_the_intake_sees_the_clients_address_not_the_proxys_nor_a_forged_one(stack):
    # The intake's budget per client address is 100 events (a body over it is taken into a full
    # bucket and leaves it in debt). The client connects from 127.0.0.77 and forges
    # X-Forwarded-For; nginx (at 127.0.0.1, the trusted proxy) sets the header to the address it
    # saw. The intake's 429 names the address it counted.
    events = generate(400, 4242, live=4)
    first = stack["work"] / "first.gz"
    first.write_bytes(gzip_lines(events[:150]))
    status, _, _, answer = post(stack, first, source="127.0.0.77", headers=["X-Forwarded-For: 10.9.9.9"])
    assert status == 200 and json.loads(answer)["stored"] == 150, answer
    second = stack["work"] / "second.gz"
    second.write_bytes(gzip_lines(events[150:160]))
    status, _, _, answer = post(stack, second, source="127.0.0.77", headers=["X-Forwarded-For: 10.9.9.9"])
    assert status == 429, answer
    assert json.loads(answer)["error"] == "rate-limited", answer
    message = answer  # {"error":"rate-limited", and a sentence naming the address counted}
    assert "127.0.0.77" in message, message
    assert "10.9.9.9" not in message and "127.0.0.1 " not in message, message
    # Another address has a budget of its own: nginx's address is not what is limited.
    third = stack["work"] / "third.gz"
    third.write_bytes(gzip_lines(events[160:210]))
    status, _, _, answer = post(stack, third, source="127.0.0.78")
    assert status == 200 and json.loads(answer)["stored"] == 50, answer
    # 127.0.0.77 is still in debt without the forged header too; nothing of the refused body was stored.
    status, _, _, answer = post(stack, second, source="127.0.0.77")
    assert status == 429 and "127.0.0.77" in answer, answer
    stored = {stored_key(e) for e in stack["daemon"].events()}
    assert not ({stored_key(e) for e in events[150:160]} & stored)
    print(f"\nthrough nginx the intake limited 127.0.0.77 (the client), not 127.0.0.1 (nginx) nor 10.9.9.9 (forged): {message}")


def test_nginx_refuses_a_body_over_the_intakes_limit_without_reading_it(stack):
    big = stack["work"] / "big.bin"
    with open(big, "wb") as f:
        f.write(os.urandom(stack["limit"] + 1))
    status, _, _, answer = post(stack, big)
    assert status == 413, answer
    # The intake never saw it: nginx's access log has no upstream for the 413.
    lines = [l for l in stack["nginx"].access_log("navlog-intake-access.log") if '" 413 ' in l]
    assert lines and all("up=-" in l for l in lines), lines


def test_the_intakes_own_refusals_pass_through(stack):
    small = stack["work"] / "one.gz"
    small.write_bytes(gzip_lines([{"type": "mark", "session": "tls-unauth", "seq": 1, "ts": 1763715600000000, "name": "n"}]))
    status, _, _, answer = post(stack, small, secret=None)
    assert status == 401, answer
    assert "error" in json.loads(answer)
    status, _, _, answer = post(stack, small, secret="not-the-secret")
    assert status == 401, answer
