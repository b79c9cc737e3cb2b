"""What the nginx tests of the intake share (test_nginx_tls.py, test_fleet.py): navlogd and
`navlog intake` on free loopback ports in private temporary directories, nginx from Debian's
package run from a generated configuration in a temporary prefix (nothing of the system's nginx
is read or written: no /etc/nginx, no /var/log/nginx, no pid file outside the prefix), a
self-signed certificate, production-shaped events from `navlog-bench generate`.
"""

import gzip
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time

import pytest

from navlog_stack import BENCH, NAVLOG, NAVLOGD, ROOT, free_port, navlog, popen, read_events  # noqa: F401 (re-exported to the nginx tests)
TEMPLATES = ROOT / "tools" / "intake"


def nginx_binary():
    """Debian's nginx, installed when missing (tools/intake/install-nginx, as tools/setup-deps
    --test does); the test is skipped, saying why, only when it cannot be installed."""
    found = shutil.which("nginx") or (os.path.exists("/usr/sbin/nginx") and "/usr/sbin/nginx")
    if found:
        return found
    if shutil.which("apt-get"):
        subprocess.run([str(ROOT / "tools" / "intake" / "install-nginx")], capture_output=True, timeout=900)
        found = shutil.which("nginx") or (os.path.exists("/usr/sbin/nginx") and "/usr/sbin/nginx")
        if found:
            return found
    pytest.skip("nginx is not installed and could not be installed (apt-get install nginx, or run tools/setup-deps --test as root)")


def wait_for_port(port, timeout=30, host="127.0.0.1"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {host}:{port} after {timeout} s")


def self_signed(directory, name="localhost"):
    """A self-signed certificate for `name` and 127.0.0.1 (openssl), and its key."""
    cert, key = directory / "tls.crt", directory / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName=DNS:{name},IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


class Navlogd:
    """navlogd on a socket in `directory`, trusting this test's uid to relay key ids."""

    def __init__(self, directory):
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket = str(self.directory / "navlogd.sock")
        self.data = str(self.directory / "data")
        config = self.directory / "navlogd.json"
        config.write_text(json.dumps({"relayUIDs": [os.getuid()]}))
        self.log = open(self.directory / "navlogd.log", "w")
        self.process = popen([NAVLOGD, "--socket", self.socket, "--data-dir", self.data, "--config", str(config)],
                             stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not os.path.exists(self.socket):
            if self.process.poll() is not None or time.time() > deadline:
                raise AssertionError(f"navlogd did not start: {(self.directory / 'navlogd.log').read_text()}")
            time.sleep(0.02)

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode

    def events(self):
        """Every stored event (navlog cat)."""
        return read_events(self.data)


class Intake:
    """`navlog intake` on a free loopback port in front of `daemon`, with one key."""

    def __init__(self, directory, daemon, secret, trusted_proxy=None, key_rate=1_000_000, key_burst=1_000_000, extra=()):
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.keys = self.directory / "keys.json"
        self.keys.write_text(json.dumps({"keys": [{"id": "ios-test", "secret": secret, "eventsPerSecond": key_rate, "burst": key_burst}]}))
        os.chmod(self.keys, 0o600)
        self.port = free_port()
        arguments = [NAVLOG, "intake", "--socket", daemon.socket, "--listen", f"127.0.0.1:{self.port}", "--keys", str(self.keys),
                     "--max-body-bytes", str(BODY_LIMIT), *extra]
        if trusted_proxy:
            arguments += ["--trusted-proxy", trusted_proxy]
        self.log_path = self.directory / "intake.log"
        self.log = open(self.log_path, "w")
        self.process = popen(arguments, stdout=self.log, stderr=subprocess.STDOUT)
        # Ready when it says so ("listening on", if its output is flushed) or its port answers.
        deadline = time.time() + 60
        while "listening on" not in self.log_path.read_text():
            if self.process.poll() is not None or time.time() > deadline:
                raise AssertionError(f"navlog intake did not start: {self.log_path.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


class Nginx:
    """nginx with a generated configuration in a temporary prefix; stopped by stop()."""

    def __init__(self, prefix, http_conf, workers=1):
        self.binary = nginx_binary()
        self.prefix = pathlib.Path(prefix)
        for sub in ("logs", "tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        (self.prefix / "intake.conf").write_text(http_conf)
        # The workers run as this test's user (nginx started by root would switch them to nobody,
        # who could not write the temporary directories of the prefix).
        import pwd
        user = pwd.getpwuid(os.geteuid()).pw_name
        main = f"""
{"user " + user + ";" if os.geteuid() == 0 else ""}
worker_processes {workers};
daemon off;
master_process on;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/logs/error.log info;
worker_rlimit_nofile 16384;
events {{ worker_connections 8192; }}
http {{
    default_type application/octet-stream;
    client_body_temp_path {self.prefix}/tmp/body;
    proxy_temp_path {self.prefix}/tmp/proxy;
    fastcgi_temp_path {self.prefix}/tmp/fastcgi;
    uwsgi_temp_path {self.prefix}/tmp/uwsgi;
    scgi_temp_path {self.prefix}/tmp/scgi;
    include {self.prefix}/intake.conf;
}}
"""
        self.conf = self.prefix / "nginx.conf"
        self.conf.write_text(main)
        # -e: the error log from the start (before the configuration is read), inside the prefix.
        base = [self.binary, "-p", str(self.prefix), "-c", str(self.conf), "-e", str(self.prefix / "logs" / "error.log")]
        check = subprocess.run(base + ["-t"], capture_output=True, text=True)
        assert check.returncode == 0, f"nginx -t: {check.stderr}\n{http_conf}"
        self.process = popen(base, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def error_log(self):
        path = self.prefix / "logs" / "error.log"
        return path.read_text() if path.exists() else ""

    def access_log(self, name):
        path = self.prefix / "logs" / name
        return path.read_text().splitlines() if path.exists() else []

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: finish the requests in flight
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def render(template, **values):
    """The template with its @NAME@ filled in; its leading comment (the instructions) left out."""
    lines = (TEMPLATES / template).read_text().splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    text = f"# generated from tools/intake/{template} by Tests/intake\n" + "".join(lines)
    for name, value in values.items():
        text = text.replace(f"@{name}@", str(value))
    assert "@" not in "".join(line for line in text.splitlines() if not line.lstrip().startswith("#")), f"unfilled placeholder in {template}"
    return text


# The intake's body limit as sent, given to it (--max-body-bytes) and to nginx
# (client_max_body_size) alike: nginx refuses exactly what the intake would.
BODY_LIMIT = 8 << 20


def intake_body_limit():
    return BODY_LIMIT


def generate(count, seed, live=None, mean_events=None):
    """Production-shaped events (navlog-bench generate) as dicts, each with its seq."""
    arguments = [BENCH, "generate", str(count), str(seed)]
    if live:
        arguments += ["--live", str(live)]
    if mean_events:
        arguments += ["--mean-events", str(mean_events)]
    out = subprocess.run(arguments, capture_output=True, text=True, check=True, timeout=600).stdout
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert all("seq" in e for e in events)
    return events


def gzip_lines(events):
    return gzip.compress("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events).encode(), mtime=0)


def stored_key(event):
    return (event["session"], event["seq"])
