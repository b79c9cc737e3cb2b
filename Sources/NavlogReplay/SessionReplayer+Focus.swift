extension SessionReplayer {
    /// The window the user looks at: `main` when it has a root, else the first window that has one.
    public var focusedWindow: Hierarchy.Window? { focusedWindowIndex.map { hierarchy.windows[$0] } }

    /// Where ``focusedWindow`` is in the windows: one pass, no window copied (F1 after every event).
    private var focusedWindowIndex: Int? {
        var first: Int?
        for index in hierarchy.windows.indices where hierarchy.windows[index].root >= 0 {
            if hierarchy.windows[index].name == "main" { return index }
            if first == nil { first = index }
        }
        return first
    }

    /// F2: the controllers F1 visits from the window root down to the focused screen,
    /// presentations included. Empty when no window has a root.
    public var focusPath: [ControllerHandle] {
        var path: [ControllerHandle] = []
        forEachOnFocusPath { path.append(ControllerHandle(index: $0)) }
        return path
    }

    /// Calls `visit` with each controller of ``focusPath``, in order, without building it (the
    /// replayer walks it at each change of focus).
    func forEachOnFocusPath(_ visit: (Int32) -> Void) {
        guard let window = focusedWindow else { return }
        var current = window.root
        var steps = 0
        while current >= 0, steps <= hierarchy.nodes.count {
            steps += 1
            visit(current)
            let node = hierarchy[current]
            // F1: a presentation covers its presenter's content.
            if node.presented >= 0 {
                current = node.presented
                continue
            }
            switch kind(of: current) {
            case .navigation:
                current = node.items.last ?? -1
            case .tab:
                current = node.items.indices.contains(Int(node.selected)) ? node.items[Int(node.selected)] : -1
            case .split:
                if node.collapsed {
                    current = node.primary
                } else {
                    current = node.secondary >= 0 ? node.secondary : node.primary
                }
            default:
                // F1: a screen is focused unless one of its embedded children (any depth) presents
                // (a currentContext presentation inside a container view). The chain is built
                // only when there is one.
                guard !node.children.isEmpty, presentedBelowEmbeddedChildren(of: current, depth: 0) >= 0, let chain = presentingDescendant(of: current)
                else { return }
                for handle in chain.dropLast() { visit(handle) }
                current = chain.last!
            }
        }
    }

    /// F1: the focused screen, nil when no window has a root or the descent ends at a
    /// container whose content is not set yet (an empty stack, a tab bar with no tabs, a split
    /// view with no columns): a container is never a screen of its own (E3).
    public var focus: ControllerHandle? {
        guard let last = focusPath.last, !isContainer(last.index) else { return nil }
        return last
    }

    /// Whether `handle` is a navigation controller, tab bar or split view (content comes from its items).
    func isContainer(_ handle: Int32) -> Bool {
        switch kind(of: handle) {
        case .navigation, .tab, .split: true
        default: false
        }
    }

    /// F1 as the engine keeps it after every event (for dwell): no walk, no allocation.
    public var focusedScreenHandle: ControllerHandle? { focusedScreen >= 0 ? ControllerHandle(index: focusedScreen) : nil }

    /// F1 without building the path (computed after every event for dwell, F4): -1 for none.
    func focusedHandle() -> Int32 {
        guard let window = focusedWindowIndex else { return -1 }
        var current = hierarchy.windows[window].root
        var steps = 0
        while current >= 0, steps <= hierarchy.nodes.count {
            steps += 1
            // Fields are read in place: copying a node would retain its arrays, after every event.
            let index = Int(current)
            var next: Int32 = -1
            if hierarchy.nodes[index].presented >= 0 {
                next = hierarchy.nodes[index].presented
            } else {
                switch kind(of: current) {
                case .navigation: next = hierarchy.nodes[index].items.last ?? -1
                case .tab:
                    let selected = Int(hierarchy.nodes[index].selected)
                    next = hierarchy.nodes[index].items.indices.contains(selected) ? hierarchy.nodes[index].items[selected] : -1
                case .split:
                    next = hierarchy.nodes[index].collapsed || hierarchy.nodes[index].secondary < 0 ? hierarchy.nodes[index].primary : hierarchy.nodes[index].secondary
                default:
                    guard !hierarchy.nodes[index].children.isEmpty else { return current }
                    let presented = presentedBelowEmbeddedChildren(of: current, depth: 0)
                    guard presented >= 0 else { return current }
                    next = presented
                }
            }
            if next < 0 { return isContainer(current) ? -1 : current }
            current = next
        }
        return current
    }

    /// The path from `screen` (excluded) down its embedded children to one that presents, then
    /// the controller it presents; nil when none of its children presents.
    private func presentingDescendant(of screen: Int32) -> [Int32]? {
        func search(_ handle: Int32, _ depth: Int) -> [Int32]? {
            guard depth <= hierarchy.nodes.count else { return nil }
            for child in hierarchy.containedHandles(of: hierarchy[handle]).reversed() {
                if hierarchy[child].presented >= 0 { return [child, hierarchy[child].presented] }
                if let deeper = search(child, depth + 1) { return [child] + deeper }
            }
            return nil
        }
        return search(screen, 0)
    }

    /// The controller at the end of ``presentingDescendant(of:)`` (-1 for none), found in the
    /// same order without building the path: ``focusedHandle()`` asks after every event.
    private func presentedBelowEmbeddedChildren(of handle: Int32, depth: Int) -> Int32 {
        guard depth <= hierarchy.nodes.count else { return -1 }
        let index = Int(handle)
        func presented(below child: Int32) -> Int32 {
            let presented = hierarchy.nodes[Int(child)].presented
            return presented >= 0 ? presented : presentedBelowEmbeddedChildren(of: child, depth: depth + 1)
        }
        // Hierarchy.containedHandles(of:) in reverse: children, columns, then items.
        for child in hierarchy.nodes[index].children.reversed() {
            let found = presented(below: child)
            if found >= 0 { return found }
        }
        for column in [hierarchy.nodes[index].secondary, hierarchy.nodes[index].supplementary, hierarchy.nodes[index].primary] where column >= 0 {
            let found = presented(below: column)
            if found >= 0 { return found }
        }
        for item in hierarchy.nodes[index].items.reversed() {
            let found = presented(below: item)
            if found >= 0 { return found }
        }
        return -1
    }

    /// F3: the focus path plus everything R5 leaves visible: what lies beneath presentations that
    /// do not hide it, every column of an expanded split view, and the embedded children of
    /// every visible controller. In tree order, each controller once.
    public var visible: [ControllerHandle] {
        // F3 starts from the focus path: a presenter under a full-screen presentation is hidden
        // but still on the path to the focused screen.
        var result = focusPath.map(\.index)
        for window in hierarchy.windows where window.root >= 0 {
            result.append(contentsOf: visibleLayer(window.root, depth: 0).handles)
        }
        var seen = Set<Int32>()
        return result.filter { seen.insert($0).inserted }.map { ControllerHandle(index: $0) }
    }

    /// The visible part of the layer whose context root is `root`, with the presentations above
    /// it; `opaque` when a full-screen presentation hides everything beneath (R5).
    private func visibleLayer(_ root: Int32, depth: Int) -> (handles: [Int32], opaque: Bool) {
        guard depth <= hierarchy.nodes.count else { return ([], false) }
        var base: [Int32] = []
        onScreen(root, into: &base, depth: 0)
        let compact = horizontal == .compact
        var layers: [(presenter: Int32, handles: [Int32], coverage: PresentationStyle.Coverage)] = []
        for handle in base where hierarchy[handle].presented >= 0 {
            let presented = hierarchy[handle].presented
            let above = visibleLayer(presented, depth: depth + 1)
            let effective = hierarchy[presented].requestedStyle.adapted(horizontallyCompact: compact)
            if above.opaque || effective.coverage == .everything { return (above.handles, true) }
            layers.append((handle, above.handles, effective.coverage))
        }
        var result = base
        for layer in layers {
            if layer.coverage == .presenterContent {
                var hidden: [Int32] = []
                onScreen(layer.presenter, into: &hidden, depth: 0)
                result.removeAll { hidden.contains($0) }
            }
            result.append(contentsOf: layer.handles)
        }
        return (result, false)
    }

    /// `handle` and what of its containment subtree is on screen (not counting presentations).
    private func onScreen(_ handle: Int32, into result: inout [Int32], depth: Int) {
        guard depth <= hierarchy.nodes.count else { return }
        result.append(handle)
        let node = hierarchy[handle]
        switch kind(of: handle) {
        case .navigation:
            if let top = node.items.last { onScreen(top, into: &result, depth: depth + 1) }
        case .tab:
            if node.items.indices.contains(Int(node.selected)) {
                onScreen(node.items[Int(node.selected)], into: &result, depth: depth + 1)
            }
        case .split:
            let columns = node.collapsed ? [node.primary] : [node.primary, node.supplementary, node.secondary]
            for column in columns where column >= 0 { onScreen(column, into: &result, depth: depth + 1) }
        default:
            break
        }
        for child in node.children { onScreen(child, into: &result, depth: depth + 1) }
    }
}
