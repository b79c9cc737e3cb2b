// Analytics: GET /api/analytics answers screens, transitions, the funnel and anomalies over
// time from one scan of the same rows `navlog query` reads. Filters and funnel steps live in
// the address, so a view can be shared.
"use strict";

const form = document.getElementById("filters");
const palette = ["#2f6fec", "#c11574", "#0e9384", "#dc6803", "#7a5af8", "#d92d20", "#15b79e", "#667085", "#fdb022", "#6172f3"];
let steps = [];
let screens = [];

function readAddress() {
  const query = new URLSearchParams(location.search);
  for (const name of ["app", "version", "idiom", "since", "until"]) form.elements[name].value = query.get(name) || "";
  steps = query.getAll("step");
}

function apiQuery() {
  const query = new URLSearchParams();
  for (const name of ["app", "version", "idiom", "since", "until"]) if (form.elements[name].value) query.set(name, form.elements[name].value);
  if (steps.length >= 2) for (const step of steps) query.append("step", step);
  return query;
}

async function load(push) {
  const query = apiQuery();
  const addressQuery = new URLSearchParams(query);
  if (steps.length === 1) addressQuery.append("step", steps[0]);
  if (push) history.pushState(null, "", "?" + addressQuery.toString());
  try {
    const answer = await navlog.json("/api/analytics?" + query.toString());
    navlog.error("");
    screens = answer.screens;
    drawScreens(answer.screens);
    drawFlow(answer.transitions);
    drawSteps();
    drawFunnel(answer.funnel);
    drawAnomalies(answer.anomalies);
    const views = answer.screens.reduce((sum, row) => sum + row.views, 0);
    document.getElementById("summary").textContent = `${navlog.number(answer.screens.length)} screens · ${navlog.number(views)} views`;
  } catch (error) {
    navlog.error(error.message);
  }
}

function drawScreens(rows) {
  const most = Math.max(1, ...rows.map((row) => row.views));
  const body = document.querySelector("#screens tbody");
  navlog.fill(body, ...rows.slice(0, 30).map((row) => {
    const bar = navlog.el("div", { class: "bar" });
    bar.style.width = `${(100 * row.views) / most}%`;
    return navlog.el("tr", { "data-screen": row.screen },
      navlog.el("td", {}, row.screen, row.storyboardID ? navlog.el("span", { class: "muted", text: ` · ${row.storyboardID}` }) : null),
      navlog.el("td", { class: "num", text: navlog.number(row.views) }),
      navlog.el("td", { class: "num", text: navlog.number(row.sessions) }),
      navlog.el("td", { class: "num", text: navlog.duration(row.dwellP50) }),
      navlog.el("td", { class: "num", text: navlog.duration(row.dwellP90) }),
      navlog.el("td", { class: "num", text: navlog.duration(row.dwellTotal) }),
      navlog.el("td", { class: "bar-cell" }, bar));
  }));
  if (rows.length === 0) body.append(navlog.el("tr", {}, navlog.el("td", { colspan: 7, class: "muted", text: "No screen visits in this selection." })));
}

/** Screen → screen flows: the busiest transitions (summed over how), sources left, targets right,
 *  each link as thick as its count. */
function drawFlow(rows) {
  const holder = document.getElementById("flow");
  const pairs = new Map();
  for (const row of rows) {
    const from = row.from === null ? "(session start)" : row.from;
    const key = `${from}\u0001${row.to}`;
    pairs.set(key, (pairs.get(key) || 0) + row.count);
  }
  const top = [...pairs.entries()].sort((a, b) => b[1] - a[1]).slice(0, 24).map(([key, count]) => {
    const [from, to] = key.split("\u0001");
    return { from, to, count };
  });
  if (top.length === 0) { navlog.fill(holder, navlog.el("p", { class: "muted", text: "No transitions in this selection." })); return; }
  const total = (names, side) => names.map((name) => ({ name, count: top.filter((t) => t[side] === name).reduce((s, t) => s + t.count, 0) }))
    .sort((a, b) => b.count - a.count);
  const sources = total([...new Set(top.map((t) => t.from))], "from");
  const targets = total([...new Set(top.map((t) => t.to))], "to");
  const width = 640, rowHeight = 26, boxWidth = 190;
  const height = Math.max(sources.length, targets.length) * rowHeight + 20;
  const most = Math.max(...top.map((t) => t.count));
  const y = (list, name) => 14 + list.findIndex((item) => item.name === name) * rowHeight + 9;
  const nodes = [];
  top.forEach((link, number) => {
    const y1 = y(sources, link.from), y2 = y(targets, link.to);
    const x1 = boxWidth, x2 = width - boxWidth;
    nodes.push(navlog.svg("path", {
      d: `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`, fill: "none", stroke: palette[number % palette.length],
      "stroke-opacity": 0.55, "stroke-width": Math.max(1.5, (14 * link.count) / most), class: "flow-link", "data-from": link.from, "data-to": link.to, "data-count": link.count,
    }, navlog.svg("title", { text: `${link.from} → ${link.to}: ${link.count}` })));
  });
  const box = (item, x, anchor) => [
    navlog.svg("rect", { x, y: y(anchor === "start" ? sources : targets, item.name) - 10, width: boxWidth - 6, height: 20, rx: 4, fill: "#eef4ff", stroke: "#c7d7fe" }),
    navlog.svg("text", { x: x + 6, y: y(anchor === "start" ? sources : targets, item.name) + 4, text: `${shorten(item.name)} (${item.count})` }),
  ];
  for (const item of sources) nodes.push(...box(item, 0, "start"));
  for (const item of targets) nodes.push(...box(item, width - boxWidth + 6, "end"));
  const chart = navlog.svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "transitions between screens" }, ...nodes);
  navlog.fill(holder, chart);
}

function shorten(name) { return name.length > 26 ? name.slice(0, 25) + "…" : name; }

function drawSteps() {
  const holder = document.getElementById("steps");
  const select = navlog.el("select", { "aria-label": "add a screen to the funnel" }, navlog.el("option", { value: "", text: "+ add a screen…" }),
    ...screens.map((row) => navlog.el("option", { value: row.screen, text: row.screen })));
  select.addEventListener("change", () => { if (select.value) { steps.push(select.value); load(true); } });
  navlog.fill(holder, ...steps.map((step, index) => navlog.el("span", { class: "chip" }, `${index + 1}. ${step}`,
    navlog.el("button", { type: "button", title: "remove", text: "×", onclick: () => { steps.splice(index, 1); load(true); } }))), select);
}

function drawFunnel(rows) {
  const holder = document.getElementById("funnel");
  if (!rows) { navlog.fill(holder, navlog.el("p", { class: "muted", text: "Choose two or more screens, in order." })); return; }
  const first = Math.max(1, rows[0] ? rows[0].sessions : 1);
  navlog.fill(holder, ...rows.map((row) => {
    const bar = navlog.el("div", { class: "funnel-bar" });
    bar.style.width = `${(100 * row.sessions) / first}%`;
    return navlog.el("div", { class: "funnel-step", "data-step": row.step, "data-sessions": row.sessions },
      navlog.el("div", { text: `${row.step}. ${row.screen}` }), bar,
      navlog.el("div", { class: "muted", text: `${navlog.number(row.sessions)} · ${(row.overall * 100).toFixed(1)}%` + (row.step > 1 ? ` · ${navlog.duration(row.medianTime)}` : "") }));
  }));
}

function drawAnomalies(answer) {
  const body = document.querySelector("#anomaly-codes tbody");
  navlog.fill(body, ...answer.codes.map((row, index) => {
    const swatch = navlog.el("i", { class: "swatch" });
    swatch.style.background = palette[index % palette.length];
    return navlog.el("tr", { "data-code": row.code },
      navlog.el("td", {}, swatch, " ", row.code, row.fatal ? navlog.el("span", { class: "badge fatal", text: " fatal " }) : null),
      navlog.el("td", { text: row.name }), navlog.el("td", { class: "num", text: navlog.number(row.count) }), navlog.el("td", { class: "num", text: navlog.number(row.sessions) }));
  }));
  const holder = document.getElementById("anomaly-chart");
  if (answer.codes.length === 0) { navlog.fill(holder, navlog.el("p", { class: "muted", text: "No anomalies in this selection." })); return; }
  const width = 640, height = 160, left = 34, bottom = 22;
  const buckets = answer.buckets;
  const most = Math.max(1, ...buckets.map((b) => Object.values(b.counts).reduce((s, c) => s + c, 0)));
  const barWidth = (width - left) / buckets.length;
  const nodes = [navlog.svg("text", { x: 0, y: 12, text: String(most) }), navlog.svg("text", { x: 0, y: height - bottom, text: "0" })];
  buckets.forEach((bucket, index) => {
    let top = height - bottom;
    answer.codes.forEach((code, codeIndex) => {
      const count = bucket.counts[code.code] || 0;
      if (!count) return;
      const h = ((height - bottom - 8) * count) / most;
      top -= h;
      nodes.push(navlog.svg("rect", { x: left + index * barWidth + 1, y: top, width: Math.max(1, barWidth - 2), height: h, fill: palette[codeIndex % palette.length] },
        navlog.svg("title", { text: `${code.code}: ${count} between ${navlog.time(bucket.start)} and ${navlog.time(bucket.end)}` })));
    });
  });
  nodes.push(navlog.svg("text", { x: left, y: height - 4, text: navlog.time(buckets[0].start) }));
  nodes.push(navlog.svg("text", { x: width, y: height - 4, "text-anchor": "end", text: navlog.time(buckets[buckets.length - 1].end) }));
  navlog.fill(holder, navlog.svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "anomalies over time" }, ...nodes));
}

form.addEventListener("submit", (event) => { event.preventDefault(); load(true); });
form.elements.idiom.addEventListener("change", () => load(true));
window.addEventListener("popstate", () => { readAddress(); load(false); });
navlog.header("Analytics");
readAddress();
load(false);
