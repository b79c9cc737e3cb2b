// The sessions page: filters, sorting and pages of GET /api/sessions; the state lives in the
// address (?app=…&sort=…&offset=…) so that back, forward and shared links work.
"use strict";

const columns = [
  { key: "session", label: "Session" },
  { key: "app", label: "App" },
  { key: "version", label: "Version" },
  { key: "device", label: "Device" },
  { key: "first", label: "Start" },
  { key: "duration", label: "Duration", num: true },
  { key: "events", label: "Events", num: true },
  { key: "anomalies", label: "Anomalies", num: true },
];

const form = document.getElementById("filters");
let state = readAddress();

function readAddress() {
  const query = new URLSearchParams(location.search);
  return {
    app: query.get("app") || "", version: query.get("version") || "", device: query.get("device") || "",
    idiom: query.get("idiom") || "", q: query.get("q") || "", anomalies: query.get("anomalies") === "1",
    live: query.get("live") === "1", sort: query.get("sort") || "-first",
    offset: Number(query.get("offset") || 0), limit: Number(query.get("limit") || 50),
  };
}

function queryString() {
  const query = new URLSearchParams();
  for (const name of ["app", "version", "device", "idiom", "q"]) if (state[name]) query.set(name, state[name]);
  if (state.anomalies) query.set("anomalies", "1");
  if (state.live) query.set("live", "1");
  if (state.sort !== "-first") query.set("sort", state.sort);
  if (state.offset) query.set("offset", state.offset);
  if (state.limit !== 50) query.set("limit", state.limit);
  return query.toString();
}

function header() {
  const row = document.querySelector("#sessions thead tr");
  navlog.fill(row, ...columns.map((column) => {
    const sorted = state.sort === column.key ? "sorted-asc" : state.sort === "-" + column.key ? "sorted-desc" : "";
    return navlog.el("th", {
      class: `sortable ${column.num ? "num" : ""} ${sorted}`, "data-key": column.key, text: column.label,
      onclick: () => {
        state.sort = state.sort === "-" + column.key ? column.key : "-" + column.key;
        state.offset = 0;
        load(true);
      },
    });
  }));
}

function fillFacet(name, values) {
  const select = form.elements[name];
  const current = state[name];
  navlog.fill(select, navlog.el("option", { value: "", text: "all" }),
    ...values.map((value) => navlog.el("option", { value, text: value, selected: value === current })));
}

async function load(push) {
  const query = queryString();
  if (push) history.pushState(null, "", query ? "?" + query : location.pathname);
  header();
  try {
    const api = new URLSearchParams(query);
    api.set("limit", state.limit);
    const page = await navlog.json("/api/sessions?" + api.toString());
    navlog.error("");
    for (const name of ["app", "version", "device", "idiom"]) fillFacet(name, page.facets[name]);
    document.getElementById("total").textContent = `${navlog.number(page.total)} session${page.total === 1 ? "" : "s"}`;
    const body = document.querySelector("#sessions tbody");
    navlog.fill(body, ...page.sessions.map((row) => navlog.el("tr", { "data-session": row.session },
      navlog.el("td", {}, navlog.el("a", { class: "mono", href: "/sessions/" + encodeURIComponent(row.session), text: row.session }),
        row.ended ? null : navlog.el("span", { class: "badge live", text: " live", title: "no session.end yet" })),
      navlog.el("td", { text: row.app }),
      navlog.el("td", { text: row.version }),
      navlog.el("td", { text: row.device + (row.idiom ? ` (${row.idiom})` : "") }),
      navlog.el("td", { text: navlog.time(row.first) }),
      navlog.el("td", { class: "num", text: navlog.duration(row.duration) }),
      navlog.el("td", { class: "num", text: navlog.number(row.events) }),
      navlog.el("td", { class: "num" }, row.anomalies ? navlog.el("span", { class: "badge bad", text: row.anomalies }) : "0"))));
    if (page.sessions.length === 0) body.append(navlog.el("tr", {}, navlog.el("td", { colspan: columns.length, class: "muted", text: "No session matches these filters." })));
    const last = Math.min(page.offset + page.sessions.length, page.total);
    document.getElementById("range").textContent = page.total ? `${navlog.number(page.offset + 1)}–${navlog.number(last)} of ${navlog.number(page.total)}` : "";
    document.getElementById("previous").disabled = page.offset === 0;
    document.getElementById("next").disabled = last >= page.total;
  } catch (error) {
    navlog.error(error.message);
  }
}

form.addEventListener("change", () => {
  for (const name of ["app", "version", "device", "idiom", "q"]) state[name] = form.elements[name].value;
  state.anomalies = form.elements.anomalies.checked;
  state.live = form.elements.live.checked;
  state.offset = 0;
  load(true);
});
form.addEventListener("submit", (event) => event.preventDefault());
let typing = null;
form.elements.q.addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => form.dispatchEvent(new Event("change")), 250);
});
document.getElementById("previous").addEventListener("click", () => { state.offset = Math.max(0, state.offset - state.limit); load(true); });
document.getElementById("next").addEventListener("click", () => { state.offset += state.limit; load(true); });
document.getElementById("limit").addEventListener("change", (event) => { state.limit = Number(event.target.value); state.offset = 0; load(true); });
window.addEventListener("popstate", () => { state = readAddress(); syncForm(); load(false); });

function syncForm() {
  form.elements.q.value = state.q;
  form.elements.anomalies.checked = state.anomalies;
  form.elements.live.checked = state.live;
  document.getElementById("limit").value = String(state.limit);
}

navlog.header("Sessions");
syncForm();
load(false);
