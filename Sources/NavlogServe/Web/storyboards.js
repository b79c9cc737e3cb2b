// Storyboards: each storyboard's scenes and segues as a graph, coloured by what recorded
// sessions covered (GET /api/storyboards: the numbers of `navlog storyboard coverage`).
"use strict";

async function start() {
  navlog.header("Storyboards");
  let answer;
  try {
    answer = await navlog.json("/api/storyboards");
  } catch (error) {
    navlog.error(error.message);
    return;
  }
  if (answer.note) navlog.error(answer.note);
  const scenes = answer.storyboards.flatMap((s) => s.scenes);
  const segues = answer.storyboards.flatMap((s) => s.segues);
  document.getElementById("summary").textContent =
    `${scenes.filter((s) => s.sessions > 0).length} of ${scenes.length} scenes reached · ${segues.filter((s) => s.uses > 0).length} of ${segues.length} segues taken · ${navlog.number(answer.eventsRead)} events read`;
  const holder = document.getElementById("graphs");
  for (const storyboard of answer.storyboards) holder.append(graph(storyboard));
  const body = document.querySelector("#unexpected tbody");
  navlog.fill(body, ...answer.unexpected.map((row) => navlog.el("tr", {},
    navlog.el("td", { text: row.from }), navlog.el("td", { text: row.to }), navlog.el("td", { text: row.how }),
    navlog.el("td", { class: "num", text: navlog.number(row.count) }),
    navlog.el("td", {}, navlog.el("a", { href: `/sessions/${encodeURIComponent(row.session)}${row.seq !== null ? `?seq=${row.seq}` : ""}`, text: `${row.session.slice(0, 13)}… seq ${row.seq}` })))));
  if (answer.unexpected.length === 0) body.append(navlog.el("tr", {}, navlog.el("td", { colspan: 5, class: "muted", text: "Every recorded transition is a segue of the storyboards." })));
}

/** Scenes in columns by distance from the initial scene along segues; segues as arrows. */
function graph(storyboard) {
  const byID = new Map(storyboard.scenes.map((scene) => [scene.id, scene]));
  const edges = storyboard.segues.filter((segue) => segue.destination && byID.has(segue.source) && byID.has(segue.destination));
  const depth = new Map();
  const roots = [storyboard.initialScene, ...storyboard.scenes.map((s) => s.id)].filter((id) => id && byID.has(id));
  for (const root of roots) {
    if (depth.has(root)) continue;
    depth.set(root, depth.size === 0 ? 0 : Math.max(0, ...depth.values()) + 1);
    const queue = [root];
    while (queue.length) {
      const id = queue.shift();
      for (const edge of edges) if (edge.source === id && !depth.has(edge.destination)) { depth.set(edge.destination, depth.get(id) + 1); queue.push(edge.destination); }
    }
  }
  const columns = new Map();
  for (const scene of storyboard.scenes) {
    const d = depth.get(scene.id) || 0;
    if (!columns.has(d)) columns.set(d, []);
    columns.get(d).push(scene);
  }
  const boxWidth = 170, boxHeight = 40, gapX = 70, gapY = 16;
  const position = new Map();
  const order = [...columns.keys()].sort((a, b) => a - b);
  order.forEach((d, column) => columns.get(d).forEach((scene, row) => position.set(scene.id, { x: 10 + column * (boxWidth + gapX), y: 10 + row * (boxHeight + gapY) })));
  const width = 20 + order.length * (boxWidth + gapX);
  const height = 20 + Math.max(...[...columns.values()].map((list) => list.length)) * (boxHeight + gapY);
  const nodes = [navlog.svg("defs", {}, navlog.svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    navlog.svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#667085" })))];
  for (const edge of edges) {
    const a = position.get(edge.source), b = position.get(edge.destination);
    const x1 = a.x + boxWidth, y1 = a.y + boxHeight / 2, x2 = b.x, y2 = b.y + boxHeight / 2;
    const back = x2 <= x1;
    const d = back ? `M${a.x + boxWidth / 2},${a.y + boxHeight} C${a.x + boxWidth / 2},${a.y + boxHeight + 40} ${b.x + boxWidth / 2},${b.y + boxHeight + 40} ${b.x + boxWidth / 2},${b.y + boxHeight}`
      : `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
    nodes.push(navlog.svg("path", { d, class: edge.uses > 0 ? "segue used" : "segue unused", "marker-end": "url(#arrow)", "data-segue": edge.id, "data-uses": edge.uses },
      navlog.svg("title", { text: `${edge.kind}${edge.relationship ? " " + edge.relationship : ""}${edge.identifier ? ` “${edge.identifier}”` : ""}: taken ${edge.uses} time(s)` })));
    if (edge.uses > 0 && !back) nodes.push(navlog.svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 3, "text-anchor": "middle", class: "segue-count", text: navlog.number(edge.uses) }));
  }
  for (const scene of storyboard.scenes) {
    const p = position.get(scene.id);
    nodes.push(navlog.svg("g", { class: scene.sessions > 0 ? "scene covered" : "scene uncovered", "data-scene": scene.id, "data-class": scene.class, "data-sessions": scene.sessions },
      navlog.svg("rect", { x: p.x, y: p.y, width: boxWidth, height: boxHeight, rx: 6 }),
      navlog.svg("text", { x: p.x + 8, y: p.y + 16, class: "scene-class", text: scene.class.length > 24 ? scene.class.slice(0, 23) + "…" : scene.class }),
      navlog.svg("text", { x: p.x + 8, y: p.y + 31, class: "scene-info", text: `${scene.kind}${scene.sbid ? " · " + scene.sbid : ""} · ${scene.sessions} sessions` }),
      navlog.svg("title", { text: `${scene.class}${scene.title ? ` “${scene.title}”` : ""}: focused ${scene.visits} times in ${scene.sessions} sessions` })));
  }
  return navlog.el("section", { class: "panel graph", "data-storyboard": storyboard.name },
    navlog.el("h2", { text: `${storyboard.name}.storyboard` }),
    navlog.svg("svg", { viewBox: `0 0 ${width} ${height + 40}`, role: "img", "aria-label": `${storyboard.name} storyboard coverage` }, ...nodes));
}

start();
