// navlog viewer: helpers shared by every page. No framework, no build step.
// Every string that comes from events (class names, titles, ids) goes into the page through
// textContent or setAttribute, never as HTML: the page cannot run what an app recorded.
"use strict";

const navlog = {
  /** Creates an element: el("div", {class: "x", "data-id": id}, child, "text", ...). */
  el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  },

  /** The same for SVG elements. */
  svg(tag, attributes, ...children) {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null) continue;
      if (name === "text") node.textContent = String(value);
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, String(value));
    }
    for (const child of children) if (child) node.append(child);
    return node;
  },

  /** GETs a JSON endpoint; throws an Error with the server's message on failure. */
  async json(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    let body = null;
    try { body = await response.json(); } catch (_) { /* not JSON */ }
    if (!response.ok) throw new Error((body && body.error) || `${url} answered ${response.status}`);
    return body;
  },

  /** µs since the epoch as an ISO time (UTC, milliseconds). */
  time(micros) {
    if (micros === null || micros === undefined) return "";
    return new Date(Math.floor(micros / 1000)).toISOString().replace("T", " ").replace("Z", " UTC");
  },

  /** A duration in µs as 1.2s, 3m 04s, 1h 02m. */
  duration(micros) {
    if (micros === null || micros === undefined) return "";
    const seconds = micros / 1e6;
    if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)}s`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, "0")}s`;
    return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
  },

  number(value) { return Number(value).toLocaleString("en-US"); },

  /** Replaces the children of `node`. */
  fill(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
  },

  /** Shows an error above the page's content. */
  error(message) {
    const box = document.getElementById("error");
    if (!box) return;
    box.textContent = message;
    box.hidden = !message;
  },

  /** The page's header: the app's name and the pages. */
  header(active) {
    const links = [["Sessions", "/"], ["Analytics", "/analytics"], ["Storyboards", "/storyboards"]];
    const nav = navlog.el("nav", { class: "top" },
      navlog.el("a", { class: "brand", href: "/", text: "navlog" }),
      ...links.map(([name, href]) => navlog.el("a", { href, class: name === active ? "active" : null, text: name })));
    document.body.prepend(nav);
  },

  /** The kind of an event type, for its colour on the timeline. */
  eventCategory(type) {
    if (type.startsWith("session.") || type.startsWith("app.") || type === "traits.change") return "lifecycle";
    if (type.startsWith("nav.")) return "navigation";
    if (type === "present" || type === "dismiss") return "presentation";
    if (type === "segue" || type === "show" || type === "showDetail" || type === "unwind") return "intent";
    if (type.startsWith("tab.") || type.startsWith("split.") || type.startsWith("window.")) return "container";
    if (type.startsWith("child.")) return "containment";
    if (type.startsWith("vc.")) return "appearance";
    if (type.startsWith("transition.")) return "transition";
    return "other";
  },

  categories: ["lifecycle", "navigation", "presentation", "intent", "container", "containment", "appearance", "transition", "other"],
};
