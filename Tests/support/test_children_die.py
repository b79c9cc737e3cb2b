"""The programs the Python suites start die with the test process (navlog_stack.popen, through
navlog-test-launch), even when that process is SIGKILLed and runs no cleanup.

A helper Python process stands for a test process: it starts a Stack (navlogd and `navlog
intake`) and a program through `popen`, prints their pids and waits; the test checks they run,
kills the helper with SIGKILL and expects them gone within 3 s.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

HELPER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from navlog_stack import Stack, popen
stack = Stack(sys.argv[2], "0123456789abcdef0123456789abcdef")
sleeper = popen(["sleep", "300"])
print(stack.daemon.pid, stack.intake.pid, sleeper.pid, flush=True)
time.sleep(300)
"""


def running(pid):
    """Whether `pid` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def test_what_a_test_started_dies_when_the_test_process_is_killed(tmp_path):
    helper = subprocess.Popen([sys.executable, "-c", HELPER, str(HERE), str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        line = helper.stdout.readline()
        assert line.strip(), f"the helper started nothing: {helper.stderr.read() if helper.poll() is not None else ''}"
        pids = [int(pid) for pid in line.split()]
        time.sleep(1)
        assert all(running(pid) for pid in pids), f"a child died while its test process ran: {[(pid, running(pid)) for pid in pids]}"
        helper.send_signal(signal.SIGKILL)
        helper.wait()
        deadline = time.time() + 3
        while any(running(pid) for pid in pids) and time.time() < deadline:
            time.sleep(0.02)
        survivors = [(what, pid) for what, pid in zip(["navlogd", "navlog intake", "sleep"], pids) if running(pid)]
        assert not survivors, f"still running 3 s after their test process was killed: {survivors}"
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
