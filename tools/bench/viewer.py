#!/usr/bin/env python3
"""The viewer benchmark behind tools/bench/viewer (see there). Prints one table; every figure is
measured in this run, in a real Chromium, against a release navlog serve."""

import argparse
import json
import os
import pathlib
import random
import re
import shutil
import signal
import statistics
import subprocess
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--events", type=int, default=1_000_000)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--opens", type=int, default=10)
parser.add_argument("--many-sessions", type=int, default=100_000, help="sessions of the second log (the sessions page)")
arguments = parser.parse_args()

BIN = pathlib.Path(arguments.bin)
WORK = pathlib.Path(arguments.work)
DATA = WORK / "data"
LONG_EVENTS = 10_000


def quantile(values, q):
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def build_log():
    """Production-shaped traffic with one 10,000-event session interleaved by time."""
    if (DATA / "long-session").exists():
        return (DATA / "long-session").read_text().strip()
    shutil.rmtree(DATA, ignore_errors=True)
    traffic = WORK / "traffic.jsonl"
    with open(traffic, "w") as out:
        subprocess.run([BIN / "navlog-bench", "generate", str(arguments.events), "11"], stdout=out, check=True)
    # One long session: the longest of a generated single-session workload, cut at 10,000 events.
    long_file = WORK / "long.jsonl"
    with open(long_file, "w") as out:
        subprocess.run([BIN / "navlog-bench", "generate", "40000", "5", "--live", "1", "--mean-events", "15000", "--think-seconds", "1"],
                       stdout=out, check=True)
    lines = [json.loads(line) for line in open(long_file)]
    counts = {}
    for line in lines:
        counts[line["session"]] = counts.get(line["session"], 0) + 1
    longest = max(counts, key=counts.get)
    assert counts[longest] >= LONG_EVENTS, f"the longest generated session has only {counts[longest]} events"
    long_lines = [line for line in lines if line["session"] == longest][:LONG_EVENTS]
    # Interleave: move the long session to start with the traffic and merge by time.
    first_ts = json.loads(open(traffic).readline())["ts"]
    shift = first_ts - long_lines[0]["ts"] + 1
    for line in long_lines:
        line["ts"] += shift
    merged = WORK / "merged.jsonl"
    with open(traffic) as source, open(merged, "w") as out:
        pending = iter(long_lines)
        next_long = next(pending, None)
        for text in source:
            ts = int(re.search(r'"ts":(\d+)', text).group(1))
            while next_long is not None and next_long["ts"] <= ts:
                out.write(json.dumps(next_long, separators=(",", ":")) + "\n")
                next_long = next(pending, None)
            out.write(text)
        while next_long is not None:
            out.write(json.dumps(next_long, separators=(",", ":")) + "\n")
            next_long = next(pending, None)
    subprocess.run([BIN / "navlog", "ingest", "--quiet", "--data-dir", str(DATA), str(merged)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([BIN / "navlog", "index", "--data-dir", str(DATA)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for path in [traffic, long_file, merged]:
        path.unlink()
    (DATA / "long-session").write_text(longest)
    return longest


def build_many_sessions_log():
    """A log of many short sessions (mean 20 events), for the sessions page."""
    data = WORK / "many"
    if (data / "done").exists():
        return data
    shutil.rmtree(data, ignore_errors=True)
    traffic = WORK / "many.jsonl"
    with open(traffic, "w") as out:
        # --mean-events 20 gives about 26 events a session (lengths are drawn, then clipped).
        subprocess.run([BIN / "navlog-bench", "generate", str(arguments.many_sessions * 26), "13", "--mean-events", "20"], stdout=out, check=True)
    subprocess.run([BIN / "navlog", "ingest", "--quiet", "--data-dir", str(data), str(traffic)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([BIN / "navlog", "index", "--data-dir", str(data)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    traffic.unlink()
    (data / "done").write_text("")
    return data


def start_serve(data=None):
    process = subprocess.Popen([BIN / "navlog", "serve", "--data-dir", str(data or DATA), "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    match = re.search(r"listening on (http://[^/ ]+)/", line)
    assert match, line
    return process, match.group(1)


def main():
    session = build_log()
    server, base = start_serve()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000"]:
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_script_timeout(600)
    quoted = urllib.request.quote(session, safe="")
    rng = random.Random(42)
    try:
        # Page opens: navigation start to the hierarchy drawn (the page's own performance mark).
        opens = []
        first_open = None
        for number in range(arguments.opens + 1):
            index = rng.randrange(LONG_EVENTS)
            driver.get("about:blank")
            driver.get(f"{base}/sessions/{quoted}?index={index}")
            drawn, complete = driver.execute_async_script("""
                const [index, done] = arguments;
                const check = () => {
                  const mark = performance.getEntriesByName('navlog-drawn').find((m) => m.detail.index === index);
                  const timeline = performance.getEntriesByName('navlog-timeline')[0];
                  if (mark && timeline) done([mark.startTime, Math.max(mark.startTime, timeline.startTime)]); else setTimeout(check, 5);
                };
                check();""", index)
            if number == 0:
                first_open = (drawn, complete)
            else:
                opens.append((drawn, complete))
        # Slider steps: set the slider to a random event as a drag does, and time input -> drawn.
        steps = driver.execute_async_script("""
            const [count, seed, done] = arguments;
            let state = seed;
            const random = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648; };
            const slider = document.getElementById('slider');
            const times = [];
            const one = () => {
              if (times.length === count) { done(times); return; }
              const index = Math.floor(random() * (Number(slider.max) + 1));
              const started = performance.now();
              slider.value = String(index);
              slider.dispatchEvent(new Event('input'));
              const wait = () => {
                if (document.getElementById('hierarchy').dataset.index === String(index)) { times.push(performance.now() - started); setTimeout(one, 0); }
                else setTimeout(wait, 1);
              };
              wait();
            };
            one();""", arguments.steps, 7)
        # Keyboard steps: → from a random point, one event at a time.
        keys = driver.execute_async_script("""
            const [count, done] = arguments;
            const times = [];
            const one = () => {
              if (times.length === count) { done(times); return; }
              const next = Number(document.getElementById('slider').value) + 1;
              const started = performance.now();
              document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
              const wait = () => {
                if (document.getElementById('hierarchy').dataset.index === String(next)) { times.push(performance.now() - started); setTimeout(one, 0); }
                else setTimeout(wait, 1);
              };
              wait();
            };
            document.getElementById('slider').value = '100';
            document.getElementById('slider').dispatchEvent(new Event('input'));
            setTimeout(one, 300);""", arguments.steps)
        # The server side of a step: GET /state?index=K alone.
        server_times = []
        for _ in range(arguments.steps):
            index = rng.randrange(LONG_EVENTS)
            started = time.perf_counter()
            urllib.request.urlopen(f"{base}/api/sessions/{quoted}/state?index={index}").read()
            server_times.append((time.perf_counter() - started) * 1000)
        timeline_started = time.perf_counter()
        # from=1: not the cached whole-session answer, a build (of all but the first event).
        timeline_bytes = len(urllib.request.urlopen(f"{base}/api/sessions/{quoted}/events?from=1").read())
        timeline_ms = (time.perf_counter() - timeline_started) * 1000
    finally:
        driver.quit()
        server.send_signal(signal.SIGTERM)
        server.wait()
    # Baseline: the same instants with navlog replay as a process (what one does without the viewer).
    baseline = []
    for _ in range(20):
        index = rng.randrange(LONG_EVENTS)
        started = time.perf_counter()
        subprocess.run([BIN / "navlog", "replay", "--data-dir", str(DATA), "--session", session, "--index", str(index), "--format", "json"],
                       check=True, stdout=subprocess.DEVNULL)
        baseline.append((time.perf_counter() - started) * 1000)
    # The sessions page over many sessions: the first answer builds the summaries from the
    # journals; the next ones sort and page them in memory.
    many = build_many_sessions_log()
    server, base = start_serve(many)
    page_times = []
    try:
        started = time.perf_counter()
        first_page = json.loads(urllib.request.urlopen(f"{base}/api/sessions").read())
        first_page_ms = (time.perf_counter() - started) * 1000
        for query in ["", "?sort=-events", "?sort=duration&offset=50000", "?anomalies=1", "?q=ab", "?idiom=pad&sort=-anomalies", "?app=Cookbook&offset=1000"] * 5:
            started = time.perf_counter()
            urllib.request.urlopen(f"{base}/api/sessions{query}").read()
            page_times.append((time.perf_counter() - started) * 1000)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        browser_times = []
        for query in ["", "?sort=-events", "?offset=60000&sort=app"]:
            driver.get(f"{base}/{query}")
            started = time.perf_counter()
            while len(driver.find_elements("css selector", "#sessions tbody tr[data-session]")) == 0:
                time.sleep(0.005)
            browser_times.append(driver.execute_script("return performance.now()"))
        driver.quit()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    # Live: navlogd appends to a copy of the big log while a page of a session being recorded is
    # open; time from `navlog send` returning (stored, acknowledged) to the new event drawn.
    live_data = WORK / "live-data"
    shutil.rmtree(live_data, ignore_errors=True)
    shutil.copytree(DATA, live_data)
    socket = WORK / "live.sock"
    daemon = subprocess.Popen([BIN / "navlogd", "--socket", str(socket), "--data-dir", str(live_data)], stderr=subprocess.DEVNULL)
    while not socket.exists():
        time.sleep(0.05)
    server, base = start_serve(live_data)
    live_times = []
    try:
        def send(lines):
            path = WORK / "live.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            subprocess.run([BIN / "navlog", "send", "--socket", str(socket), "--ack", "batch", str(path)], check=True, stdout=subprocess.DEVNULL)
        ts = 1795000000000000
        send([{"type": "session.start", "session": "bench-live", "seq": 1, "ts": ts, "app": "Bench", "idiom": "phone", "traits": {"h": "compact", "v": "regular"}},
              {"type": "window.root", "session": "bench-live", "seq": 2, "ts": ts + 1000, "vc": {"id": "nav", "class": "UINavigationController"}},
              {"type": "nav.set", "session": "bench-live", "seq": 3, "ts": ts + 2000, "nav": "nav", "vcs": [{"id": "v0", "class": "ListViewController"}]}])
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        driver.get(f"{base}/sessions/bench-live")
        while driver.execute_script("return document.getElementById('hierarchy').dataset.index") != "2":
            time.sleep(0.01)
        time.sleep(0.5)
        for number in range(20):
            send([{"type": "nav.push", "session": "bench-live", "seq": 4 + number, "ts": ts + 10000 * (number + 1), "nav": "nav",
                   "vc": {"id": f"v{number + 1}", "class": "DetailViewController"}, "animated": False}])
            sent = time.perf_counter()
            while driver.execute_script("return document.getElementById('hierarchy').dataset.index") != str(3 + number):
                time.sleep(0.002)
            live_times.append((time.perf_counter() - sent) * 1000)
            time.sleep(0.3)
        driver.quit()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
        daemon.send_signal(signal.SIGTERM)
        daemon.wait()
        shutil.rmtree(live_data, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}")
    print(f"log: {arguments.events:,} production-shaped events + one {LONG_EVENTS:,}-event session ({session}) interleaved; Chromium headless")
    print(f"{'measure':66} {'median ms':>10} {'p99 ms':>8} {'goal':>8}")
    rows = [
        ("session page open, first: navigation -> hierarchy drawn", [first_open[0]], 300),
        ("session page open, first: navigation -> timeline drawn too", [first_open[1]], None),
        (f"session page open, {len(opens)} more at random instants: hierarchy", [o[0] for o in opens], 300),
        (f"session page open, {len(opens)} more at random instants: timeline too", [o[1] for o in opens], None),
        (f"slider step, random instant ({len(steps)} steps, input -> drawn)", steps, 50),
        (f"keyboard step, -> ({len(keys)} steps, keydown -> drawn)", keys, 50),
        (f"GET /state?index=K alone ({len(server_times)} requests)", server_times, None),
        ("baseline: navlog replay --index K --format json (20 processes)", baseline, None),
        (f"live: navlog send returned -> new event drawn ({len(live_times)} events)", live_times, 1000),
    ]
    for name, values, goal in rows:
        print(f"{name:66} {statistics.median(values):10.1f} {quantile(values, 0.99):8.1f} {('<= ' + str(goal)) if goal else '':>8}")
    print(f"sessions page over {first_page['total']:,} sessions ({arguments.many_sessions * 26:,} events): first GET /api/sessions (summaries built) {first_page_ms:.0f} ms; "
          f"then sorted/filtered pages median {statistics.median(page_times):.1f} ms, p99 {quantile(page_times, 0.99):.1f} ms ({len(page_times)} requests); "
          f"in Chromium, navigation -> rows shown {', '.join(f'{value:.0f}' for value in browser_times)} ms")
    print(f"timeline of the session built (events?from=1, not cached): {timeline_bytes / 1e6:.2f} MB JSON in {timeline_ms:.0f} ms")
    print(f"slider step vs baseline: {statistics.median(baseline) / statistics.median(steps):.1f}x faster (median)")


main()
