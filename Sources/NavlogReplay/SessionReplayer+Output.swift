import NavlogEvents
import NavlogJSON

/// The replay output formats: JSON exactly as events.md "Replay output" shows it, a readable
/// Unicode tree, and Graphviz dot.
extension SessionReplayer {
    // MARK: JSON

    /// Appends the state as one JSON object (events.md "Replay output"; `schemas/replay-output.schema.json`).
    public func appendJSON(session: String, to output: inout [UInt8]) {
        JSONWriter.appending(to: &output) { json in appendState(session: session, to: &json) }
    }

    /// Appends one anomaly as a JSON object (the `anomaly` definition of the replay schema).
    public func appendAnomalyJSON(_ anomaly: Anomaly, session: String, to output: inout [UInt8]) {
        JSONWriter.appending(to: &output) { json in appendAnomaly(anomaly, session: session, to: &json) }
    }

    private func appendState(session: String, to json: inout JSONWriter) {
        json.raw("{\"session\":")
        json.string(session)
        json.raw(",\"at\":{\"seq\":")
        json.integer(position?.sequence)
        json.member("ts", position?.timestamp ?? 0)
        json.member("lsn", position?.lsn)
        json.member("index", position?.index ?? 0)
        json.raw("},\"traits\":{\"h\":")
        json.string(horizontal?.description)
        json.member("v", vertical?.description)
        json.raw("}")
        json.member("foreground", foreground)
        json.key("windows")
        json.array(hierarchy.windows.lazy.filter { $0.root >= 0 }) { json, window in
            json.raw("{\"id\":")
            json.string(window.name)
            json.key("root")
            appendNode(window.root, slot: false, to: &json, depth: 0)
            json.raw("}")
        }
        json.member("focus", focus.map { controllers[$0].id })
        json.key("focusPath")
        json.array(focusPath) { json, handle in json.string(controllers[handle].id) }
        json.key("visible")
        json.array(visible) { json, handle in json.string(controllers[handle].id) }
        json.key("dwell")
        json.raw("{")
        var firstDwell = true
        for (handle, micros) in dwell.enumerated() where micros > 0 {
            json.key(escaping: controllers[ControllerHandle(index: Int32(handle))].id, first: firstDwell)
            firstDwell = false
            json.integer(micros)
        }
        json.raw("}")
        // What the session records (E1–E5): why a misuse that needs other callbacks is not reported.
        json.key("records")
        json.array(evidence.names) { json, name in json.string(name) }
        // E4: events the log stored after a higher seq, replayed in seq order.
        json.member("lateEvents", lateEvents)
        // E6, E7: the gestures found cancelled, and what navigation calls alone leave open.
        json.member("cancelledGestures", removalsCancelled)
        // Of them, those a count proved while another removal fitted as well: a choice (E7).
        json.member("cancelledGesturesChosen", chosenRollbackCount)
        json.member("unprovenRemovals", unprovenRemovals.count)
        json.key("anomalies")
        json.array(anomalies) { json, anomaly in appendAnomaly(anomaly, session: session, to: &json) }
        json.raw("}")
    }

    private func appendAnomaly(_ anomaly: Anomaly, session: String, to json: inout JSONWriter) {
        json.raw("{\"code\":")
        json.string(anomaly.code.code)
        json.member("name", anomaly.code.name)
        json.member("rule", anomaly.rule)
        json.member("fatal", anomaly.isFatal)
        json.raw(",\"event\":{\"session\":")
        json.string(session)
        json.member("seq", anomaly.event.sequence)
        json.member("ts", anomaly.event.timestamp)
        json.member("lsn", anomaly.event.lsn)
        json.raw("}")
        json.key("controllers")
        json.array(anomaly.controllers) { json, handle in json.string(controllers[handle].id) }
        json.member("message", anomaly.message)
        json.raw("}")
    }

    private func appendNode(_ handle: Int32, slot: Bool, to json: inout JSONWriter, depth: Int) {
        let controller = controllers[ControllerHandle(index: handle)]
        let node = hierarchy[handle]
        json.raw("{\"id\":")
        json.string(controller.id)
        json.member("class", controller.className ?? "")
        json.member("kind", controller.kind.rawValue)
        if let sbid = controller.storyboardID { json.member("sbid", sbid) }
        if let title = controller.title { json.member("title", title) }
        if slot, node.slot >= 0 { json.member("slot", slotName(node.slot)) }
        // Bounded depth: a hierarchy is a tree (place() refuses cycles), this only guards damage.
        guard depth <= hierarchy.nodes.count else {
            json.raw("}")
            return
        }
        func list(_ key: StaticString, _ handles: [Int32], slots: Bool = false) {
            json.key(key)
            json.array(handles) { json, item in appendNode(item, slot: slots, to: &json, depth: depth + 1) }
        }
        switch controller.kind {
        case .navigation:
            list("stack", node.items)
        case .tab:
            list("tabs", node.items)
            json.member("selected", node.selected)
        case .split:
            json.key("columns")
            json.raw("{")
            var first = true
            let columns: [(StaticString, Int32)] = [("primary", node.primary), ("secondary", node.secondary), ("supplementary", node.supplementary)]
            for (key, column) in columns where column >= 0 {
                json.key(key, first: first)
                first = false
                appendNode(column, slot: false, to: &json, depth: depth + 1)
            }
            json.raw("}")
            json.member("collapsed", node.collapsed)
        default:
            break
        }
        if !node.children.isEmpty { list("children", node.children, slots: true) }
        if node.presented >= 0 {
            let presented = hierarchy[node.presented]
            json.key("presented")
            json.raw("{\"style\":")
            json.string(presented.requestedStyle.name)
            json.member("effectiveStyle", effectiveStyle(of: node.presented).name)
            json.key("node")
            appendNode(node.presented, slot: false, to: &json, depth: depth + 1)
            json.raw("}")
        }
        json.raw("}")
    }

    /// R4: the effective style of the presented controller `handle` in the current traits.
    public func effectiveStyle(of handle: Int32) -> PresentationStyle {
        hierarchy[handle].requestedStyle.adapted(horizontallyCompact: horizontal == .compact)
    }

    /// The name of slot reference `slot`.
    func slotName(_ slot: Int32) -> String {
        slotNames.withString(UInt32(slot)) { String(decoding: $0, as: UTF8.self) }
    }

    /// The id of the controller `handle` names.
    public func id(of handle: ControllerHandle) -> String { controllers[handle].id }

    // MARK: Tree

    /// A readable Unicode tree of the state: stack order, the selected tab, columns, children with
    /// slots, presentations with their effective style; the focused screen marked `◉`, other
    /// visible controllers `●`, hidden ones `○`; anomalies listed below.
    public func tree(session: String) -> String {
        let focus = self.focus?.index ?? -1
        let visible = Set(self.visible.map(\.index))
        var lines: [String] = []
        var header = "session \(session)"
        if let position {
            header += " · event \(position.index)"
            if let sequence = position.sequence { header += " (seq \(sequence))" }
            header += " · \(RFC3339.format(microseconds: position.timestamp))"
        }
        header += " · traits h=\(horizontal?.description ?? "?") v=\(vertical?.description ?? "?") · \(foreground ? "foreground" : "background")"
        lines.append(header)
        func describe(_ handle: Int32, _ label: String) -> String {
            let controller = controllers[ControllerHandle(index: handle)]
            let marker = handle == focus ? "◉" : visible.contains(handle) ? "●" : "○"
            var text = "\(marker) \(label)\(controller.id) \(controller.className ?? "?")"
            if controller.kind != .plain { text += " [\(controller.kind.rawValue)]" }
            if let title = controller.title { text += " “\(title)”" }
            let node = hierarchy[handle]
            if controller.kind == .split { text += node.collapsed ? " collapsed" : " expanded" }
            if handle == focus { text += "  ← focus" }
            return text
        }
        func walk(_ handle: Int32, label: String, prefix: String, last: Bool, depth: Int) {
            guard depth <= hierarchy.nodes.count else { return }
            lines.append(prefix + (last ? "└─ " : "├─ ") + describe(handle, label))
            let childPrefix = prefix + (last ? "   " : "│  ")
            let node = hierarchy[handle]
            var entries: [(Int32, String)] = []
            switch controller(handle).kind {
            case .navigation:
                for (index, item) in node.items.enumerated() { entries.append((item, "[\(index)] ")) }
            case .tab:
                for (index, item) in node.items.enumerated() {
                    entries.append((item, index == Int(node.selected) ? "tab \(index) ✓ " : "tab \(index) "))
                }
            case .split:
                for (name, column) in [("primary", node.primary), ("supplementary", node.supplementary), ("secondary", node.secondary)]
                where column >= 0 {
                    entries.append((column, "\(name): "))
                }
            default: break
            }
            for child in node.children {
                let slot = hierarchy[child].slot
                entries.append((child, slot >= 0 ? "child in \(slotName(slot)): " : "child: "))
            }
            if node.presented >= 0 {
                let style = hierarchy[node.presented].requestedStyle
                let effective = effectiveStyle(of: node.presented)
                let styleText = style == effective ? style.name : "\(style.name) → \(effective.name)"
                entries.append((node.presented, "presents (\(styleText)) "))
            }
            for (index, entry) in entries.enumerated() {
                walk(entry.0, label: entry.1, prefix: childPrefix, last: index == entries.count - 1, depth: depth + 1)
            }
        }
        let windows = hierarchy.windows.filter { $0.root >= 0 }
        if windows.isEmpty { lines.append("(no window has a root view controller yet)") }
        for window in windows {
            lines.append("window \(window.name)")
            walk(window.root, label: "", prefix: "", last: true, depth: 0)
        }
        let dwelt = dwell.enumerated().filter { $0.element > 0 }.sorted { ($1.element, $0.offset) < ($0.element, $1.offset) }
        if !dwelt.isEmpty {
            let parts = dwelt.prefix(8).map { "\(controllers[ControllerHandle(index: Int32($0.offset))].id) \(Self.seconds($0.element))" }
            lines.append("dwell (focused in the foreground): " + parts.joined(separator: ", ") + (dwelt.count > 8 ? ", …" : ""))
        }
        // E1–E5: what the session records decides which misuses can be proven (docs/anomalies.md).
        lines.append("records: navigation calls" + evidence.names.map { ", " + $0 }.joined())
        if lateEvents > 0 {
            lines.append("late events: \(lateEvents) stored after a higher seq, replayed in seq order (E4)")
        }
        if removalsCancelled > 0 {
            lines.append("cancelled gestures: \(removalsCancelled) pop or dismissal the user began and cancelled, rolled back at its own event (E6, E7)")
            let chosen = chosenRollbackCount
            if chosen > 0 {
                lines.append(
                    "  \(chosen) of them chosen: a pop past the root (or a dismissal with nothing left to dismiss) proves that one of several removals was cancelled, not which; the most recent was rolled back (E7)"
                )
            }
        }
        if !unprovenRemovals.isEmpty {
            lines.append(
                "unproven: \(unprovenRemovals.count) animated pop or dismissal taken as done; a swipe the user cancelled looks the same in navigation calls alone (E7)")
        }
        if anomalies.isEmpty {
            lines.append("no anomalies")
        } else {
            lines.append("anomalies (\(anomalies.count)):")
            for anomaly in anomalies {
                var at = "event \(anomaly.event.index)"
                if let sequence = anomaly.event.sequence { at += " seq \(sequence)" }
                let rule = anomaly.rule.map { " \($0)" } ?? ""
                lines.append("  \(anomaly.code.code) \(anomaly.code.name)\(rule)\(anomaly.isFatal ? " FATAL" : "") at \(at): \(anomaly.message)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// µs as seconds with one decimal (`12.5s`).
    static func seconds(_ micros: Int64) -> String {
        let tenths = (micros + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)s"
    }

    private func controller(_ handle: Int32) -> ControllerTable.Controller { controllers[ControllerHandle(index: handle)] }

    // MARK: Graphviz

    /// The hierarchy as a Graphviz digraph: containment edges solid (labelled with stack
    /// position, tab, column or slot), presentations dashed with their effective style; the
    /// focused screen bold, visible controllers filled.
    public func dot(session: String) -> String {
        let focus = self.focus?.index ?? -1
        let visible = Set(self.visible.map(\.index))
        func quoted(_ text: String) -> String {
            "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        }
        var lines = ["digraph navlog {", "  label=\(quoted("session \(session)"));", "  node [shape=box, fontname=\"Helvetica\"];"]
        var seen = Set<Int32>()
        func walk(_ handle: Int32, depth: Int) {
            guard depth <= hierarchy.nodes.count, seen.insert(handle).inserted else { return }
            let controller = controller(handle)
            // `\n` in a dot label is a line break: join the escaped parts with it.
            let label = quoted(controller.id).dropLast() + "\\n" + quoted(controller.className ?? "?").dropFirst()
            var attributes = ["label=\(label)"]
            if handle == focus {
                attributes.append("style=\"filled,bold\", fillcolor=\"gold\", penwidth=2")
            } else if visible.contains(handle) {
                attributes.append("style=filled, fillcolor=\"lightblue\"")
            }
            lines.append("  \(quoted(controller.id)) [\(attributes.joined(separator: ", "))];")
            let node = hierarchy[handle]
            var edges: [(Int32, String, Bool)] = []
            for (index, item) in node.items.enumerated() {
                let label = controller.kind == .tab ? (index == Int(node.selected) ? "tab \(index) ✓" : "tab \(index)") : "\(index)"
                edges.append((item, label, false))
            }
            for (name, column) in [("primary", node.primary), ("supplementary", node.supplementary), ("secondary", node.secondary)] where column >= 0 {
                edges.append((column, name, false))
            }
            for child in node.children { edges.append((child, hierarchy[child].slot >= 0 ? slotName(hierarchy[child].slot) : "child", false)) }
            if node.presented >= 0 { edges.append((node.presented, effectiveStyle(of: node.presented).name, true)) }
            for (target, label, presentation) in edges {
                let style = presentation ? ", style=dashed" : ""
                lines.append("  \(quoted(controller.id)) -> \(quoted(self.controller(target).id)) [label=\(quoted(label))\(style)];")
                walk(target, depth: depth + 1)
            }
        }
        for window in hierarchy.windows where window.root >= 0 {
            lines.append("  \(quoted("window " + window.name)) [shape=ellipse];")
            lines.append("  \(quoted("window " + window.name)) -> \(quoted(controller(window.root).id));")
            walk(window.root, depth: 0)
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// `self` with every `target` replaced (no Foundation needed).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}

extension SessionReplayer {
    /// What an intent resolved into, in words, naming controllers by id: the text of `navlog
    /// timeline` and of the web viewer.
    public func describe(_ resolution: Resolution) -> String {
        func id(_ handle: ControllerHandle) -> String { self.id(of: handle) }
        switch resolution {
        case .push(let container, let vc): return "push \(id(vc)) onto \(id(container))"
        case .present(let presenter, let vc, let style, let effective):
            return "present \(id(vc)) from \(id(presenter)) (\(style == effective ? style.name : "\(style.name) → \(effective.name)"))"
        case .setSecondary(let container, let vc): return "\(id(vc)) becomes the secondary column of \(id(container))"
        case .addChild(let container, let vc, let slot): return "embed \(id(vc)) in \(id(container))\(slot.map { " (\($0))" } ?? "")"
        case .setRoot(let container, let vc): return "\(id(vc)) becomes the root of \(id(container))"
        case .appendTab(let container, let vc): return "\(id(vc)) becomes a tab of \(id(container))"
        case .setColumn(let container, let column, let vc): return "\(id(vc)) becomes the \(column) column of \(id(container))"
        case .unwind(let destination): return "unwind to \(id(destination))"
        case .custom: return "custom segue (no hierarchy change)"
        case .cancelled: return "cancelled by shouldPerformSegue"
        case .none: return "nothing yet (\(resolution.action))"
        case .ignored: return "ignored (see the anomaly)"
        }
    }
}
