#!/usr/bin/env python3
"""Runs a command under a memory ceiling and says how much memory it took.

    tools/memory-ceiling.py LIMIT_MIB COMMAND [ARGS...]

The ceiling is a memory cgroup the command is moved into before it starts (cgroup v2's
memory.max, or v1's memory.limit_in_bytes, swap off where the kernel allows): past it, the
kernel reclaims the page cache and then kills the command (SIGKILL, "oom"). Without a writable
memory cgroup (an unprivileged container), the ceiling is checked instead against the
command's peak resident set, which the kernel measures either way (getrusage). ulimit -v is
no use here: a Swift program's threads reserve virtual memory they never touch, and
libdispatch waits forever when it cannot start one.

Prints one JSON line on standard output:
  {"status": N | null, "signal": N | null, "peak_rss_kib": N, "limit_mib": N,
   "enforced_by": "cgroup-v2" | "cgroup-v1" | "peak-rss", "over": bool, "stderr": "last lines"}
and exits 0 when the command exited 0 within the ceiling, 1 otherwise.
"""
import json
import os
import resource
import subprocess
import sys
import uuid


def make_cgroup(limit_bytes):
    """A new memory cgroup limited to limit_bytes: (kind, directory), or (None, None)."""
    name = f"navlog-ceiling-{uuid.uuid4().hex[:12]}"
    candidates = [("cgroup-v2", "/sys/fs/cgroup"), ("cgroup-v2", "/sys/fs/cgroup/unified"), ("cgroup-v1", "/sys/fs/cgroup/memory")]
    for kind, root in candidates:
        try:
            if kind == "cgroup-v2":
                with open(os.path.join(root, "cgroup.controllers")) as f:
                    if "memory" not in f.read().split():
                        continue
            elif not os.path.exists(os.path.join(root, "memory.limit_in_bytes")):
                continue
            directory = os.path.join(root, name)
            os.mkdir(directory)
            try:
                if kind == "cgroup-v2":
                    with open(os.path.join(directory, "memory.max"), "w") as f:
                        f.write(str(limit_bytes))
                    try:
                        with open(os.path.join(directory, "memory.swap.max"), "w") as f:
                            f.write("0")
                    except OSError:
                        pass
                else:
                    with open(os.path.join(directory, "memory.limit_in_bytes"), "w") as f:
                        f.write(str(limit_bytes))
                    try:
                        with open(os.path.join(directory, "memory.memsw.limit_in_bytes"), "w") as f:
                            f.write(str(limit_bytes))
                    except OSError:
                        pass
                return kind, directory
            except OSError:
                os.rmdir(directory)
        except OSError:
            continue
    return None, None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    limit_mib = int(sys.argv[1])
    command = sys.argv[2:]
    kind, directory = make_cgroup(limit_mib << 20)

    def enter():
        if directory:
            with open(os.path.join(directory, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    try:
        process = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=enter)
    finally:
        if directory:
            try:
                os.rmdir(directory)
            except OSError:
                pass
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    status = process.returncode if process.returncode >= 0 else None
    signal = -process.returncode if process.returncode < 0 else None
    over = peak > limit_mib * 1024 or signal == 9
    print(json.dumps({
        "status": status, "signal": signal, "peak_rss_kib": peak, "limit_mib": limit_mib,
        "enforced_by": kind or "peak-rss", "over": over,
        "stderr": "\n".join(process.stderr.decode("utf-8", "replace").splitlines()[-5:]),
    }))
    sys.exit(0 if status == 0 and not over else 1)


if __name__ == "__main__":
    main()
