"""navlogd + navlog intake on loopback (Tests/support), `navlog send --url` through NavlogClient's HTTP transport,
and a loopback TCP proxy that breaks connections, for Tests/client."""

import asyncio
import collections
import email.utils
import json
import random
import subprocess
import threading
import time

from navlog_stack import NAVLOG, Stack, free_port

SECRET = "client-test-secret-0123456789"


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


class ClientStack(Stack):
    """A Stack whose key is SECRET, with `navlog send --url` pointed at its intake."""

    def __init__(self, directory, **kwargs):
        super().__init__(directory, SECRET, **kwargs)

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
