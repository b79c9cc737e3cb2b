#!/usr/bin/env python3
"""Renders a `full`-profile corpus of tools/fidelity/corpus.py into each import source's own
format, and compares each tool's naive screen counts and navlog's (after `navlog import`) with
the corpus's truth (issue 35).

  sources.py render  --corpus DIR --out DIR
  sources.py compare --corpus DIR --navlog BIN --work DIR      # renders, imports, prints the table

The corpus (events.jsonl, labels.jsonl) is written by corpus.py's own UIKit model, independent
of navlog; its labels hold the truth (screen views and foreground dwell per class, E3/F1/F4).
This script does not use navlog either: each recorder below is written from what the tool is
documented to hook (docs/IMPORT.md), applied to the hierarchy the corpus's navigation calls build.

  sentry    every viewDidAppear of every controller, containers included (UIKit calls it on a
            navigation or tab bar controller when its view appears), as a `ui.lifecycle`
            breadcrumb with screen, parentViewController, presentingViewController,
            beingPresented, is_window_rootViewController; background/foreground as
            `app.lifecycle`. An event is sent every 60 crumbs with the last 100 (the SDK's ring
            buffer), all tagged with the session's id. Naive count: every ui.lifecycle crumb.
  datadog   dd-sdk-ios's view tracking: every viewDidAppear of an app controller (UIKit's own
            classes are left out) starts a view and stops the one before; a viewDidDisappear of
            the current view stops it; the background stops it and the foreground starts a new
            view of the same controller. Each view is sent twice (document_version 1, active,
            then the final one). Naive count: every view.id; naive dwell: time_spent.
  firebase  a screen_view at an app controller's viewDidAppear when the screen (class, instance)
            changed. Naive count: every screen_view row; naive dwell: the time to the next row.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

CONTAINERS = ("UINavigationController", "UITabBarController", "UISplitViewController", "UIPageViewController")


def iso(us):
    import datetime
    t = datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (us % 1_000_000 // 1000)


def sessions(corpus):
    by = collections.OrderedDict()
    with open(os.path.join(corpus, "events.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            by.setdefault(e["session"], []).append(e)
    for events in by.values():
        events.sort(key=lambda e: e["seq"])
    return by


class Hierarchy:
    """Parents, presentations and classes, from the corpus's navigation calls."""

    def __init__(self):
        self.cls, self.parent, self.presenter, self.root = {}, {}, {}, None
        self.tabs, self.selected, self.stacks = {}, {}, collections.defaultdict(list)

    def ref(self, r):
        if isinstance(r, dict):
            self.cls[r["id"]] = r["class"]
            return r["id"]
        return r

    def context_root(self, vc):
        while vc in self.parent:
            vc = self.parent[vc]
        return vc

    def apply(self, e):
        t = e["type"]
        for key in ("vc", "nav", "tab", "from", "parent", "source", "destination"):
            if isinstance(e.get(key), dict):
                self.ref(e[key])
        for r in e.get("vcs", []):
            self.ref(r)
        if t == "window.root":
            self.root = self.ref(e["vc"])
        elif t == "tab.set":
            tab = self.ref(e["tab"])
            self.tabs[tab] = [self.ref(r) for r in e["vcs"]]
            self.selected[tab] = e.get("selected", 0)
            for v in self.tabs[tab]:
                self.parent[v] = tab
        elif t == "tab.select":
            tab = self.ref(e["tab"])
            if "index" in e:
                self.selected[tab] = e["index"]
            elif "vc" in e:
                self.selected[tab] = self.tabs[tab].index(self.ref(e["vc"]))
        elif t == "nav.push":
            nav, vc = self.ref(e["nav"]), self.ref(e["vc"])
            self.stacks[nav].append(vc)
            self.parent[vc] = nav
        elif t == "nav.set":
            nav = self.ref(e["nav"])
            self.stacks[nav] = [self.ref(r) for r in e["vcs"]]
            for v in self.stacks[nav]:
                self.parent[v] = nav
        elif t in ("nav.pop", "nav.popTo", "nav.popToRoot"):
            nav = self.ref(e["nav"])
            stack = self.stacks[nav]
            keep = 1 if t == "nav.popToRoot" else (stack.index(self.ref(e["vc"])) + 1 if t == "nav.popTo" and self.ref(e["vc"]) in stack else len(stack) - 1)
            del stack[max(keep, 1):]
        elif t == "child.add":
            self.parent[self.ref(e["vc"])] = self.ref(e["parent"])
        elif t == "present":
            self.presenter[self.ref(e["vc"])] = self.context_root(self.ref(e["from"]))

    def presenting_of(self, vc):
        return self.presenter.get(self.context_root(vc))


def render_sentry(events, out):
    h = Hierarchy()
    crumbs = []
    shown_containers = set()
    just_presented = set()
    sid = events[0]["session"]
    for e in events:
        h.apply(e)
        t = e["type"]
        if t == "present":
            just_presented.add(h.ref(e["vc"]))
        if t == "tab.select":
            shown_containers.clear()
        if t == "dismiss":
            shown_containers.clear()
        if t in ("app.background", "app.foreground"):
            crumbs.append((e["ts"], {"category": "app.lifecycle", "type": "navigation", "level": "info",
                                     "data": {"state": "background" if t == "app.background" else "foreground"}}))
        if t != "vc.appear" or e.get("phase") != "did":
            continue
        vc = h.ref(e["vc"])
        chain = []
        p = h.parent.get(vc)
        while p is not None:
            chain.append(p)
            p = h.parent.get(p)
        for c in reversed(chain):  # containers appear with their content, outermost first
            if h.cls.get(c) in CONTAINERS and c not in shown_containers:
                shown_containers.add(c)
                crumbs.append((e["ts"], crumb(h, c, c in just_presented)))
                just_presented.discard(c)
        crumbs.append((e["ts"], crumb(h, vc, vc in just_presented)))
        just_presented.discard(vc)
    naive = collections.Counter(c["data"]["screen"] for _, c in crumbs if c["category"] == "ui.lifecycle")
    # An event every 60 crumbs, holding the last 100.
    for end in list(range(60, len(crumbs), 60)) + [len(crumbs)]:
        window = crumbs[max(0, end - 100):end]
        if not window:
            continue
        values = [dict(c, timestamp=iso(ts)) for ts, c in window]
        out.write(json.dumps({"event_id": "%032x" % (abs(hash((sid, end))) % (1 << 128)), "timestamp": window[-1][0] / 1e6, "platform": "cocoa",
                              "release": "com.example.photos@3.1+1", "tags": {"session_id": sid},
                              "contexts": {"app": {"app_identifier": "com.example.photos", "app_version": "3.1"}},
                              "breadcrumbs": {"values": values}}, separators=(",", ":")) + "\n")
    return naive


def crumb(h, vc, being_presented):
    data = {"screen": h.cls.get(vc, "UIViewController"), "beingPresented": "true" if being_presented else "false",
            "window_isKeyWindow": "true", "is_window_rootViewController": "true" if vc == h.root else "false"}
    if vc in h.parent:
        data["parentViewController"] = h.cls.get(h.parent[vc], "UIViewController")
    presenting = h.presenting_of(vc)
    if presenting is not None:
        data["presentingViewController"] = h.cls.get(presenting, "UIViewController")
    return {"category": "ui.lifecycle", "type": "navigation", "level": "info", "data": data}


def render_datadog(events, out):
    h = Hierarchy()
    sid = events[0]["session"]
    views = []  # [vc, start, end]
    current = None

    def stop(ts):
        nonlocal current
        if current is not None:
            current[2] = ts
            current = None

    last_vc = None
    for e in events:
        h.apply(e)
        t, ts = e["type"], e["ts"]
        if t == "app.background":
            last_vc = current[0] if current else None
            stop(ts)
        elif t == "app.foreground" and last_vc is not None and current is None:
            current = [last_vc, ts, None]
            views.append(current)
        elif t == "vc.appear" and e.get("phase") == "did":
            vc = h.ref(e["vc"])
            if h.cls.get(vc, "").startswith("UI") or (current is not None and current[0] == vc):
                continue
            stop(ts)
            current = [vc, ts, None]
            views.append(current)
        elif t == "vc.disappear" and e.get("phase") == "did" and current is not None and current[0] == h.ref(e["vc"]):
            stop(ts)
        elif t == "session.end":
            stop(ts)
    end_ts = events[-1]["ts"]
    naive_dwell = collections.Counter()
    for n, (vc, start, end) in enumerate(views):
        done = end if end is not None else end_ts
        name = h.cls[vc]
        naive_dwell[name] += done - start
        view_id = "%08x-0000-4000-8000-%012x" % (abs(hash((sid, n))) % (1 << 32), n)
        for version, active, spent in ((1, True, min(1_000_000, done - start)), (2, end is None, done - start)):
            out.write(json.dumps({"type": "view", "date": start // 1000, "application": {"id": "photos-app"}, "service": "photos-ios",
                                  "session": {"id": sid, "type": "user"},
                                  "view": {"id": view_id, "name": name, "url": name, "time_spent": spent * 1000, "is_active": active},
                                  "_dd": {"format_version": 2, "document_version": version}}, separators=(",", ":")) + "\n")
    return collections.Counter(h.cls[vc] for vc, _, _ in views), naive_dwell


def render_firebase(events, out):
    h = Hierarchy()
    sid = events[0]["session"]
    session_number = abs(hash(sid)) % 1_000_000_000
    rows = []
    last = None
    for e in events:
        h.apply(e)
        if e["type"] == "vc.appear" and e.get("phase") == "did":
            vc = h.ref(e["vc"])
            if h.cls.get(vc, "").startswith("UI") or vc == last:
                continue
            last = vc
            rows.append((e["ts"], h.cls[vc], int(vc, 16)))
    naive_dwell = collections.Counter()
    end_ts = events[-1]["ts"]
    for n, (ts, cls, screen_id) in enumerate(rows):
        naive_dwell[cls] += (rows[n + 1][0] if n + 1 < len(rows) else end_ts) - ts
        params = [{"key": "ga_session_id", "value": {"int_value": str(session_number)}},
                  {"key": "firebase_screen_class", "value": {"string_value": cls}},
                  {"key": "firebase_screen_id", "value": {"int_value": str(screen_id)}}]
        out.write(json.dumps({"event_date": "20251121", "event_timestamp": str(ts), "event_name": "screen_view", "event_params": params,
                              "event_bundle_sequence_id": str(n + 1), "batch_event_index": "0", "user_pseudo_id": sid,
                              "app_info": {"id": "com.example.photos", "version": "3.1"}}, separators=(",", ":")) + "\n")
    return collections.Counter(cls for _, cls, _ in rows), naive_dwell


def render(corpus, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    naive = {"sentry": collections.Counter(), "datadog": collections.Counter(), "firebase": collections.Counter()}
    naive_dwell = {"datadog": collections.Counter(), "firebase": collections.Counter()}
    with open(os.path.join(out_dir, "sentry.jsonl"), "w") as s, open(os.path.join(out_dir, "datadog.jsonl"), "w") as d, \
            open(os.path.join(out_dir, "firebase.jsonl"), "w") as f:
        for events in sessions(corpus).values():
            naive["sentry"].update(render_sentry(events, s))
            n, dwell = render_datadog(events, d)
            naive["datadog"].update(n)
            naive_dwell["datadog"].update(dwell)
            n, dwell = render_firebase(events, f)
            naive["firebase"].update(n)
            naive_dwell["firebase"].update(dwell)
    return naive, naive_dwell


def truth(corpus):
    views, dwell = collections.Counter(), collections.Counter()
    with open(os.path.join(corpus, "labels.jsonl")) as f:
        for line in f:
            for cls, (n, us) in json.loads(line)["views"].items():
                views[cls] += n
                dwell[cls] += us
    return views, dwell


def error(measured, true):
    classes = set(measured) | set(true)
    return sum(abs(measured.get(c, 0) - true.get(c, 0)) for c in classes) / max(1, sum(true.values()))


def compare(corpus, navlog, work):
    naive, naive_dwell = render(corpus, work)
    true_views, true_dwell = truth(corpus)
    print("truth: %d screen views, %.0f s foreground dwell over %d classes (corpus %s)" % (
        sum(true_views.values()), sum(true_dwell.values()) / 1e6, len(true_views), corpus))
    print("views: total against the truth, and per-class error (sum over classes of |counted - true| / true views); dwell: per-class error")
    print("%-8s | %-38s | %-38s | %-18s | %-18s | %s" % ("source", "naive views (every record a view)", "navlog views", "naive dwell", "navlog dwell",
                                                      "navlog anomalies"))
    for source in ("sentry", "datadog", "firebase"):
        data = os.path.join(work, "data-" + source)
        subprocess.run(["rm", "-rf", data], check=True)
        imported = subprocess.run([navlog, "import", "--from", source, "--data-dir", data, "--quiet", os.path.join(work, source + ".jsonl")],
                                  capture_output=True, text=True)
        if imported.returncode != 0:
            sys.exit("navlog import --from %s failed: %s%s" % (source, imported.stdout, imported.stderr))
        rows = subprocess.run([navlog, "query", "sql", "--data-dir", data, "--format", "json",
                               "SELECT screen, count(*) AS views, sum(dwell) AS dwell FROM screen_visits GROUP BY screen"],
                              capture_output=True, text=True, check=True).stdout.split("\n")
        views, dwell = collections.Counter(), collections.Counter()
        for line in filter(None, rows):
            row = json.loads(line)
            views[row["screen"]] = row["views"]
            dwell[row["screen"]] = row["dwell"] or 0
        anomalies = subprocess.run([navlog, "query", "anomalies", "--data-dir", data, "--format", "json"], capture_output=True, text=True).stdout
        count = sum(json.loads(l).get("count", 0) for l in anomalies.split("\n") if l.strip())
        naive_total = sum(naive[source].values())
        true_total = sum(true_views.values())
        naive_dwell_error = "%5.1f%% per class" % (100 * error(naive_dwell[source], true_dwell)) if source in naive_dwell else "-"
        print("%-8s | %7d (%+6.1f%% total, %5.1f%% per class) | %7d (%+6.1f%% total, %5.1f%% per class) | %-18s | %5.1f%% per class  | %d" % (
            source, naive_total, 100 * (naive_total / true_total - 1), 100 * error(naive[source], true_views), sum(views.values()),
            100 * (sum(views.values()) / true_total - 1), 100 * error(views, true_views), naive_dwell_error, 100 * error(dwell, true_dwell), count))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render")
    r.add_argument("--corpus", required=True)
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--corpus", required=True)
    c.add_argument("--navlog", required=True)
    c.add_argument("--work", required=True)
    args = parser.parse_args()
    if args.command == "render":
        naive, _ = render(args.corpus, args.out)
        print(json.dumps({k: sum(v.values()) for k, v in naive.items()}))
    else:
        compare(args.corpus, args.navlog, args.work)


if __name__ == "__main__":
    main()
