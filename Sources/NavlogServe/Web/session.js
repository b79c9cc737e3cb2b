// A session: its events on a timeline with a slider, the hierarchy at the selected instant
// (GET /api/sessions/ID/state?index=K, answered from the replay index), the event under the
// cursor with what the rules made of it, and live updates while navlogd records it.
"use strict";

const sessionID = decodeURIComponent(location.pathname.split("/").pop());
const page = {
  events: [],
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
  try {
    const [timeline, guide] = await Promise.all([
      navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/events`),
      navlog.json("/assets/anomaly-guide.json").catch(() => ({})),
    ]);
    page.guide = guide;
    absorb(timeline);
  } catch (error) {
    navlog.error(error.message);
    return;
  }
  const query = new URLSearchParams(location.search);
  let index = page.events.length - 1;
  if (query.has("seq")) {
    const wanted = Number(query.get("seq"));
    const found = page.events.findIndex((event) => event.seq === wanted);
    if (found < 0) navlog.error(`This session has no event with seq ${wanted}; showing its last event.`);
    else index = found;
  } else if (query.has("index")) {
    index = Math.min(Math.max(0, Number(query.get("index"))), page.events.length - 1);
  }
  legend();
  select(index);
  if (!page.info.ended) follow();
}

/** Takes in a timeline answer (the whole session, or the events from some position on). */
function absorb(timeline) {
  for (const event of timeline.events) page.events[event.index] = event;
  page.info = timeline;
  const info = [timeline.app, timeline.version, timeline.device, timeline.idiom].filter(Boolean).join(" · ");
  document.getElementById("session-info").textContent =
    `${info} · ${navlog.number(timeline.count)} events · ${navlog.time(timeline.first)} · ${navlog.duration(timeline.last - timeline.first)}` +
    (timeline.lateEvents ? ` · ${timeline.lateEvents} arrived late (replayed in seq order)` : "");
  document.getElementById("live-badge").hidden = timeline.ended;
  slider.max = String(Math.max(0, page.events.length - 1));
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

/** The events as ticks over the session's time, anomalies as red triangles, the cursor. */
function drawTicks() {
  const width = ticks.clientWidth || 1000;
  const height = 46;
  ticks.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const first = page.info.first;
  const span = Math.max(1, page.info.last - first);
  const x = (ts) => 6 + ((ts - first) / span) * (width - 12);
  const nodes = [];
  for (const event of page.events) {
    if (!event) continue;
    const category = navlog.eventCategory(event.type);
    nodes.push(navlog.svg("rect", { x: x(event.ts).toFixed(1), y: 14, width: 2, height: 24, "data-index": event.index, class: `tick cat-${category}` }));
    if (event.anomalies.length) {
      const cx = x(event.ts);
      nodes.push(navlog.svg("path", { d: `M${cx - 5},10 L${cx + 5},10 L${cx},2 Z`, class: "anomaly-tick", "data-index": event.index },
        navlog.svg("title", { text: event.anomalies.map((a) => `${a.code} ${a.name}`).join(", ") })));
    }
  }
  const cursorEvent = page.events[page.selected];
  if (cursorEvent) nodes.push(navlog.svg("rect", { id: "cursor", class: "cursor", x: (x(cursorEvent.ts) - 1).toFixed(1), y: 0, width: 4, height }));
  ticks.replaceChildren(...nodes);
}

ticks.addEventListener("click", (event) => {
  const box = ticks.getBoundingClientRect();
  const ratio = (event.clientX - box.left - 6) / Math.max(1, box.width - 12);
  const time = page.info.first + ratio * (page.info.last - page.info.first);
  let best = 0;
  for (const candidate of page.events) if (candidate && candidate.ts <= time) best = candidate.index;
  select(best);
});

/** Moves the cursor to event `index` and shows the state after it. */
function select(index) {
  if (page.events.length === 0) return;
  index = Math.min(Math.max(0, index), page.events.length - 1);
  page.selected = index;
  slider.value = String(index);
  const event = page.events[index];
  document.getElementById("position").textContent = `event ${index + 1} of ${page.events.length}` + (event.seq !== null ? ` · seq ${event.seq}` : "");
  const query = event.seq !== null ? `?seq=${event.seq}` : `?index=${index}`;
  history.replaceState(null, "", location.pathname + query);
  drawTicks();
  showEvent(event);
  requestState(index);
}

/** Fetches the state at `index` and the one before it (for what changed); one request at a time,
 *  the newest selection wins while the slider is dragged. */
async function requestState(index) {
  if (page.pending) { page.pending.next = index; return; }
  page.pending = { next: null };
  try {
    const wanted = [index, index - 1].filter((k) => k >= 0 && !page.states.has(k));
    const answers = await Promise.all(wanted.map((k) => navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/state?index=${k}`)));
    wanted.forEach((k, position) => page.states.set(k, answers[position]));
    while (page.states.size > 400) page.states.delete(page.states.keys().next().value);
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

function render(index) {
  const state = page.states.get(index);
  if (!state) return;
  const previous = index > 0 ? page.states.get(index - 1) : null;
  const drawn = hierarchy.draw(state, previous, anchorOf);
  const holder = document.getElementById("hierarchy");
  holder.replaceChildren(drawn.screen);
  holder.dataset.index = String(index);
  page.shownIndex = index;
  document.getElementById("removed").textContent = drawn.removed.length
    ? `Left the hierarchy at this event: ${drawn.removed.map((item) => `${item.name} (${item.id})`).join(", ")}` : "";
}

/** The anchor of the popover presenting `id`: from the latest present or segue that showed it. */
function anchorOf(id) {
  for (let index = page.selected; index >= 0; index--) {
    const event = page.events[index] && page.events[index].event;
    if (!event || !event.anchor) continue;
    const target = event.vc || event.destination;
    const targetID = target && typeof target === "object" ? target.id : target;
    if (targetID !== id) continue;
    const anchor = event.anchor;
    const named = (value) => (value && typeof value === "object" ? value.id || JSON.stringify(value) : value);
    if (anchor.barButtonItem) return `bar button item ${named(anchor.barButtonItem)}`;
    if (anchor.sourceView) return `view ${named(anchor.sourceView)}` + (anchor.sourceRect ? ` ${JSON.stringify(anchor.sourceRect)}` : "");
  }
  return null;
}

/** The event under the cursor: what it is, what the rules made of it, what it raised. */
function showEvent(event) {
  const panel = document.getElementById("event");
  const offset = event.ts - page.info.first;
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
  const focus = (k) => (page.events[k] ? page.events[k].focus : null);
  for (let k = index + direction; k >= 0 && k < page.events.length; k += direction) {
    if (focus(k) !== focus(k - 1)) return k;
  }
  return direction > 0 ? page.events.length - 1 : 0;
}

/** Live: new events from navlogd arrive within a second through server-sent events. */
function follow() {
  const source = new EventSource(`/api/sessions/${encodeURIComponent(sessionID)}/live?after=${page.info.through}`);
  page.live = source;
  source.addEventListener("events", async () => {
    const atEnd = page.selected === page.events.length - 1;
    try {
      const timeline = await navlog.json(`/api/sessions/${encodeURIComponent(sessionID)}/events?from=${page.events.length}`);
      absorb(timeline);
      if (atEnd) select(page.events.length - 1);
      else drawTicks();
      if (timeline.ended) { source.close(); page.live = null; }
    } catch (error) {
      navlog.error(error.message);
    }
  });
}

slider.addEventListener("input", () => select(Number(slider.value)));
document.getElementById("first").addEventListener("click", () => select(0));
document.getElementById("last").addEventListener("click", () => select(page.events.length - 1));
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
  else if (event.key === "End") select(page.events.length - 1);
  else handled = false;
  if (handled) event.preventDefault();
});
window.addEventListener("resize", drawTicks);
start();
