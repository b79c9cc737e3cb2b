// A session: its events on a timeline with a slider, the hierarchy at the selected instant
// (GET /api/sessions/ID/step?index=K: the state after the event and before it, from the replay index), the event under the
// cursor with what the rules made of it, and live updates while navlogd records it.
"use strict";

const sessionID = decodeURIComponent(location.pathname.split("/").pop());
const page = {
  // The timeline in columns: ts, seq, type (into types), focus (into focusIDs, -1 for none).
  ts: [], seq: [], type: [], focus: [], types: [], focusIDs: [], focusClasses: [],
  anomalies: new Map(), // index -> [{code, name}]
  anchors: [], // {index, target, anchor}
  details: new Map(), // index -> the event with its resolution (from its step)
  info: null,
  selected: -1,
  states: new Map(), // index -> state, the most recent few
  shownIndex: -1,
  guide: {},
  live: null,
  pending: null,
};

const slider = document.getElementById("slider");
const ticks = document.getElementById("ticks");

async function start() {
  navlog.header("Sessions");
  document.getElementById("session-id").textContent = sessionID;
  document.title = `${sessionID} · navlog`;
  const query = new URLSearchParams(location.search);
  // A deep link to an index: its step is asked for beside the timeline, not after it.
  const linked = query.has("index") && !query.has("seq") ? Number(query.get("index")) : null;
  try {
    // The step is asked first and drawn as soon as it comes: the hierarchy needs no timeline.
    const step = linked !== null && linked >= 0
      ? navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/step?index=${linked}`).then((answer) => {
        keepStep(linked, answer);
        if (page.selected < 0) { page.selected = linked; render(linked); }
      }).catch(() => null)
      : null;
    const [timeline, guide] = await Promise.all([
      navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/events`),
      navlog.json("/assets/anomaly-guide.json").catch(() => ({})),
      step,
    ]);
    page.guide = guide;
    absorb(timeline);
  } catch (error) {
    navlog.error(error.message);
    return;
  }
  let index = count() - 1;
  if (query.has("seq")) {
    const wanted = Number(query.get("seq"));
    const found = page.seq.indexOf(wanted);
    if (found < 0) navlog.error(`This session has no event with seq ${wanted}; showing its last event.`);
    else index = found;
  } else if (query.has("index")) {
    index = Math.min(Math.max(0, Number(query.get("index"))), count() - 1);
  }
  legend();
  select(index);
  if (!page.info.ended) follow();
}

/** The number of events known. */
function count() { return page.ts.length; }

/** The focused screen's id after event `index` (null for none). */
function focusAt(index) { const number = page.focus[index]; return number >= 0 ? page.focusIDs[number] : null; }

/** Takes in a timeline answer (the whole session, or the events from some position on). */
function absorb(timeline) {
  // String tables are per answer: map this answer's numbers to the page's.
  const typeNumbers = timeline.types.map((name) => { let n = page.types.indexOf(name); if (n < 0) { page.types.push(name); n = page.types.length - 1; } return n; });
  const focusNumbers = timeline.focusIDs.map((id, k) => {
    let n = page.focusIDs.indexOf(id);
    if (n < 0) { page.focusIDs.push(id); page.focusClasses.push(timeline.focusClasses[k]); n = page.focusIDs.length - 1; }
    return n;
  });
  page.ts.length = page.seq.length = page.type.length = page.focus.length = timeline.from;
  timeline.ts.forEach((ts, k) => {
    page.ts.push(ts);
    page.seq.push(timeline.seq[k]);
    page.type.push(typeNumbers[timeline.type[k]]);
    page.focus.push(timeline.focus[k] >= 0 ? focusNumbers[timeline.focus[k]] : -1);
  });
  for (const anomaly of timeline.anomalies) {
    if (!page.anomalies.has(anomaly.index)) page.anomalies.set(anomaly.index, []);
    page.anomalies.get(anomaly.index).push(anomaly);
  }
  page.anchors = page.anchors.filter((anchor) => anchor.index < timeline.from).concat(timeline.anchors);
  page.info = timeline;
  const info = [timeline.app, timeline.version, timeline.device, timeline.idiom].filter(Boolean).join(" · ");
  document.getElementById("session-info").textContent =
    `${info} · ${navlog.number(timeline.count)} events · ${navlog.time(timeline.first)} · ${navlog.duration(timeline.last - timeline.first)}` +
    (timeline.lateEvents ? ` · ${timeline.lateEvents} arrived late (replayed in seq order)` : "");
  document.getElementById("live-badge").hidden = timeline.ended;
  slider.max = String(Math.max(0, count() - 1));
  drawTicks();
}

function legend() {
  const box = document.getElementById("legend");
  navlog.fill(box, ...navlog.categories.map((name) => navlog.el("span", {}, iconFor(name), name)),
    navlog.el("span", {}, navlog.el("i", { class: "anomaly-mark" }), "▲ anomaly"));
}

function iconFor(category) {
  const icon = navlog.el("i");
  icon.style.background = `var(--${category})`;
  return icon;
}

/** The events as ticks over the session's time (one path per kind: a session may have 10,000),
 *  anomalies as red triangles, the cursor. */
function drawTicks() {
  const width = ticks.clientWidth || 1000;
  const height = 46;
  ticks.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const first = page.info.first;
  const span = Math.max(1, page.info.last - first);
  const x = (ts) => 6 + ((ts - first) / span) * (width - 12);
  const categories = page.types.map((type) => navlog.eventCategory(type));
  const paths = new Map();
  for (let index = 0; index < count(); index++) {
    const category = categories[page.type[index]];
    let parts = paths.get(category);
    if (!parts) paths.set(category, (parts = []));
    parts.push(`M${Math.round(x(page.ts[index]) * 10) / 10} 14v24`);
  }
  const nodes = [...paths.entries()].map(([category, parts]) => navlog.svg("path", { d: parts.join(""), class: `tick cat-${category}`, "data-category": category }));
  for (const [index, raised] of page.anomalies) {
    const cx = x(page.ts[index]);
    nodes.push(navlog.svg("path", { d: `M${cx - 5},10 L${cx + 5},10 L${cx},2 Z`, class: "anomaly-tick", "data-index": index },
      navlog.svg("title", { text: raised.map((a) => `${a.code} ${a.name}`).join(", ") })));
  }
  nodes.push(navlog.svg("rect", { id: "cursor", class: "cursor", x: -10, y: 0, width: 4, height }));
  ticks.replaceChildren(...nodes);
  page.tickX = x;
  moveCursor();
  // For tools/bench/viewer: when the timeline was drawn.
  performance.mark("navlog-timeline", { detail: { count: count() } });
}

/** Moves the cursor over the selected event (the ticks stay: a session may have 10,000). */
function moveCursor() {
  const cursor = document.getElementById("cursor");
  if (cursor && page.selected >= 0 && page.tickX) cursor.setAttribute("x", (page.tickX(page.ts[page.selected]) - 1).toFixed(1));
}

ticks.addEventListener("click", (event) => {
  const box = ticks.getBoundingClientRect();
  const ratio = (event.clientX - box.left - 6) / Math.max(1, box.width - 12);
  const time = page.info.first + ratio * (page.info.last - page.info.first);
  let best = 0;
  for (let index = 0; index < count(); index++) if (page.ts[index] <= time) best = index;
  select(best);
});

/** Moves the cursor to event `index` and shows the state after it. */
function select(index) {
  if (count() === 0) return;
  index = Math.min(Math.max(0, index), count() - 1);
  page.selected = index;
  slider.value = String(index);
  document.getElementById("position").textContent = `event ${index + 1} of ${count()}` + (page.seq[index] !== null ? ` · seq ${page.seq[index]}` : "");
  // The address follows (a deep link to this instant), at most every 250 ms: a drag fires
  // hundreds of steps, and browsers throttle history updates.
  clearTimeout(page.addressTimer);
  page.addressTimer = setTimeout(() => {
    const shown = page.selected;
    history.replaceState(null, "", location.pathname + (page.seq[shown] !== null ? `?seq=${page.seq[shown]}` : `?index=${shown}`));
  }, 250);
  moveCursor();
  requestState(index);
}

/** Fetches the state at `index` and the one before it (for what changed) in one request; one
 *  request at a time, the newest selection wins while the slider is dragged. */
async function requestState(index) {
  if (page.pending) { page.pending.next = index; return; }
  page.pending = { next: null };
  try {
    if (!page.states.has(index) || !page.details.has(index) || (index > 0 && !page.states.has(index - 1))) {
      // One request: the state after the event and after the one before it (for what changed).
      keepStep(index, await navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/step?index=${index}`));
    }
    while (page.states.size > 400) page.states.delete(page.states.keys().next().value);
    while (page.details.size > 400) page.details.delete(page.details.keys().next().value);
    if (page.selected === index) render(index);
    navlog.error("");
  } catch (error) {
    navlog.error(error.message);
  } finally {
    const next = page.pending.next;
    page.pending = null;
    if (next !== null && next !== page.shownIndex) requestState(page.selected);
  }
}

/** Keeps what a step answered: the states after event `index` and the one before, the event. */
function keepStep(index, answer) {
  page.states.set(index, answer.state);
  if (answer.previous) page.states.set(index - 1, answer.previous);
  if (answer.event) page.details.set(index, answer.event);
}

function render(index) {
  const state = page.states.get(index);
  if (!state) return;
  const previous = index > 0 ? page.states.get(index - 1) : null;
  const drawn = hierarchy.draw(state, previous, anchorOf);
  const holder = document.getElementById("hierarchy");
  holder.replaceChildren(drawn.screen);
  holder.dataset.index = String(index);
  page.shownIndex = index;
  if (page.details.has(index)) showEvent(page.details.get(index));
  // For tools/bench/viewer: when each state was on screen (ms since the page's navigation began).
  performance.mark("navlog-drawn", { detail: { index } });
  document.getElementById("removed").textContent = drawn.removed.length
    ? `Left the hierarchy at this event: ${drawn.removed.map((item) => `${item.name} (${item.id})`).join(", ")}` : "";
}

/** The anchor of the popover presenting `id`: from the latest present or segue that showed it. */
function anchorOf(id) {
  for (let k = page.anchors.length - 1; k >= 0; k--) {
    const anchor = page.anchors[k];
    if (anchor.index <= page.selected && anchor.target === id) return anchor.anchor;
  }
  return null;
}

/** The event under the cursor: what it is, what the rules made of it, what it raised. */
function showEvent(event) {
  const panel = document.getElementById("event");
  const offset = page.info ? event.ts - page.info.first : 0;
  panel.dataset.index = String(event.index);
  const rows = [
    ["time", `${navlog.time(event.ts)} (+${navlog.duration(offset)})`],
    ["seq", event.seq === null ? "none" : event.seq],
    ["log position", `LSN ${event.lsn}`],
  ];
  if (event.resolution) rows.push(["resolved into", `${event.resolution}${event.rule ? ` (rule ${event.rule})` : ""}`]);
  if (event.confirms) rows.push(["confirms", `the intent with seq ${event.confirms.seq}${event.confirms.rule ? ` (resolved by rule ${event.confirms.rule})` : ""}`]);
  rows.push(["focus after", event.focus ? `${event.focusClass || "?"} (${event.focus})` : "none"]);
  const fields = {};
  for (const [name, value] of Object.entries(event.event || {})) {
    if (name.startsWith("_") || name === "session" || name === "type" || name === "ts" || name === "seq") continue;
    fields[name] = value;
  }
  const items = [];
  for (const [term, value] of rows) items.push(navlog.el("dt", { text: term }), navlog.el("dd", { text: value }));
  navlog.fill(panel,
    navlog.el("h3", {}, navlog.el("span", { class: "mono", text: event.type }), ` · event ${event.index + 1}`),
    navlog.el("dl", {}, ...items),
    ...event.anomalies.map(anomalyBox),
    navlog.el("h2", { text: "Fields" }),
    navlog.el("pre", { class: "mono", text: JSON.stringify(fields, null, 2) }));
}

function anomalyBox(anomaly) {
  const guide = page.guide[anomaly.code] || {};
  return navlog.el("div", { class: "anomaly", "data-code": anomaly.code },
    navlog.el("div", { class: "head" }, `⚠ ${anomaly.code} ${anomaly.name}`, anomaly.rule ? ` (rule ${anomaly.rule})` : "",
      anomaly.fatal ? navlog.el("span", { class: "badge fatal", text: " UIKit raises: the app would crash " }) : null),
    navlog.el("div", { text: anomaly.message }),
    guide.explanation ? navlog.el("div", { class: "explain", text: guide.explanation }) : null,
    guide.fix ? navlog.el("div", { class: "fix" }, navlog.el("strong", { text: "Fix: " }), guide.fix) : null);
}

/** The nearest event before or after `index` where the focused screen changed. */
function screenChange(index, direction) {
  for (let k = index + direction; k >= 0 && k < count(); k += direction) {
    if (focusAt(k) !== (k > 0 ? focusAt(k - 1) : null)) return k;
  }
  return direction > 0 ? count() - 1 : 0;
}

/** Live: new events from navlogd arrive within a second through server-sent events, with the
 *  timeline from the first event this page does not have yet. */
function follow() {
  const source = new EventSource(`/api/sessions/${encodeURIComponent(sessionID)}/live?after=${page.info.through}&known=${count()}`);
  page.live = source;
  source.addEventListener("timeline", (message) => {
    const atEnd = page.selected === count() - 1;
    try {
      const timeline = JSON.parse(message.data);
      if (timeline.from !== count()) { location.reload(); return; }
      absorb(timeline);
      if (atEnd) select(count() - 1);
      if (timeline.ended) { source.close(); page.live = null; }
    } catch (error) {
      navlog.error(error.message);
    }
  });
}

slider.addEventListener("input", () => select(Number(slider.value)));
document.getElementById("first").addEventListener("click", () => select(0));
document.getElementById("last").addEventListener("click", () => select(count() - 1));
document.getElementById("previous").addEventListener("click", () => select(page.selected - 1));
document.getElementById("next").addEventListener("click", () => select(page.selected + 1));
document.getElementById("previous-screen").addEventListener("click", () => select(screenChange(page.selected, -1)));
document.getElementById("next-screen").addEventListener("click", () => select(screenChange(page.selected, 1)));
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
  let handled = true;
  if (event.key === "ArrowRight") select(event.shiftKey ? screenChange(page.selected, 1) : page.selected + 1);
  else if (event.key === "ArrowLeft") select(event.shiftKey ? screenChange(page.selected, -1) : page.selected - 1);
  else if (event.key === "Home") select(0);
  else if (event.key === "End") select(count() - 1);
  else handled = false;
  if (handled) event.preventDefault();
});
window.addEventListener("resize", drawTicks);
// A page left (or kept in the back-forward cache) closes its event stream: browsers give a
// site six connections, and a stream held by a page nobody sees would take one.
window.addEventListener("pagehide", () => { if (page.live) { page.live.close(); page.live = null; } });
window.addEventListener("pageshow", (event) => { if (event.persisted && page.info && !page.info.ended) follow(); });
start();
