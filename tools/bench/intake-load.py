#!/usr/bin/env python3
"""Load for `navlog intake` (and, for comparison, systemd-journal-remote): Python's asyncio only.

    intake-load.py prepare EVENTS.jsonl --intake BODIES --journal BODIES [--batch 50] [--events N]
        Cuts production-shaped events (navlog-bench generate) into batches of one session's
        consecutive events (50 a batch; a session's last batch may be smaller), in the order the
        sessions' events come in the input (interleaved), and writes them twice: gzip JSON Lines for
        the intake, and the journal export format (application/vnd.fdo.journal, one entry per
        event, MESSAGE= the JSON line) for systemd-journal-remote. Each record of a bodies file is
        a line "<body bytes> <events> <session>\\n" and then the body.

    intake-load.py flat URL BODIES --connections N [--secret S] [--journal]
        Every batch once, flat out, over N keep-alive connections (each takes the next batch when
        its last is answered). Prints one JSON line: events/s, requests, statuses, latency.

    intake-load.py devices URL BODIES --devices 2000 --period 2 --seconds 60 [--secret S]
        The device model: each device has its own keep-alive connection from its own loopback
        address (127.1.x.y) and posts one batch (its sessions' batches in order) every PERIOD
        seconds (batches of exactly 50 events: a session's smaller last batch is left out), the
        devices' phases spread over one period. Latency is from the request's first
        byte written to the answer's last byte read; a send later than 50 ms after its schedule
        is counted (the generator fell behind), so is the event loop's largest lag.

    intake-load.py idle URL --connections 5000 --seconds S
        Opens N keep-alive connections (from 127.2.x.y), asks GET /healthz once on each, then
        holds them idle for S seconds; prints how many the server kept open.

Every run stops by itself (a batch is sent once; devices and idle stop after --seconds).
"""
import argparse
import asyncio
import gzip
import json
import os
import sys
import time
import zlib


# ---------------------------------------------------------------------------------------------
# Bodies


def read_bodies(path):
    """[(session, events, body bytes)] from a bodies file."""
    out = []
    with open(path, "rb") as f:
        while True:
            header = f.readline()
            if not header:
                break
            size, events, session = header.rstrip(b"\n").split(b" ", 2)
            body = f.read(int(size))
            out.append((session.decode(), int(events), body))
    return out


def journal_entry(line, event):
    """One journal export format entry for one event (text fields: a JSON line has no newline)."""
    fields = [
        b"__REALTIME_TIMESTAMP=%d" % int(event.get("ts", 0)),
        b"MESSAGE=" + line,
        b"SYSLOG_IDENTIFIER=navlog-device",
        b"NAVLOG_SESSION=" + str(event.get("session", "")).encode(),
        b"NAVLOG_SEQ=%d" % int(event.get("seq", 0)),
        b"NAVLOG_TYPE=" + str(event.get("type", "")).encode(),
        b"PRIORITY=6",
    ]
    return b"\n".join(fields) + b"\n\n"


def prepare(args):
    sessions = {}  # session -> [lines] of the open batch
    order = []  # (session, [lines]) closed batches in order
    count = 0
    with open(args.input, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                continue
            event = json.loads(line)
            if "seq" not in event:
                raise SystemExit(f"intake-load: line {count + 1} has no seq: every event sent to the intake needs one")
            session = event["session"]
            batch = sessions.setdefault(session, [])
            batch.append((line, event))
            if len(batch) == args.batch:
                order.append((session, batch))
                sessions[session] = []
            count += 1
            if args.events and count >= args.events:
                break
    order += [(s, b) for s, b in sessions.items() if b]
    total_gzip = total_journal = 0
    with open(args.intake, "wb") as intake, open(args.journal, "wb") as journal:
        for session, batch in order:
            body = b"".join(line + b"\n" for line, _ in batch)
            compressed = gzip.compress(body, compresslevel=6, mtime=0)
            intake.write(b"%d %d %s\n" % (len(compressed), len(batch), session.encode()))
            intake.write(compressed)
            exported = b"".join(journal_entry(line, event) for line, event in batch)
            journal.write(b"%d %d %s\n" % (len(exported), len(batch), session.encode()))
            journal.write(exported)
            total_gzip += len(compressed)
            total_journal += len(exported)
    print(json.dumps(dict(events=count, batches=len(order), sessions=len({s for s, _ in order}),
                          gzipBytes=total_gzip, journalBytes=total_journal)))


# ---------------------------------------------------------------------------------------------
# A minimal HTTP/1.1 client over asyncio streams (Content-Length answers, keep-alive)


class HTTPError(Exception):
    pass


def request_bytes(method, host, path, headers, body=b""):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_response(reader):
    status_line = await reader.readline()
    if not status_line:
        raise HTTPError("connection closed")
    parts = status_line.split(b" ", 2)
    status = int(parts[1])
    length = 0
    close = False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"connection" and value.strip().lower() == b"close":
            close = True
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            raise HTTPError("chunked answers are not read by this client")
    body = await reader.readexactly(length) if length else b""
    return status, body, close


def parse_url(url):
    assert url.startswith("http://"), "plain http:// on loopback"
    rest = url[len("http://"):]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":")
    return host, int(port), "/" + path


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, max(0, int(round(p / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def latency_summary(latencies):
    values = sorted(latencies)
    ms = lambda v: None if v is None else round(v * 1000, 3)
    return dict(p50Ms=ms(percentile(values, 50)), p90Ms=ms(percentile(values, 90)), p99Ms=ms(percentile(values, 99)),
                p999Ms=ms(percentile(values, 99.9)), maxMs=ms(values[-1] if values else None))


def headers_for(args, session):
    if args.journal:
        return [("Content-Type", "application/vnd.fdo.journal")]
    headers = [("Content-Type", "application/x-ndjson"), ("Content-Encoding", "gzip"), ("X-Navlog-Session", session)]
    if args.secret:
        headers.append(("Authorization", f"Bearer {args.secret}"))
    return headers


# ---------------------------------------------------------------------------------------------
# Flat out


async def flat(args):
    host, port, path = parse_url(args.url)
    bodies = read_bodies(args.bodies)
    if args.limit:
        bodies = bodies[: args.limit]
    prepared = [(events, request_bytes("POST", f"{host}:{port}", path, headers_for(args, session), body)) for session, events, body in bodies]
    next_index = 0
    statuses = {}
    latencies = []
    ok_events = 0
    errors = 0

    async def connection():
        nonlocal next_index, ok_events, errors
        reader = writer = None
        while next_index < len(prepared):
            events, data = prepared[next_index]
            next_index += 1
            for attempt in range(3):
                try:
                    if writer is None:
                        reader, writer = await asyncio.open_connection(host, port)
                    started = time.perf_counter()
                    writer.write(data)
                    status, _, close = await read_response(reader)
                    latencies.append(time.perf_counter() - started)
                    statuses[status] = statuses.get(status, 0) + 1
                    if 200 <= status < 300:
                        ok_events += events
                    if close:
                        writer.close()
                        writer = None
                    break
                except (OSError, HTTPError, asyncio.IncompleteReadError):
                    errors += 1
                    if writer is not None:
                        writer.close()
                    writer = None
        if writer is not None:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(args.connections)))
    seconds = time.perf_counter() - started
    result = dict(mode="flat", connections=args.connections, requests=len(latencies), okEvents=ok_events, seconds=round(seconds, 3),
                  eventsPerSecond=round(ok_events / seconds), statuses=statuses, connectionErrors=errors, client="python-asyncio")
    result.update(latency_summary(latencies))
    print(json.dumps(result))


# ---------------------------------------------------------------------------------------------
# The device model


def source_address(block, index):
    """A loopback address of its own for connection `index` (127.<block>.x.y, y in 1..250)."""
    return f"127.{block}.{index // 250}.{index % 250 + 1}"


async def devices(args):
    host, port, path = parse_url(args.url)
    bodies = read_bodies(args.bodies)
    per_device = int(args.seconds / args.period) + 1
    # Sessions are dealt to devices as they first appear, round the devices that still need
    # batches; a device posts its sessions' batches in order.
    device_of = {}
    queues = [[] for _ in range(args.devices)]
    turn = 0
    for session, events, body in bodies:
        if args.full_batches and events != args.full_batches:
            continue  # a session's last, smaller batch: left out, so that every request is the same size
        if session not in device_of or len(queues[device_of[session]]) >= per_device:
            # A new session, or one whose device has all its batches: the next device that needs some.
            for _ in range(args.devices):
                turn = (turn + 1) % args.devices
                if len(queues[turn]) < per_device:
                    break
            device_of[session] = turn
        d = device_of[session]
        if len(queues[d]) < per_device:
            queues[d].append((events, request_bytes("POST", f"{host}:{port}", path, headers_for(args, session), body)))
    short = sum(1 for q in queues if len(q) < per_device)
    if short:
        print(f"intake-load: {short} devices have fewer than {per_device} batches; they stop early (generate more events)", file=sys.stderr)
    latencies = []
    statuses = {}
    ok_events = 0
    late = 0
    errors = 0
    max_lag = 0.0
    loop = asyncio.get_running_loop()
    start = loop.time() + 2.0  # connections are opened before the first tick
    end = start + args.seconds

    async def lag_monitor():
        nonlocal max_lag
        while loop.time() < end:
            before = loop.time()
            await asyncio.sleep(0.05)
            max_lag = max(max_lag, loop.time() - before - 0.05)

    async def device(d):
        nonlocal ok_events, late, errors
        phase = args.period * d / args.devices
        reader = writer = None
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source_address(1, d), 0))
        except OSError:
            errors += 1
        for k, (events, data) in enumerate(queues[d]):
            due = start + phase + k * args.period
            if due >= end:
                break
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            elif -delay > 0.05:
                late += 1
            for attempt in range(3):
                try:
                    if writer is None:
                        reader, writer = await asyncio.open_connection(host, port, local_addr=(source_address(1, d), 0))
                    sent = time.perf_counter()
                    writer.write(data)
                    status, _, close = await read_response(reader)
                    latencies.append(time.perf_counter() - sent)
                    statuses[status] = statuses.get(status, 0) + 1
                    if 200 <= status < 300:
                        ok_events += events
                    if close:
                        writer.close()
                        writer = None
                    break
                except (OSError, HTTPError, asyncio.IncompleteReadError):
                    errors += 1
                    if writer is not None:
                        writer.close()
                    writer = None
        if writer is not None:
            writer.close()

    tasks = [asyncio.create_task(lag_monitor())]
    # Connections are opened in steps (a burst of thousands of SYNs overflows the listen queue).
    for d in range(args.devices):
        tasks.append(asyncio.create_task(device(d)))
        if d % 200 == 199:
            await asyncio.sleep(0.05)
    await asyncio.gather(*tasks)
    seconds = args.seconds
    result = dict(mode="devices", devices=args.devices, periodSeconds=args.period, seconds=seconds, requests=len(latencies),
                  okEvents=ok_events, eventsPerSecond=round(ok_events / seconds), statuses=statuses, connectionErrors=errors,
                  lateSends=late, maxLoopLagMs=round(max_lag * 1000, 1))
    result.update(latency_summary(latencies))
    print(json.dumps(result))


# ---------------------------------------------------------------------------------------------
# Idle keep-alive connections


async def idle(args):
    host, port, _ = parse_url(args.url)
    connections = []
    failed = 0
    for i in range(args.connections):
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source_address(2, i), 0))
            connections.append((reader, writer))
        except OSError:
            failed += 1
        if i % 200 == 199:
            await asyncio.sleep(0.05)
    answered = 0

    async def ask(reader, writer):
        nonlocal answered
        try:
            writer.write(request_bytes("GET", f"{host}:{port}", "/healthz", []))
            status, _, _ = await asyncio.wait_for(read_response(reader), 30)
            answered += 1
        except (OSError, HTTPError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass

    for i in range(0, len(connections), 200):
        await asyncio.gather(*(ask(r, w) for r, w in connections[i : i + 200]))
    print(json.dumps(dict(mode="idle", event="opened", opened=len(connections), failed=failed, answeredHealthz=answered)), flush=True)
    await asyncio.sleep(args.seconds)
    still_open = 0
    for reader, writer in connections:
        # A connection the server closed has EOF waiting (or is reset).
        if reader.at_eof() or writer.is_closing():
            continue
        try:
            data = await asyncio.wait_for(reader.read(1), 0.001)
            if data:
                still_open += 1
        except asyncio.TimeoutError:
            still_open += 1
        except OSError:
            pass
    for _, writer in connections:
        writer.close()
    print(json.dumps(dict(mode="idle", event="end", opened=len(connections), failed=failed, answeredHealthz=answered,
                          heldSeconds=args.seconds, stillOpen=still_open)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("input")
    p.add_argument("--intake", required=True)
    p.add_argument("--journal", required=True)
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--events", type=int, default=0)
    p = sub.add_parser("flat")
    p.add_argument("url")
    p.add_argument("bodies")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--secret")
    p.add_argument("--journal", action="store_true", help="journal-remote's headers (no gzip: it reads none)")
    p.add_argument("--limit", type=int, default=0, help="only the first N batches")
    p = sub.add_parser("devices")
    p.add_argument("url")
    p.add_argument("bodies")
    p.add_argument("--devices", type=int, default=2000)
    p.add_argument("--period", type=float, default=2.0)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--secret")
    p.add_argument("--journal", action="store_true")
    p.add_argument("--full-batches", type=int, default=50, help="only batches of exactly this many events (0: every batch)")
    p = sub.add_parser("idle")
    p.add_argument("url")
    p.add_argument("--connections", type=int, default=5000)
    p.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args)
    else:
        asyncio.run({"flat": flat, "devices": devices, "idle": idle}[args.command](args))


if __name__ == "__main__":
    main()
