"""navlogd + navlog intake on loopback, `navlog send --url` through NavlogClient's HTTP transport,
and a loopback TCP proxy that breaks connections, for Tests/client."""

import asyncio
import collections
import email.utils
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import threading
import time
import urllib.request

BIN = pathlib.Path(os.environ.get("NAVLOG_BIN_DIR", pathlib.Path(__file__).resolve().parents[2] / ".build-client" / "debug"))
NAVLOG = str(BIN / "navlog")
NAVLOGD = str(BIN / "navlogd")
SECRET = "client-test-secret-0123456789"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_events(path, count, sessions=40, first_seq=1, app="Cookbook"):
    """`count` events over `sessions` sessions, interleaved, each numbered from `first_seq`.
    Returns the set of (session, seq) written."""
    written = set()
    with open(path, "w") as out:
        for index in range(count):
            session = f"s-{index % sessions:04d}"
            seq = first_seq + index // sessions
            line = {"type": "mark", "session": session, "seq": seq, "ts": 1_763_715_600_000_000 + index, "name": f"m{index}",
                    "props": {"pad": "x" * (index % 50)}}
            out.write(json.dumps(line) + "\n")
            written.add((session, seq))
    return written


class Stack:
    """navlogd (trusting this uid to relay keys) and navlog intake in front of it."""

    def __init__(self, directory, intake_args=(), keys=None):
        self.directory = pathlib.Path(directory)
        self.socket = str(self.directory / "navlogd.sock")
        self.data = str(self.directory / "data")
        config = self.directory / "navlogd.json"
        config.write_text(json.dumps({"relayUIDs": [os.getuid()]}))
        self.config = str(config)
        self.keys = self.directory / "keys.json"
        self.keys.write_text(json.dumps({"keys": keys or [{"id": "ios-test", "secret": SECRET}]}))
        os.chmod(self.keys, 0o600)
        self.key_file = self.directory / "key.secret"
        self.key_file.write_text(SECRET + "\n")
        self.port = free_port()
        self.metrics_port = free_port()
        self.intake_args = list(intake_args)
        self.daemon = None
        self.intake = None
        self.start_daemon()
        self.start_intake()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/v1/events"

    def start_daemon(self):
        log = open(self.directory / "navlogd.log", "a")
        self.daemon = subprocess.Popen([NAVLOGD, "--socket", self.socket, "--data-dir", self.data, "--config", self.config], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(self.socket)
                return
            except OSError:
                if self.daemon.poll() is not None or time.time() > deadline:
                    raise AssertionError("navlogd did not start: " + (self.directory / "navlogd.log").read_text())
                time.sleep(0.02)

    def start_intake(self):
        log_path = self.directory / "intake.log"
        log = open(log_path, "a")
        self.intake = subprocess.Popen(
            [NAVLOG, "intake", "--socket", self.socket, "--listen", f"127.0.0.1:{self.port}", "--keys", str(self.keys),
             "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.intake_args],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.intake.poll() is not None or time.time() > deadline:
                    raise AssertionError("navlog intake did not start: " + log_path.read_text())
                time.sleep(0.05)

    def stop(self, which, sig=signal.SIGTERM):
        process = getattr(self, which)
        if process and process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def close(self):
        self.stop("intake")
        self.stop("daemon")

    def answers(self):
        """The intake's answers so far by status (its Prometheus counters)."""
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5).read().decode()
        except OSError:
            return {}
        counts = collections.Counter()
        for line in text.splitlines():
            if line.startswith("navlog_intake_requests_total{"):
                labels, value = line.rsplit(" ", 1)
                status = labels.split('status="')[1].split('"')[0]
                counts[status] += int(float(value))
        return counts

    def stored_keys(self):
        """(session, seq) of every stored event, with repeats."""
        out = subprocess.run([NAVLOG, "cat", "--data-dir", self.data], capture_output=True, text=True, check=True).stdout
        return [(event["session"], event["seq"]) for event in map(json.loads, filter(str.strip, out.splitlines()))]

    def send_command(self, path, queue, timeout=120, extra=()):
        return [NAVLOG, "send", "--url", self.url, "--key-file", str(self.key_file), "--queue", str(queue), "--timeout", str(timeout), *extra, str(path)]

    def send(self, path, queue, timeout=120, url=None):
        command = self.send_command(path, queue, timeout)
        if url:
            command[command.index("--url") + 1] = url
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout + 60)


def assert_exactly_once(stack, expected):
    stored = stack.stored_keys()
    repeats = [key for key, n in collections.Counter(stored).items() if n > 1]
    assert not repeats, f"stored more than once: {repeats[:10]}"
    missing = expected - set(stored)
    assert not missing, f"{len(missing)} events never stored, e.g. {sorted(missing)[:5]}"
    extra = set(stored) - expected
    assert not extra, f"unexpected events stored: {sorted(extra)[:5]}"


class BreakingProxy:
    """A loopback TCP proxy in front of the intake that misbehaves by connection number:
    `portal` answers like a captive portal (a 200 HTML page, or a 302) without forwarding;
    `redirect-live` answers 307 to the intake itself (a client that followed it would post past
    the proxy); `busy-date` answers 429 with `Retry-After` as an HTTP date `retry_after` seconds
    ahead;
    `cut-request` forwards part of the request body and closes both sides; `cut-response`
    forwards the whole request, then drops the intake's answer and closes; anything else
    forwards faithfully. `plan(number)` says which for each new connection."""

    def __init__(self, target_port, plan, retry_after=3):
        self.target_port = target_port
        self.plan = plan
        self.retry_after = retry_after
        self.arrivals = []  # (time.time(), behaviour) of each connection
        self.forwarded_posts = 0  # request heads passed on to the intake
        self.port = free_port()
        self.connections = 0
        self.behaviours = collections.Counter()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/v1/events"

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.port))
        self.ready.set()
        self.loop.run_forever()

    def close(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _handle(self, reader, writer):
        self.connections += 1
        behaviour = self.plan(self.connections)
        self.behaviours[behaviour] += 1
        self.arrivals.append((time.time(), behaviour))
        try:
            if behaviour in ("portal", "portal-redirect", "redirect-live", "busy-date"):
                await reader.readuntil(b"\r\n\r\n")
                if behaviour == "redirect-live":
                    writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:%d/v1/events\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" % self.target_port)
                elif behaviour == "busy-date":
                    when = email.utils.formatdate(time.time() + self.retry_after, usegmt=True).encode()
                    writer.write(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" % when)
                elif behaviour == "portal":
                    page = b"<html><body>Sign in to the Wi-Fi</body></html>"
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(page), page))
                else:
                    writer.write(b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/login\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
                return
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            # A cut request stops within its first body; a passing connection carries some whole
            # requests (keep-alive) and is cut later, mid-body or between requests.
            budget = random.randint(300, 6000) if behaviour == "cut-request" else random.randint(20_000, 60_000) if behaviour == "pass" else None

            async def client_to_server():
                nonlocal budget
                tail = b""
                while data := await reader.read(4096):
                    self.forwarded_posts += (tail + data).count(b"POST /v1/events ") - tail.count(b"POST /v1/events ")
                    tail = data[-16:]
                    if budget is not None:
                        if len(data) >= budget:
                            upstream_writer.write(data[:budget])
                            await upstream_writer.drain()
                            raise ConnectionAbortedError
                        budget -= len(data)
                    upstream_writer.write(data)
                    await upstream_writer.drain()

            async def server_to_client():
                while data := await upstream_reader.read(4096):
                    if behaviour == "cut-response":
                        raise ConnectionAbortedError
                    writer.write(data)
                    await writer.drain()

            tasks = [asyncio.ensure_future(client_to_server()), asyncio.ensure_future(server_to_client())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            # A cut is abrupt (RST on both sides), as a dying middlebox's is.
            upstream_writer.transport.abort()
            writer.transport.abort()
        except (OSError, asyncio.IncompleteReadError, ConnectionAbortedError):
            pass
        finally:
            writer.close()
