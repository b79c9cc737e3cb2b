// Draws a replay state (the JSON of `navlog replay --format json`) as nested frames, the way the
// app looked: the window, its tab bar with the selected tab, navigation stacks with their back
// stack, split columns, embedded children in their slots, and presented controllers stacked
// above with their effective style. Every controller of the state is one `.frame[data-id]`
// element (hidden ones drawn small and dimmed), so the drawing can be checked against the state.
"use strict";

const hierarchy = {
  /**
   * @param state the replay state after the selected event
   * @param previous the state after the event before it (null for the first): what changed is marked
   * @param anchorOf (id) -> text describing a popover's anchor, or null
   */
  draw(state, previous, anchorOf) {
    const visible = new Set(state.visible || []);
    const current = hierarchy.placements(state);
    const before = previous ? hierarchy.placements(previous) : null;
    const layers = [];
    const context = { state, visible, current, before, layers, anchorOf };
    const screen = navlog.el("div", { class: "screen", "data-session": state.session, "data-index": state.at ? state.at.index : "" });
    for (const window of state.windows || []) {
      screen.append(navlog.el("div", { class: "window-label", text: `window ${window.id}${state.foreground === false ? " · app in the background" : ""}` }));
      const base = navlog.el("div", { class: "layer-base", "data-window": window.id });
      base.append(hierarchy.node(window.root, context, { role: "root" }));
      screen.append(base);
    }
    if (!state.windows || state.windows.length === 0) {
      screen.append(navlog.el("div", { class: "muted", text: "No window has a root view controller yet." }));
    }
    // Presented controllers, each a layer above the previous one.
    // (A presented controller may present again: the loop meets the layers it adds.)
    for (let depth = 0; depth < layers.length; depth++) {
      const layer = layers[depth];
      const style = layer.presentation.effectiveStyle;
      const kind = layer.presentation.node.kind === "alert" ? "alert" : style;
      const box = navlog.el("div", { class: `layer style-${kind}`, "data-depth": depth });
      // Through the CSS object model: the content security policy allows no inline style attributes.
      box.style.zIndex = String(10 + depth);
      box.style.marginTop = `${depth * 14}px`;
      if (style !== "overFullScreen" && style !== "overCurrentContext" && style !== "popover") box.append(navlog.el("div", { class: "dim" }));
      const label = style === layer.presentation.style ? style : `${layer.presentation.style} → ${style}`;
      const holder = navlog.el("div", { class: "presented" },
        navlog.el("span", { class: "presented-label", text: `presented by ${layer.presenterClass} · ${label}` }));
      const anchor = style === "popover" && anchorOf ? anchorOf(layer.presentation.node.id) : null;
      if (anchor) holder.append(navlog.el("span", { class: "anchor-label", text: `anchored to ${anchor}` }));
      holder.append(hierarchy.node(layer.presentation.node, context, {
        role: "presented", presentedBy: layer.presenter, style: layer.presentation.style, effectiveStyle: style,
      }));
      box.append(holder);
      screen.append(box);
    }
    const removed = before ? [...before.keys()].filter((id) => !current.has(id)) : [];
    return { screen, removed: removed.map((id) => ({ id, name: before.get(id).name })) };
  },

  /** Where each controller sits: id -> {key: "parent|role|position", name}. */
  placements(state) {
    const map = new Map();
    const visit = (node, parent, role, position) => {
      if (!node) return;
      map.set(node.id, { key: `${parent}|${role}|${position}`, name: node.class || node.id });
      (node.stack || []).forEach((child, index) => visit(child, node.id, "stack", index));
      (node.tabs || []).forEach((child, index) => visit(child, node.id, "tab", index));
      for (const column of ["primary", "supplementary", "secondary"]) if (node.columns && node.columns[column]) visit(node.columns[column], node.id, "column-" + column, 0);
      (node.children || []).forEach((child, index) => visit(child, node.id, "child", child.slot || index));
      if (node.presented) visit(node.presented.node, node.id, "presented", 0);
    };
    for (const window of state.windows || []) visit(window.root, "window:" + window.id, "root", 0);
    return map;
  },

  /** One controller as a frame; `place` says how its parent holds it. */
  node(node, context, place, compact) {
    const focused = node.id === context.state.focus;
    const shown = context.visible.has(node.id);
    const classes = ["frame", `kind-${node.kind}`];
    if (compact) classes.push("compact");
    if (!shown) classes.push("hidden-vc");
    if (focused) classes.push("focused");
    let change = null;
    if (context.before) {
      const was = context.before.get(node.id);
      const now = context.current.get(node.id);
      if (!was) change = "added";
      else if (now && was.key !== now.key) change = "moved";
    }
    if (change) classes.push("changed-" + change);
    const frame = navlog.el("div", {
      class: classes.join(" "), "data-id": node.id, "data-class": node.class || "", "data-kind": node.kind, "data-role": place.role,
      "data-position": place.position, "data-slot": place.slot, "data-presented-by": place.presentedBy, "data-style": place.style,
      "data-effective-style": place.effectiveStyle, "data-selected": node.tabs ? node.selected : null, "data-visible": shown ? "true" : "false",
      "data-focused": focused ? "true" : null, "data-change": change, "data-collapsed": node.columns ? String(!!node.collapsed) : null,
    });
    const label = navlog.el("div", { class: "label" });
    if (place.role === "stack") label.append(navlog.el("span", { class: "kind", text: `[${place.position}]` }));
    if (place.role === "tab") label.append(navlog.el("span", { class: "kind", text: `tab ${place.position}` }));
    if (place.role && place.role.startsWith("column-")) label.append(navlog.el("span", { class: "kind", text: place.role.slice(7) }));
    label.append(navlog.el("span", { class: "cls", text: node.class || "(unknown class)" }));
    if (node.title) label.append(navlog.el("span", { class: "title", text: `“${node.title}”` }));
    if (node.kind !== "plain") label.append(navlog.el("span", { class: "kind", text: node.kind }));
    if (focused) label.append(navlog.el("span", { class: "badge live", text: "focus" }));
    if (change) label.append(navlog.el("span", { class: `change-tag ${change}`, text: change === "added" ? "new" : "moved" }));
    label.append(navlog.el("span", { class: "kind mono", text: node.id }));
    frame.append(label);
    const body = navlog.el("div", { class: "body" });

    if (node.stack) {
      const top = node.stack[node.stack.length - 1];
      const back = node.stack.length > 1 ? node.stack[node.stack.length - 2] : null;
      frame.insertBefore(navlog.el("div", { class: "navbar" },
        back ? navlog.el("span", { class: "back", text: `‹ ${back.title || back.class}` }) : null,
        navlog.el("strong", { text: top ? (top.title || top.class) : "(empty stack)" })), null);
      if (node.stack.length > 1) {
        const cards = navlog.el("div", { class: "backstack" });
        node.stack.slice(0, -1).forEach((item, index) => cards.append(hierarchy.node(item, context, { role: "stack", position: index }, true)));
        body.append(navlog.el("div", { class: "slot-label", text: `back stack (${node.stack.length - 1})` }), cards);
      }
      if (top) body.append(hierarchy.node(top, context, { role: "stack", position: node.stack.length - 1 }, compact));
    }
    let otherTabs = null;
    if (node.tabs) {
      const selected = node.selected;
      const chosen = node.tabs[selected];
      if (chosen) body.append(hierarchy.node(chosen, context, { role: "tab", position: selected }, compact));
      const others = node.tabs.map((tab, index) => ({ tab, index })).filter((item) => item.index !== selected);
      if (others.length) {
        otherTabs = navlog.el("div", { class: "backstack other-tabs" }, navlog.el("div", { class: "slot-label", text: "other tabs (not on screen)" }));
        for (const item of others) otherTabs.append(hierarchy.node(item.tab, context, { role: "tab", position: item.index }, true));
      }
    }
    if (node.columns) {
      const columns = navlog.el("div", { class: "columns" });
      for (const column of ["primary", "supplementary", "secondary"]) {
        const child = node.columns[column];
        if (!child) continue;
        columns.append(navlog.el("div", { class: `column ${column}` }, hierarchy.node(child, context, { role: "column-" + column }, compact)));
      }
      if (node.collapsed) body.append(navlog.el("div", { class: "slot-label", text: "collapsed (compact width): the columns show as one stack" }));
      body.append(columns);
    }
    for (const [index, child] of (node.children || []).entries()) {
      body.append(navlog.el("div", { class: "slot" },
        navlog.el("div", { class: "slot-label", text: child.slot ? `container view ${child.slot}` : "child" }),
        hierarchy.node(child, context, { role: "child", position: index, slot: child.slot }, compact)));
    }
    if (!node.stack && !node.tabs && !node.columns && !(node.children || []).length) {
      body.append(navlog.el("div", { class: "muted", text: node.sbid ? `storyboard id ${node.sbid}` : " " }));
    }
    frame.append(body);
    if (node.tabs) {
      frame.append(navlog.el("div", { class: "tabbar" }, ...node.tabs.map((tab, index) => navlog.el("div", {
        class: "tab" + (index === node.selected ? " selected" : ""), text: hierarchy.tabName(tab),
      }))));
      if (otherTabs) frame.append(otherTabs);
    }
    if (node.presented) context.layers.push({ presenter: node.id, presenterClass: node.class || node.id, presentation: node.presented });
    return frame;
  },

  /** A tab's name: its title, or its root's, or its class. */
  tabName(tab) {
    if (tab.title) return tab.title;
    if (tab.stack && tab.stack[0]) return tab.stack[0].title || tab.stack[0].class;
    return tab.class || tab.id;
  },
};
