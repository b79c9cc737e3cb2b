"""NavlogClient's HTTP transport through a real `navlog intake` and navlogd on loopback, driven
from outside by `navlog send --url` (the same transport an app links).

Each test ends by reading the log back (`navlog cat`): every event of the file stored exactly
once. The expected set comes from the file the test wrote, never from the client's or the
intake's counts. Run by tools/test against the debug build (NAVLOG_BIN_DIR).
"""

import json
import os
import random
import signal
import subprocess
import time

import pytest

from client_support import BreakingProxy, ClientStack, assert_exactly_once, write_events
from navlog_stack import popen


@pytest.fixture
def stack(tmp_path):
    made = []

    def make(**kwargs):
        directory = tmp_path / f"stack{len(made)}"
        directory.mkdir()
        made.append(ClientStack(directory, **kwargs))
        return made[-1]

    yield make
    for each in made:
        each.close()


def summary_numbers(output):
    """The counts of navlog send's last line."""
    line = output.strip().splitlines()[-1]
    words = line.replace(",", "").split()
    return {words[i + 1]: int(words[i]) for i in range(len(words) - 1) if words[i].isdigit()}


def queue_files(queue):
    return sorted(os.listdir(queue)) if os.path.isdir(queue) else []


def test_a_file_is_stored_once_and_a_rerun_sends_nothing(stack, tmp_path):
    s = stack()
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 3_000)
    queue = tmp_path / "queue"
    first = s.send(path, queue)
    assert first.returncode == 0, first.stderr
    assert summary_numbers(first.stdout)["events"] == 3_000
    assert_exactly_once(s, expected)
    assert [name for name in queue_files(queue) if name.startswith(("batch-", "open-"))] == []
    again = s.send(path, queue)
    assert again.returncode == 0, again.stderr
    assert summary_numbers(again.stdout)["events"] == 0, again.stdout
    assert_exactly_once(s, expected)
    # gzip on the wire: the intake decoded more bytes than it was sent.
    assert s.answers()["200"] >= 6


def test_the_client_killed_mid_upload_resumes_from_its_queue(stack, tmp_path):
    s = stack(intake_args=["--address-rate", "0"])
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 40_000, sessions=200)
    queue = tmp_path / "queue"
    kills = 0
    killed_mid_upload = 0
    stored_before = 0
    for round in range(6):
        process = popen(s.send_command(path, queue), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(random.uniform(0.4, 1.2))
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
        stored_now = len(s.stored_keys())
        assert stored_now >= stored_before
        stored_before = stored_now
        if stored_now == 40_000:
            # Everything was stored before this kill (the client was ending): a later kill
            # could not land mid-upload either.
            break
        if stored_now > 0:
            killed_mid_upload += 1
    assert kills >= 2, "navlog send finished before it could be killed twice: make the file bigger"
    assert killed_mid_upload >= 1, "no kill landed while part of the file was stored"
    final = s.send(path, queue)
    assert final.returncode == 0, final.stderr
    assert "already in" in final.stderr
    assert_exactly_once(s, expected)


def test_the_intake_killed_and_restarted_mid_send(stack, tmp_path):
    s = stack(intake_args=["--address-rate", "0"])
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 20_000, sessions=100)
    queue = tmp_path / "queue"
    process = popen(s.send_command(path, queue, timeout=120), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    s.stop("intake", signal.SIGKILL)
    time.sleep(2.5)
    s.start_intake()
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    numbers = summary_numbers(out)
    assert numbers["attempts"] >= 1, out  # it retried while the intake was away
    assert_exactly_once(s, expected)


def test_navlogd_disk_full_is_503_and_the_client_waits_then_resends(stack, tmp_path):
    s = stack()
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 4_000)
    queue = tmp_path / "queue"
    subprocess.run(["prlimit", "--pid", str(s.daemon.pid), "--fsize=1:"], check=True)
    process = popen(s.send_command(path, queue), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while s.answers()["503"] < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert s.answers()["503"] >= 2
    assert process.poll() is None, "navlog send gave up while the disk was full"
    subprocess.run(["prlimit", "--pid", str(s.daemon.pid), "--fsize=unlimited:"], check=True)
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    assert_exactly_once(s, expected)


def test_a_429_storm_is_waited_out_with_retry_after(stack, tmp_path):
    keys = [{"id": "ios-test", "secret": "client-test-secret-0123456789", "eventsPerSecond": 1000, "burst": 1000}]
    s = stack(keys=keys)
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 6_000)
    queue = tmp_path / "queue"
    started = time.time()
    result = s.send(path, queue)
    elapsed = time.time() - started
    assert result.returncode == 0, result.stderr
    assert_exactly_once(s, expected)
    answers = s.answers()
    assert answers["429"] >= 3, answers
    # 5,000 events over the burst at 1,000/s take about 5 s; honouring Retry-After (1 s) rather
    # than retrying at once keeps the 429s to a few per second.
    assert elapsed >= 4
    assert answers["429"] <= 4 * elapsed, answers


def test_a_proxy_that_cuts_connections_mid_body_loses_and_doubles_nothing(stack, tmp_path):
    s = stack(intake_args=["--address-rate", "0"])
    cycle = ["cut-request", "pass", "cut-response", "pass", "cut-request", "pass"]
    proxy = BreakingProxy(s.port, lambda n: cycle[(n - 1) % len(cycle)])
    try:
        path = tmp_path / "events.jsonl"
        expected = write_events(path, 8_000, sessions=60)
        started = time.time()
        result = s.send(path, tmp_path / "queue", url=proxy.url, timeout=300)
        assert result.returncode == 0, result.stderr
        # No attempt waited out the 60 s request timeout: libcurl's own reconnect of a dead
        # kept-alive connection sent no body and hung that long (HTTPTransport: one connection
        # per batch on Linux).
        assert time.time() - started < 50, proxy.arrivals
        assert proxy.behaviours["cut-request"] >= 1 and proxy.behaviours["cut-response"] >= 1, proxy.behaviours
        numbers = summary_numbers(result.stdout)
        assert numbers["attempts"] >= 2
        assert_exactly_once(s, expected)
        # Every cut connection was retried; whatever a cut left stored came back as duplicates.
        assert numbers["events"] + numbers["duplicates"] >= 8_000
    finally:
        proxy.close()


def test_a_captive_portal_answer_is_not_taken_for_the_intakes(stack, tmp_path):
    s = stack()
    proxy = BreakingProxy(s.port, lambda n: {1: "portal", 2: "portal-redirect", 3: "portal"}.get(n, "through"))
    try:
        path = tmp_path / "events.jsonl"
        expected = write_events(path, 1_200)
        result = s.send(path, tmp_path / "queue", url=proxy.url)
        assert result.returncode == 0, result.stderr
        assert proxy.behaviours["portal"] == 2 and proxy.behaviours["portal-redirect"] == 1
        assert summary_numbers(result.stdout)["attempts"] >= 3
        assert_exactly_once(s, expected)
    finally:
        proxy.close()


def test_rejections_are_reported_and_never_resent(stack, tmp_path):
    s = stack()
    path = tmp_path / "events.jsonl"
    expected = write_events(path, 600)
    with open(path, "a") as out:
        out.write(json.dumps({"type": "nav.push", "session": "bad", "seq": 1}) + "\n")  # missing nav and vc
    result = s.send(path, tmp_path / "queue")
    assert result.returncode == 1
    assert "events.jsonl: line 601" in result.stderr, result.stderr
    assert summary_numbers(result.stdout)["lines"] == 1
    assert_exactly_once(s, expected)
    # A wrong key is refused whole (401): counted as rejected, reported, not retried.
    (tmp_path / "wrong").write_text("not-the-secret\n")
    command = s.send_command(path, tmp_path / "queue2")
    command[command.index("--key-file") + 1] = str(tmp_path / "wrong")
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1
    assert summary_numbers(refused.stdout)["lines"] == 601, refused.stdout
    assert s.answers()["401"] <= 3


def test_events_without_seq_are_numbered_per_session_across_runs(stack, tmp_path):
    s = stack()
    queue = tmp_path / "queue"
    for run in range(2):
        path = tmp_path / f"run{run}.jsonl"
        with open(path, "w") as out:
            for index in range(300):
                out.write(json.dumps({"type": "mark", "session": f"n-{index % 3}", "name": f"r{run}-{index}"}) + "\n")
        result = s.send(path, queue)
        assert result.returncode == 0, result.stderr
    stored = s.stored_keys()
    assert sorted(stored) == sorted((f"n-{k}", seq) for k in range(3) for seq in range(1, 201))


def test_a_line_over_the_intakes_limit_is_reported_and_a_rerun_resumes_after_it(stack, tmp_path):
    # Lines without `seq` are numbered by the client's queue: a resume that started one line
    # early would queue the file's last line again under a new number and store it twice.
    s = stack()
    s.stop("intake", signal.SIGKILL)
    path = tmp_path / "events.jsonl"
    with open(path, "w") as out:
        for index in range(400):
            if index == 99:
                out.write(json.dumps({"type": "mark", "session": "long", "name": "x" * 70_000}) + "\n")
            out.write(json.dumps({"type": "mark", "session": f"r-{index % 2}", "name": f"m{index}"}) + "\n")
    queue = tmp_path / "queue"
    offline = s.send(path, queue, timeout=3)
    assert offline.returncode == 1
    assert "events.jsonl: line 100: the event has 70" in offline.stderr, offline.stderr
    assert "Run the same command again" in offline.stderr, offline.stderr
    s.start_intake()
    rerun = s.send(path, queue)
    assert rerun.returncode == 1, rerun.stderr  # the long line is still rejected
    assert "events.jsonl: line 100: the event has 70" in rerun.stderr, rerun.stderr
    assert "400 events of these files are already in" in rerun.stderr, rerun.stderr
    numbers = summary_numbers(rerun.stdout)
    assert numbers["events"] == 400 and numbers["duplicates"] == 0 and numbers["lines"] == 1, rerun.stdout
    stored = s.stored_keys()
    assert sorted(stored) == sorted((f"r-{k}", seq) for k in range(2) for seq in range(1, 201))


def test_retry_after_as_an_http_date_is_honoured(stack, tmp_path):
    # navlog send retries after 0.25 s on its own; a 429 whose Retry-After is a date 3 s ahead
    # must hold the next attempt back until then (to the second: the date has no fraction).
    s = stack()
    proxy = BreakingProxy(s.port, lambda n: "busy-date" if n == 1 else "through", retry_after=3)
    try:
        path = tmp_path / "events.jsonl"
        expected = write_events(path, 300)
        result = s.send(path, tmp_path / "queue", url=proxy.url)
        assert result.returncode == 0, result.stderr
        assert summary_numbers(result.stdout)["attempts"] == 1, result.stdout
        (first, _), (second, _) = proxy.arrivals[:2]
        assert second - first >= 2.0, proxy.arrivals
        assert_exactly_once(s, expected)
    finally:
        proxy.close()


def test_a_redirect_is_not_followed_even_to_a_live_intake(stack, tmp_path):
    # The client posts only to the URL it was given: a redirect (a captive portal's, a
    # misconfigured proxy's) is retried there, never followed, so no batch goes around the proxy.
    s = stack()
    proxy = BreakingProxy(s.port, lambda n: "redirect-live" if n <= 2 else "through")
    try:
        path = tmp_path / "events.jsonl"
        expected = write_events(path, 900)
        result = s.send(path, tmp_path / "queue", url=proxy.url)
        assert result.returncode == 0, result.stderr
        assert proxy.behaviours["redirect-live"] == 2 and summary_numbers(result.stdout)["attempts"] == 2, result.stdout
        assert_exactly_once(s, expected)
        # Every request the intake answered came through the proxy: none by the redirect.
        assert proxy.forwarded_posts >= 1
        assert sum(s.answers().values()) == proxy.forwarded_posts, (s.answers(), proxy.forwarded_posts)
    finally:
        proxy.close()
