"""What the Python end-to-end suites share (Tests/intake, Tests/client, Tests/browser,
Tests/engines): where the built binaries are, `popen` (a program that dies with the test
process), free loopback ports, and `Stack`: navlogd (trusting this uid to relay key ids) with
`navlog intake` in front of it, each in a private directory, each stoppable and restartable.

Tests/conftest.py puts this folder on sys.path.
"""

import collections
import http.client
import json
import os
import pathlib
import signal
import socket
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bin_dir():
    """NAVLOG_BIN_DIR (tools/test sets it), else the debug build's folder."""
    configured = os.environ.get("NAVLOG_BIN_DIR")
    if configured:
        return pathlib.Path(configured).resolve()
    path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    return pathlib.Path(path)


BIN = bin_dir()
NAVLOG = str(BIN / "navlog")
NAVLOGD = str(BIN / "navlogd")
BENCH = str(BIN / "navlog-bench")
LAUNCHER = BIN / "navlog-test-launch"


def dying_with_test(command):
    """`command` as navlog-test-launch runs it: Linux SIGKILLs the program when this process
    dies (PR_SET_PDEATHSIG), even when it is killed and runs no cleanup, so no daemon a test
    started outlives the test run. The signal follows the *thread* that forks, so children are
    started from the main thread, which lives as long as pytest; from another thread this raises.
    Without the launcher built (swift build --build-tests builds it), `command` as it is, said
    once on standard error; a program that cannot be found, as it is too (Popen then fails)."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("start the programs of a test from the main thread: a child started from another thread "
                           "would be killed when that thread ends (PR_SET_PDEATHSIG follows the thread)")
    command = [str(part) for part in command]
    if not os.access(LAUNCHER, os.X_OK):
        if not getattr(dying_with_test, "warned", False):
            dying_with_test.warned = True
            print(f"navlog tests: {LAUNCHER} is not built; programs the tests start may outlive a killed test process", file=sys.stderr)
        return command
    if not shutil.which(command[0]):
        return command
    return [str(LAUNCHER), str(os.getpid()), *command]


def popen(command, **kwargs):
    """subprocess.Popen of `command` through navlog-test-launch (`dying_with_test`): the way the
    tests start every program that keeps running (daemons, servers, a client killed mid-send)."""
    return subprocess.Popen(dying_with_test(command), **kwargs)


def navlog(*args, check=True, timeout=600):
    result = subprocess.run([NAVLOG, *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"navlog {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def read_events(data):
    """Every stored event of the data directory `data` (navlog cat)."""
    out = navlog("cat", "--data-dir", data).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


class Stack:
    """navlogd and `navlog intake` on a free loopback port (chosen before it starts), with
    Prometheus metrics on another; `keys` are the intake's keys, `secret` the first key's."""

    def __init__(self, directory, secret, intake_args=(), keys=None, navlogd_config=None):
        self.directory = pathlib.Path(directory)
        self.secret = secret
        self.socket = str(self.directory / "navlogd.sock")
        self.data = str(self.directory / "data")
        self.config = self.directory / "navlogd.json"
        self.config.write_text(json.dumps(navlogd_config or {"relayUIDs": [os.getuid()]}))
        self.keys = self.directory / "keys.json"
        self.write_keys(keys or [{"id": "ios-test", "secret": secret}])
        self.key_file = self.directory / "key.secret"
        self.key_file.write_text(secret + "\n")
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

    def write_keys(self, keys):
        self.keys.write_text(json.dumps({"keys": keys}))
        os.chmod(self.keys, 0o600)

    def start_daemon(self):
        log_path = self.directory / "navlogd.log"
        with open(log_path, "a") as log:
            self.daemon = popen([NAVLOGD, "--socket", self.socket, "--data-dir", self.data, "--config", str(self.config)],
                                stdout=log, stderr=subprocess.STDOUT)
        self._wait(self.daemon, "navlogd", log_path, 30, lambda: socket.socket(socket.AF_UNIX).connect(self.socket))

    def start_intake(self):
        log_path = self.directory / "intake.log"
        with open(log_path, "a") as log:
            self.intake = popen(
                [NAVLOG, "intake", "--socket", self.socket, "--listen", f"127.0.0.1:{self.port}", "--keys", str(self.keys),
                 "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.intake_args],
                stdout=log, stderr=subprocess.STDOUT)
        self._wait(self.intake, "navlog intake", log_path, 60, lambda: socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close())

    @staticmethod
    def _wait(process, name, log_path, seconds, probe):
        deadline = time.time() + seconds
        while True:
            try:
                probe()
                return
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"{name} did not start: " + log_path.read_text())
                time.sleep(0.02)

    def stop(self, which, sig=signal.SIGTERM):
        """Stops "daemon" or "intake" with `sig` (killed after 60 s); returns its exit status."""
        process = getattr(self, which)
        if process and process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode if process else None

    def close(self):
        self.stop("intake")
        self.stop("daemon")

    def post(self, body, secret=None, encoding=None, headers=None, connection=None, timeout=60, authorize=True):
        """POSTs `body` (bytes) to /v1/events with the stack's secret (or `secret`; none when
        `authorize` is false); returns (status, parsed JSON, headers)."""
        own = connection is None
        connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        request_headers = {"Content-Type": "application/x-ndjson"}
        if authorize:
            request_headers["Authorization"] = f"Bearer {secret or self.secret}"
        if encoding:
            request_headers["Content-Encoding"] = encoding
        request_headers.update(headers or {})
        try:
            connection.request("POST", "/v1/events", body=body, headers=request_headers)
            response = connection.getresponse()
            payload = response.read()
            return response.status, (json.loads(payload) if payload else None), dict(response.getheaders())
        finally:
            if own:
                connection.close()

    def events(self):
        return read_events(self.data)

    def stored_keys(self):
        """(session, seq) of every stored event, with repeats."""
        return [(event["session"], event["seq"]) for event in self.events()]

    def answers(self):
        """The intake's answers to POST /v1/events so far by status (its Prometheus counters)."""
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
