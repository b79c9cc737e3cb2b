"""navlog serve, tested the way people use it: in a real Chromium driven by Selenium.

One navlogd on a private socket records the sessions (a hand-written tour of the containers, the
demo session with UIKit misuses, a session whose strings are HTML and script, a hundred-odd
simulated sessions); `navlog serve` reads its data directory; the browser opens the pages, drags
the slider, steps with the keyboard, and what the page draws is checked against `navlog replay
--format json` at the same instant, and against hierarchies written out by hand from the rules of
../shared/spec/uikit-navigation-rules.md. Screenshots of each page go to NAVLOG_SCREENSHOT_DIR
(default: a temporary folder; tools/screenshots sets docs/screenshots).

Run by tools/test after the Swift tests (the binaries of the debug build). Without Chromium and
its driver the tests fail and say what to install: they never skip.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from navlog_stack import NAVLOG, NAVLOGD, ROOT, popen  # Tests/conftest.py puts Tests/support on the path

HERE = pathlib.Path(__file__).resolve().parent
STORYBOARD = ROOT / "tools" / "demo-storyboards" / "Cookbook.storyboard"


def run(*args, check=True):
    result = subprocess.run([NAVLOG, *args], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"navlog {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def start_serve(data, *extra):
    """Starts `navlog serve` on a free port; returns (process, base URL, first stderr line)."""
    process = popen([NAVLOG, "serve", "--data-dir", str(data), "--listen", "127.0.0.1:0", *extra],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    match = re.search(r"listening on (http://[^/ ]+)/", line)
    if not match:
        process.kill()
        raise AssertionError(f"navlog serve did not announce its address: {line!r} {process.stderr.read()}")
    return process, match.group(1), line


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def recorded():
    """A navlogd with recorded sessions, and navlog serve over its data directory."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="navlog-browser-"))
    data, socket = work / "data", work / "navlog.sock"
    daemon = popen([NAVLOGD, "--socket", str(socket), "--data-dir", str(data)], stderr=open(work / "navlogd.log", "w"))
    for _ in range(100):
        if socket.exists():
            break
        time.sleep(0.1)
    assert socket.exists(), (work / "navlogd.log").read_text()
    run("send", "--socket", str(socket), str(HERE / "tour.jsonl"), str(ROOT / "tools" / "demo-misuses.jsonl"), str(HERE / "xss.jsonl"))
    run("simulate", "--storyboard", str(STORYBOARD), "--sessions", "120", "--idiom", "pad", "--seed", "7", "--to", str(socket))
    serve, base, _ = start_serve(data, "--storyboard", str(STORYBOARD))
    yield {"work": work, "data": data, "socket": socket, "base": base, "daemon": daemon}
    stop(serve)
    stop(daemon)
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("Chromium and its driver are needed for the viewer's tests: apt-get install -y chromium chromium-driver "
                    "(tools/setup-deps --test does it). They are not skipped.")
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000"]:
        options.add_argument(argument)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_script_timeout(20)
    yield driver
    driver.quit()


SCREENSHOTS = pathlib.Path(os.environ.get("NAVLOG_SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="navlog-screenshots-"))


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def wait(driver, condition, what, timeout=15):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # the page is still loading
            last = error
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r}); page errors: {page_errors(driver)}")


def page_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


# The drawing, read back from the page: one entry per controller frame.
DRAWN_JS = """
const frames = [...document.querySelectorAll('#hierarchy .frame')];
// Settled: the timeline is in and the hierarchy was drawn after it (the page draws a deep link's
// step before its timeline comes, then once more).
const timeline = performance.getEntriesByName('navlog-timeline')[0];
const drawn = performance.getEntriesByName('navlog-drawn').filter((m) => timeline && m.startTime >= timeline.startTime);
const last = drawn[drawn.length - 1];
return {
  index: last ? String(last.detail.index) : null,
  frames: frames.map((f) => {
    const parentFrame = f.parentElement.closest('.frame');
    return {id: f.dataset.id, class: f.dataset.class, kind: f.dataset.kind, role: f.dataset.role,
      position: f.dataset.position === undefined ? null : f.dataset.position, slot: f.dataset.slot || null,
      parent: parentFrame ? parentFrame.dataset.id : (f.dataset.presentedBy || null),
      style: f.dataset.style || null, effectiveStyle: f.dataset.effectiveStyle || null,
      selected: f.dataset.selected === undefined ? null : f.dataset.selected,
      collapsed: f.dataset.collapsed === undefined ? null : f.dataset.collapsed,
      visible: f.dataset.visible === 'true', focused: f.dataset.focused === 'true',
      text: f.querySelector(':scope > .label .cls').textContent};
  })};
"""


def flatten(state):
    """The replay state as the same entries the drawing gives."""
    entries = []
    visible = set(state.get("visible", []))

    def visit(node, parent, role, position, slot=None, style=None, effective=None):
        entries.append({"id": node["id"], "class": node.get("class") or "", "kind": node["kind"], "role": role,
                        "position": None if position is None else str(position), "slot": slot, "parent": parent,
                        "style": style, "effectiveStyle": effective,
                        "selected": str(node["selected"]) if "tabs" in node else None,
                        "collapsed": ("true" if node.get("collapsed") else "false") if "columns" in node else None,
                        "visible": node["id"] in visible, "focused": node["id"] == state.get("focus")})
        for index, child in enumerate(node.get("stack", [])):
            visit(child, node["id"], "stack", index)
        for index, child in enumerate(node.get("tabs", [])):
            visit(child, node["id"], "tab", index)
        for column in ["primary", "supplementary", "secondary"]:
            if column in node.get("columns", {}):
                visit(node["columns"][column], node["id"], "column-" + column, None)
        for index, child in enumerate(node.get("children", [])):
            visit(child, node["id"], "child", index, slot=child.get("slot"))
        if "presented" in node:
            presented = node["presented"]
            visit(presented["node"], node["id"], "presented", None, style=presented["style"], effective=presented["effectiveStyle"])

    for window in state.get("windows", []):
        visit(window["root"], None, "root", None)
    return entries


def comparable(entries):
    return sorted(json.dumps({k: v for k, v in e.items() if k != "text"}, sort_keys=True) for e in entries)


def replay(data, session, index):
    return json.loads(run("replay", "--data-dir", str(data), "--session", session, "--index", str(index), "--format", "json").stdout)


def drawn_at(driver, index, timeout=15):
    return wait(driver, lambda: (lambda d: d if d["index"] == str(index) else None)(driver.execute_script(DRAWN_JS)), f"the hierarchy at event {index}",
                timeout=timeout)


def session_url(base, session, query=""):
    return f"{base}/sessions/{urllib.request.quote(session, safe='')}{query}"


# Hierarchies written out by hand from the rules, for the tour (Tests/browser/tour.jsonl).
# After seq 9: on an iPad in a regular width a popover stays a popover (R4); it is presented by
# the context root, the tab bar controller (R3b); the pushed detail keeps its embedded chart (R10).
TOUR_AFTER_POPOVER = {
    "focus": "share",
    "tree": ("tabs", "tab", {"selected": 0}, [
        ("navA", "navigation", {"role": "tab", "position": 0}, [
            ("home", "plain", {"role": "stack", "position": 0}, []),
            ("detail", "plain", {"role": "stack", "position": 1}, [("chart", "plain", {"role": "child", "position": 0, "slot": "chartContainer"}, [])]),
        ]),
        ("split", "split", {"role": "tab", "position": 1, "collapsed": False}, [
            ("navB", "navigation", {"role": "column-primary"}, [("folders", "plain", {"role": "stack", "position": 0}, [])]),
            ("inbox", "plain", {"role": "column-secondary"}, []),
        ]),
        ("share", "plain", {"role": "presented", "style": "popover", "effectiveStyle": "popover"}, []),
    ]),
}
# After seq 13: the second tab is selected (R13); showDetail from the primary column of an
# expanded split replaces the secondary column (R2); a form sheet from the message is presented
# by the context root (R3b) and stays a form sheet in a regular width (R4).
TOUR_AFTER_SHEET = {
    "focus": "compose",
    "tree": ("tabs", "tab", {"selected": 1}, [
        ("navA", "navigation", {"role": "tab", "position": 0}, [
            ("home", "plain", {"role": "stack", "position": 0}, []),
            ("detail", "plain", {"role": "stack", "position": 1}, [("chart", "plain", {"role": "child", "position": 0, "slot": "chartContainer"}, [])]),
        ]),
        ("split", "split", {"role": "tab", "position": 1, "collapsed": False}, [
            ("navB", "navigation", {"role": "column-primary"}, [("folders", "plain", {"role": "stack", "position": 0}, [])]),
            ("message", "plain", {"role": "column-secondary"}, []),
        ]),
        ("compose", "plain", {"role": "presented", "style": "formSheet", "effectiveStyle": "formSheet"}, []),
    ]),
}
# After seq 14 (horizontally compact): the split collapses and its secondary controller is
# pushed onto the primary navigation controller (R14); the form sheet adapts to full screen (R4).
TOUR_AFTER_COMPACT = {
    "focus": "compose",
    "tree": ("tabs", "tab", {"selected": 1}, [
        ("navA", "navigation", {"role": "tab", "position": 0}, [
            ("home", "plain", {"role": "stack", "position": 0}, []),
            ("detail", "plain", {"role": "stack", "position": 1}, [("chart", "plain", {"role": "child", "position": 0, "slot": "chartContainer"}, [])]),
        ]),
        ("split", "split", {"role": "tab", "position": 1, "collapsed": True}, [
            ("navB", "navigation", {"role": "column-primary"}, [
                ("folders", "plain", {"role": "stack", "position": 0}, []),
                ("message", "plain", {"role": "stack", "position": 1}, []),
            ]),
        ]),
        ("compose", "plain", {"role": "presented", "style": "formSheet", "effectiveStyle": "fullScreen"}, []),
    ]),
}


def expected_entries(expectation):
    """The hand-written tree as (id, kind, role, position, slot, parent, style, effective, selected, collapsed)."""
    rows = []

    def visit(item, parent):
        ident, kind, attributes, children = item
        position = attributes.get("position")
        rows.append((ident, kind, attributes.get("role", "root"), None if position is None else str(position), attributes.get("slot"), parent,
                     attributes.get("style"), attributes.get("effectiveStyle"),
                     None if "selected" not in attributes else str(attributes["selected"]),
                     None if "collapsed" not in attributes else ("true" if attributes["collapsed"] else "false")))
        for child in children:
            visit(child, ident)

    visit(expectation["tree"], None)
    return sorted(rows, key=repr)


def structural(entries):
    return sorted(((e["id"], e["kind"], e["role"], e["position"], e["slot"], e["parent"], e["style"], e["effectiveStyle"], e["selected"],
                    e["collapsed"]) for e in entries), key=repr)


def test_tour_drawn_as_the_rules_say(recorded, browser):
    """The tour's hierarchy at three instants, drawn in the browser, equals the one written by hand."""
    for index, expectation, name in [(8, TOUR_AFTER_POPOVER, "popover"), (12, TOUR_AFTER_SHEET, "sheet"), (13, TOUR_AFTER_COMPACT, "compact")]:
        browser.get(session_url(recorded["base"], "viewer-tour", f"?index={index}"))
        drawn = drawn_at(browser, index)
        assert structural(drawn["frames"]) == expected_entries(expectation), f"drawing after event {index}"
        focused = [frame["id"] for frame in drawn["frames"] if frame["focused"]]
        assert focused == [expectation["focus"]]
        # The same hand-written tree is what navlog replay says (the page draws the replay state).
        assert structural(flatten(replay(recorded["data"], "viewer-tour", index))) == expected_entries(expectation)
        screenshot(browser, f"session-tour-{name}")
    # The popover's anchor is shown (from the present event that showed it).
    browser.get(session_url(recorded["base"], "viewer-tour", "?index=8"))
    drawn_at(browser, 8)
    assert "bar button item shareButton" in browser.find_element("css selector", ".anchor-label").text


def test_every_step_drawn_equals_replay(recorded, browser):
    """Stepping with → through whole sessions: at every event the drawing equals navlog replay --format json."""
    from selenium.webdriver.common.keys import Keys

    for session in ["viewer-tour", "demo-misuses"]:
        browser.get(session_url(recorded["base"], session, "?index=0"))
        drawn = drawn_at(browser, 0)
        count = int(browser.find_element("id", "slider").get_attribute("max")) + 1
        body = browser.find_element("tag name", "body")
        for index in range(count):
            if index > 0:
                body.send_keys(Keys.ARROW_RIGHT)
                drawn = drawn_at(browser, index)
            state = replay(recorded["data"], session, index)
            assert comparable(drawn["frames"]) == comparable(flatten(state)), f"{session} after event {index}"
            for frame in drawn["frames"]:
                assert frame["text"] == (frame["class"] or "(unknown class)")
    assert not page_errors(browser)


def test_slider_deep_link_and_screen_steps(recorded, browser):
    """Dragging the slider, ?seq= deep links, shift+arrow to the next screen change, Home/End."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    sessions = json.loads("[" + ",".join(run("sessions", "--data-dir", str(recorded["data"]), "--format", "json").stdout.split("\n")[:-1]) + "]")
    longest = max((row for row in sessions if row["app"] == "Cookbook"), key=lambda row: row["events"])
    session, events = longest["session"], longest["events"]
    timeline = [json.loads(line) for line in run("timeline", "--data-dir", str(recorded["data"]), "--session", session, "--format", "json").stdout.splitlines()]
    assert len(timeline) == events
    # A deep link to a seq opens that instant.
    target = timeline[events // 2]
    browser.get(session_url(recorded["base"], session, f"?seq={target['seq']}"))
    drawn = drawn_at(browser, target["index"])
    assert comparable(drawn["frames"]) == comparable(flatten(replay(recorded["data"], session, target["index"])))
    screenshot(browser, "session")
    # Drag the slider's thumb to the far left: the first event.
    slider = browser.find_element("id", "slider")
    ActionChains(browser).click_and_hold(slider).move_by_offset(-slider.size["width"] // 2 - 5, 0).release().perform()
    drawn_at(browser, 0)
    # shift+→ lands on the next event whose focused screen differs (navlog timeline's focus column).
    body = browser.find_element("tag name", "body")
    position = 0
    for _ in range(4):
        body.send_keys(Keys.SHIFT, Keys.ARROW_RIGHT)
        expected = next((k for k in range(position + 1, events) if timeline[k]["focus"] != timeline[k - 1]["focus"]), events - 1)
        drawn_at(browser, expected)
        position = expected
    body.send_keys(Keys.END)
    drawn_at(browser, events - 1)
    body.send_keys(Keys.HOME)
    drawn_at(browser, 0)
    wait(browser, lambda: browser.current_url.endswith(f"?seq={timeline[0]['seq']}"), "the address to follow the cursor")


def test_anomalies_explained(recorded, browser):
    """An event that raised an anomaly shows its code, rule, message and the docs' explanation and fix."""
    timeline = [json.loads(line) for line in run("timeline", "--data-dir", str(recorded["data"]), "--session", "demo-misuses", "--format", "json").stdout.splitlines()]
    raising = [event for event in timeline if event["anomalies"]]
    assert raising, "the demo session raises anomalies"
    guide = json.loads((ROOT / "Sources" / "NavlogServe" / "Web" / "anomaly-guide.json").read_text())
    browser.get(session_url(recorded["base"], "demo-misuses"))
    marks = wait(browser, lambda: browser.find_elements("css selector", "#ticks .anomaly-tick"), "anomaly marks")
    assert len(marks) == len(raising)
    for event in raising:
        browser.get(session_url(recorded["base"], "demo-misuses", f"?index={event['index']}"))
        drawn_at(browser, event["index"])
        boxes = browser.find_elements("css selector", "#event .anomaly")
        assert [box.get_attribute("data-code") for box in boxes] == [anomaly["code"] for anomaly in event["anomalies"]]
        for box, anomaly in zip(boxes, event["anomalies"]):
            text = box.text
            assert anomaly["message"] in text
            if anomaly["rule"]:
                assert f"rule {anomaly['rule']}" in text
            assert guide[anomaly["code"]]["fix"].split(".")[0] in text
        if event["resolution"]:
            assert event["resolution"] in browser.find_element("id", "event").text
    screenshot(browser, "session-anomaly")


def test_sessions_page_filters_sorts_and_pages(recorded, browser):
    listed = [json.loads(line) for line in run("sessions", "--data-dir", str(recorded["data"]), "--format", "json").stdout.splitlines()]
    browser.get(recorded["base"] + "/")
    wait(browser, lambda: browser.find_element("id", "total").text, "the sessions total")
    assert browser.find_element("id", "total").text == f"{len(listed)} sessions"
    rows = browser.find_elements("css selector", "#sessions tbody tr")
    assert len(rows) == 50
    screenshot(browser, "sessions")
    # Sort by events, most first.
    browser.find_element("css selector", "th[data-key=events]").click()
    most = max(row["events"] for row in listed)
    wait(browser, lambda: browser.find_elements("css selector", "#sessions tbody tr td.num")[1].text == str(most), "sorting by events")
    # Next page.
    browser.find_element("id", "next").click()
    wait(browser, lambda: browser.find_element("id", "range").text.startswith("51–100"), "the second page")
    # Filter: with anomalies only.
    browser.find_element("name", "anomalies").click()
    with_anomalies = [row for row in listed if row["anomalies"] > 0]
    wait(browser, lambda: browser.find_element("id", "total").text == f"{len(with_anomalies)} session{'s' if len(with_anomalies) != 1 else ''}", "the anomalies filter")
    shown = {row.get_attribute("data-session") for row in browser.find_elements("css selector", "#sessions tbody tr[data-session]")}
    assert shown == {row["session"] for row in with_anomalies}
    # Back restores the previous view.
    browser.back()
    wait(browser, lambda: browser.find_element("id", "total").text == f"{len(listed)} sessions", "back")


def test_strings_from_events_never_run(recorded, browser):
    """Class names, titles, ids and app names holding HTML, script and quotes are shown as text."""
    session = "xss-<script>window.__xss=1</script>"
    browser.get(recorded["base"] + "/?q=xss")
    wait(browser, lambda: browser.find_elements("css selector", "#sessions tbody tr[data-session]"), "the xss session listed")
    assert browser.find_element("css selector", "#sessions tbody tr[data-session] a").text == session
    for index in range(6):
        browser.get(session_url(recorded["base"], session, f"?index={index}"))
        drawn = drawn_at(browser, index)
        assert comparable(drawn["frames"]) == comparable(flatten(replay(recorded["data"], session, index)))
    # The session has no session.end: each of these pages opened a live stream. More pages than a
    # browser's six connections to one site still open (a page left closes its stream).
    for index in range(6):
        browser.get(session_url(recorded["base"], session, f"?index={index}"))
        drawn_at(browser, index, timeout=5)
    assert "<script>window.__xss=4</script>ListVC" in browser.find_element("id", "hierarchy").text
    assert "Ünïcødé ✓ 日本語" in browser.find_element("id", "hierarchy").text
    screenshot(browser, "session-escaping")
    browser.get(recorded["base"] + "/analytics")
    wait(browser, lambda: browser.find_elements("css selector", "#screens tbody tr[data-screen]"), "analytics")
    assert browser.execute_script("return window.__xss === undefined && document.querySelectorAll('script:not([src])').length === 0")
    assert browser.execute_script("return document.querySelectorAll('img, iframe, #hierarchy svg, #hierarchy style').length") == 0


def test_analytics_equal_navlog_query(recorded, browser):
    data = str(recorded["data"])
    screens = [json.loads(line) for line in run("query", "screens", "--data-dir", data, "--format", "json").stdout.splitlines()]
    funnel = [json.loads(line) for line in run("query", "funnel", "--data-dir", data, "--format", "json", screens[0]["screen"], screens[1]["screen"]).stdout.splitlines()]
    steps = f"?step={urllib.request.quote(screens[0]['screen'])}&step={urllib.request.quote(screens[1]['screen'])}"
    browser.get(recorded["base"] + "/analytics" + steps)
    rows = wait(browser, lambda: browser.find_elements("css selector", "#screens tbody tr[data-screen]"), "the screens table")
    for row, expected in zip(rows, screens[:len(rows)]):
        cells = [cell.text for cell in row.find_elements("tag name", "td")]
        assert cells[0].split(" · ")[0] == expected["screen"]
        assert cells[1] == f"{expected['views']:,}" and cells[2] == f"{expected['sessions']:,}"
    steps_drawn = wait(browser, lambda: browser.find_elements("css selector", "#funnel .funnel-step"), "the funnel")
    assert [int(step.get_attribute("data-sessions")) for step in steps_drawn] == [row["sessions"] for row in funnel]
    links = browser.find_elements("css selector", "#flow .flow-link")
    assert links, "the transitions flow is drawn"
    transitions = [json.loads(line) for line in run("query", "transitions", "--data-dir", data, "--format", "json").stdout.splitlines()]
    totals = {}
    for row in transitions:
        key = (row["from"] or "(session start)", row["to"])
        totals[key] = totals.get(key, 0) + row["count"]
    for link in links:
        assert int(link.get_attribute("data-count")) == totals[(link.get_attribute("data-from"), link.get_attribute("data-to"))]
    anomalies = [json.loads(line) for line in run("anomalies", "--data-dir", data, "--format", "json").stdout.splitlines()]
    counts = {}
    for row in anomalies:
        counts[row["code"]] = counts.get(row["code"], 0) + 1
    drawn_codes = {row.get_attribute("data-code"): int(row.find_elements("tag name", "td")[2].text.replace(",", ""))
                   for row in browser.find_elements("css selector", "#anomaly-codes tbody tr")}
    assert drawn_codes == counts
    screenshot(browser, "analytics")
    # A third step chosen in the page: the funnel and the address follow, as navlog query funnel.
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("css selector", "#steps select")).select_by_value(screens[2]["screen"])
    three = [json.loads(line) for line in run("query", "funnel", "--data-dir", data, "--format", "json", *[row["screen"] for row in screens[:3]]).stdout.splitlines()]
    wait(browser, lambda: [int(step.get_attribute("data-sessions")) for step in browser.find_elements("css selector", "#funnel .funnel-step")]
         == [row["sessions"] for row in three], "the three-step funnel")
    assert browser.current_url.count("step=") == 3


def test_storyboard_coverage_page(recorded, browser):
    coverage = [json.loads(line) for line in run("storyboard", "coverage", "--storyboard", str(STORYBOARD), "--data-dir", str(recorded["data"]),
                                                  "--format", "json").stdout.splitlines()]
    scenes = [row for row in coverage if row["record"] == "scene"]
    browser.get(recorded["base"] + "/storyboards")
    drawn = wait(browser, lambda: browser.find_elements("css selector", ".graph .scene"), "the storyboard graph")
    assert len(drawn) == len(scenes)
    assert sorted(int(scene.get_attribute("data-sessions")) for scene in drawn) == sorted(row["sessions"] for row in scenes)
    assert len(browser.find_elements("css selector", ".graph .scene.covered")) == sum(1 for row in scenes if row["sessions"] > 0)
    segues = [row for row in coverage if row["record"] == "segue"]
    used = browser.find_elements("css selector", ".graph .segue.used")
    assert sum(int(segue.get_attribute("data-uses")) for segue in used) <= sum(row["uses"] for row in segues)
    screenshot(browser, "storyboards")


def test_live_session_updates_without_reload(recorded, browser):
    """A session still being recorded: events sent to navlogd appear on the open page."""
    socket = str(recorded["socket"])
    lines = [
        {"type": "session.start", "session": "live-1", "seq": 1, "ts": 1763900000000000, "app": "Mailbox", "version": "2.0", "device": "iPhone15,2",
         "idiom": "phone", "traits": {"h": "compact", "v": "regular"}},
        {"type": "window.root", "session": "live-1", "seq": 2, "ts": 1763900000100000, "vc": {"id": "nav", "class": "UINavigationController"}},
        {"type": "nav.set", "session": "live-1", "seq": 3, "ts": 1763900000200000, "nav": "nav", "vcs": [{"id": "list", "class": "ListViewController"}]},
    ]
    first = recorded["work"] / "live-1.jsonl"
    first.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run("send", "--socket", socket, "--ack", "batch", str(first))
    browser.get(session_url(recorded["base"], "live-1"))
    drawn_at(browser, 2)
    assert browser.find_element("id", "live-badge").is_displayed()
    time.sleep(0.5)  # the page's event stream is open
    latencies = []
    for number, (ident, cls) in enumerate([("item", "ItemViewController"), ("photo", "PhotoViewController"), ("zoom", "ZoomViewController")]):
        more = recorded["work"] / f"live-{ident}.jsonl"
        more.write_text(json.dumps({"type": "nav.push", "session": "live-1", "seq": 4 + number, "ts": 1763900001000000 + number * 1000000, "nav": "nav",
                                    "vc": {"id": ident, "class": cls}, "animated": False}) + "\n")
        run("send", "--socket", socket, "--ack", "batch", str(more))
        sent = time.time()
        drawn = drawn_at(browser, 3 + number)
        latencies.append(time.time() - sent)
        assert [frame["id"] for frame in drawn["frames"] if frame["focused"]] == [ident]
    # The goal (within a second) is a speed goal, measured on release builds by tools/bench/viewer.
    # Here (debug builds, a browser and whatever else CI runs on two cores) the test asserts that
    # each event arrives on the open page without a reload, in a bound no working stream misses.
    assert max(latencies) <= 10, f"new events took {latencies} s to show without a reload"
    end = recorded["work"] / "live-3.jsonl"
    end.write_text(json.dumps({"type": "session.end", "session": "live-1", "seq": 7, "ts": 1763900009000000, "reason": "user"}) + "\n")
    run("send", "--socket", socket, "--ack", "batch", str(end))
    drawn_at(browser, 6)
    wait(browser, lambda: not browser.find_element("id", "live-badge").is_displayed(), "the live badge to go")
    print(f"live updates shown {', '.join(f'{value:.2f}' for value in latencies)} s after navlog send returned")


def http(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_only_the_data_directory_can_be_read(recorded):
    base = recorded["base"]
    for path in ["/assets/..%2f..%2f..%2fPackage.swift", "/assets/../../Package.swift", "/assets/%2e%2e/viewer.css", "/..%2f..%2fetc/passwd",
                 "/assets/", "/assets/Web", "/api/sessions/..%2f..%2fetc%2fpasswd/events"]:
        status, _, body = http(base + path)
        assert status == 404, (path, status)
        assert b"root:" not in body and b"PackageDescription" not in body
    for method in ["POST", "PUT", "DELETE"]:
        request = urllib.request.Request(base + "/api/sessions", method=method, data=b"{}")
        try:
            urllib.request.urlopen(request, timeout=10)
            raise AssertionError(f"{method} was accepted")
        except urllib.error.HTTPError as error:
            assert error.code in (404, 405)
    status, headers, _ = http(base + "/")
    assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]
    status, _, body = http(base + "/api/sessions?sort=nonsense")
    assert status == 400 and b"sort takes one of" in body


def test_token_required_beyond_loopback(recorded, browser):
    refused = subprocess.run([NAVLOG, "serve", "--data-dir", str(recorded["data"]), "--listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "--token" in refused.stderr
    # A storyboard that cannot be read is said at start.
    refused = subprocess.run([NAVLOG, "serve", "--data-dir", str(recorded["data"]), "--storyboard", str(recorded["work"] / "missing.storyboard"),
                              "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "missing.storyboard cannot be read" in refused.stderr
    token = "viewer-test-token-0123456789"
    process, base, line = start_serve(recorded["data"], "--token", token)
    try:
        login = re.search(r"(/login\?code=[0-9a-f]+)", line).group(1)
        assert http(base + "/api/sessions")[0] == 401
        assert http(base + "/api/sessions", {"Authorization": "Bearer wrong"})[0] == 401
        assert http(base + "/api/sessions", {"Authorization": f"Bearer {token}"})[0] == 200
        browser.delete_all_cookies()
        browser.get(base + "/")
        assert "needs its token" in browser.page_source
        browser.get(base + login)
        wait(browser, lambda: browser.find_element("id", "total").text.endswith("sessions"), "the sessions page after login")
        cookie = browser.get_cookie("navlog_viewer")
        assert cookie and cookie["httpOnly"] and token not in cookie["value"]
        assert http(base + login)[0] == 401, "the login link works once"
    finally:
        stop(process)


def test_endpoints_answer_as_documented(recorded):
    """Every JSON endpoint's answer validates against schemas/viewer-api.schema.json (and the state
    against replay-output.schema.json); the state endpoint is navlog replay's output, byte for byte."""
    import jsonschema
    from referencing import Registry, Resource

    schemas = ROOT / "schemas"
    api = json.loads((schemas / "viewer-api.schema.json").read_text())
    output = json.loads((schemas / "replay-output.schema.json").read_text())
    registry = Registry().with_resources([(api["$id"], Resource.from_contents(api)), (output["$id"], Resource.from_contents(output))])

    def check(definition, value):
        schema = {"$ref": f"{api['$id']}#/$defs/{definition}"} if definition else {"$ref": output["$id"]}
        jsonschema.Draft202012Validator(schema, registry=registry, format_checker=jsonschema.FormatChecker()).validate(value)

    base = recorded["base"]

    def get(path, status=200):
        code, headers, body = http(base + path)
        assert code == status, (path, code, body[:300])
        assert headers["Content-Type"].startswith("application/json")
        return json.loads(body)

    check("sessionsPage", get("/api/sessions"))
    check("sessionsPage", get("/api/sessions?sort=-events&limit=5&offset=3&anomalies=1&idiom=pad"))
    check("sessionsPage", get("/api/sessions?q=no-such-session"))
    for session in ["viewer-tour", "demo-misuses", "xss-<script>window.__xss=1</script>"]:
        quoted = urllib.request.quote(session, safe="")
        timeline = get(f"/api/sessions/{quoted}/events")
        check("timeline", timeline)
        cli = [json.loads(line) for line in run("timeline", "--data-dir", str(recorded["data"]), "--session", session, "--format", "json").stdout.splitlines()]
        assert timeline["count"] == len(cli) == len(timeline["ts"])
        assert timeline["ts"] == [event["ts"] for event in cli] and timeline["seq"] == [event["seq"] for event in cli]
        assert [timeline["types"][number] for number in timeline["type"]] == [event["type"] for event in cli]
        assert [timeline["focusIDs"][number] if number >= 0 else None for number in timeline["focus"]] == [event["focus"] for event in cli]
        assert sorted((a["index"], a["code"]) for a in timeline["anomalies"]) == sorted((e["index"], a["code"]) for e in cli for a in e["anomalies"])
        later = get(f"/api/sessions/{quoted}/events?from=3")
        check("timeline", later)
        assert later["from"] == 3 and later["ts"] == timeline["ts"][3:]
        for index in range(timeline["count"]):
            state = get(f"/api/sessions/{quoted}/state?index={index}")
            check(None, state)
            expected = replay(recorded["data"], session, index)
            assert state == expected
            step = get(f"/api/sessions/{quoted}/step?index={index}")
            check("step", step)
            assert step["state"] == expected
            assert step["previous"] == (replay(recorded["data"], session, index - 1) if index > 0 else None)
            # The event as navlog timeline describes it.
            for name in ["index", "seq", "ts", "lsn", "type", "resolution", "action", "focus", "anomalies"]:
                assert step["event"][name] == cli[index][name], (session, index, name)
        last = cli[-1]
        if last["seq"] is not None:
            assert get(f"/api/sessions/{quoted}/state?seq={last['seq']}") == replay(recorded["data"], session, timeline["count"] - 1)
    screens = get("/api/analytics")["screens"]
    check("analytics", get(f"/api/analytics?step={urllib.request.quote(screens[0]['screen'])}&step={urllib.request.quote(screens[1]['screen'])}&within=600"))
    check("analytics", get("/api/analytics?app=Cookbook&since=2025-11-21T09:00:00Z&until=1999999999999999"))
    check("storyboards", get("/api/storyboards"))
    for path, status in [("/api/sessions/no-such-session/events", 404), ("/api/sessions/viewer-tour/state?index=999", 404),
                         ("/api/sessions/viewer-tour/state?seq=999", 404), ("/api/sessions/viewer-tour/state?index=-1", 400),
                         ("/api/sessions/viewer-tour/state?index=1&seq=1", 400),
                         ("/api/sessions/viewer-tour/step", 400), ("/api/sessions/viewer-tour/step?index=99", 404), ("/api/analytics?since=yesterday", 400),
                         ("/api/analytics?step=OnlyOne", 400), ("/api/sessions?limit=ten", 400)]:
        check("error", get(path, status))
    # The live stream: an `events` message whose data is a liveMessage.
    code, headers, _ = 0, {}, b""
    request = urllib.request.Request(base + "/api/sessions/viewer-tour/live?after=1")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        event, data = None, None
        while data is None:
            line = response.readline().decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "events":
                data = json.loads(line[6:])
    check("liveMessage", data)
    assert data["new"] == 14  # the tour was sent first: LSNs 1 to 15, and after=1
