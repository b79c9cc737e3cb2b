/// The view-controller hierarchy of one session: windows, containment and presentations
/// (rules H1–H3), as plain arrays of handles so that a copy is cheap (R19 rollback snapshots
/// it) and serializing it for a checkpoint is a flat walk.
///
/// Every walk is bounded by the number of controllers, so even a hierarchy built from hostile
/// events cannot make the replayer loop; ``place(_:in:)`` refuses the moves that would make a
/// controller its own ancestor.
public struct Hierarchy: Sendable, Equatable {
    /// Where a controller sits (H3: in at most one place).
    public enum Placement: UInt8, Sendable {
        /// Nowhere: not part of any tree.
        case none
        /// The root of window `window`.
        case windowRoot
        /// In its parent navigation controller's stack.
        case stack
        /// One of its parent tab bar controller's tabs.
        case tab
        /// A split view controller's primary column.
        case primary
        /// A split view controller's secondary column.
        case secondary
        /// A split view controller's supplementary column.
        case supplementary
        /// A contained child (`addChild`, embed segue), possibly in a named slot.
        case child
        /// Presented by `presenter`.
        case presented
    }

    /// One controller's place and what it contains.
    public struct Node: Sendable, Equatable {
        /// Where it is.
        public internal(set) var placement = Placement.none
        /// Its containment parent (stack, tab, column or child placement), else -1.
        public internal(set) var parent: Int32 = -1
        /// The controller presenting it (presented placement), else -1.
        public internal(set) var presenter: Int32 = -1
        /// The window whose root it is (window-root placement), else -1.
        public internal(set) var window: Int32 = -1
        /// The controller it presents, else -1.
        public internal(set) var presented: Int32 = -1
        /// The style it was presented with (requested; R4 adapts it when shown).
        public internal(set) var requestedStyle = PresentationStyle.automatic
        /// Navigation stack (bottom first) or tabs, in order.
        public internal(set) var items: [Int32] = []
        /// The selected tab.
        public internal(set) var selected: Int32 = 0
        /// Split view columns (-1 when not set).
        public internal(set) var primary: Int32 = -1
        public internal(set) var secondary: Int32 = -1
        public internal(set) var supplementary: Int32 = -1
        /// Whether a split view is collapsed (R14).
        public internal(set) var collapsed = false
        /// Controllers that came from the secondary column onto the primary stack while collapsed (R14).
        public internal(set) var movedFromSecondary: [Int32] = []
        /// Contained children, in the order they were added.
        public internal(set) var children: [Int32] = []
        /// The slot a child was added to (a reference into the replayer's slot names), else -1.
        public internal(set) var slot: Int32 = -1
        /// `willMove(toParent: nil)` was called since the child was added (R11).
        public internal(set) var willMoveToNil = false
        /// When a navigation controller's animated transition ends (µs; R8, A8, E2):
        /// ``Node/noTransition`` when none is in flight, ``Node/untilTransitionEnd`` while a
        /// recorded `transition.begin` holds it open until its `transition.end`.
        public internal(set) var transitionEnd = Node.noTransition
        /// Whether it was ever placed in the hierarchy (so a detached controller is known to
        /// have left it through a recorded operation: evidence for A13).
        public internal(set) var everPlaced = false

        /// ``transitionEnd`` when no animated transition is in flight.
        public static let noTransition = Int64.min
        /// ``transitionEnd`` while a recorded transition holds it open.
        public static let untilTransitionEnd = Int64.max

        /// Whether an animated transition is unfinished at `timestamp` (E2).
        public func isTransitioning(at timestamp: Int64) -> Bool { transitionEnd != Node.noTransition && timestamp < transitionEnd }
    }

    /// A window and its root.
    public struct Window: Sendable, Equatable {
        /// The window's name (`main` unless the events named another).
        public var name: String
        /// Its root controller, -1 when none.
        public var root: Int32
    }

    /// Every controller's node, indexed by handle.
    public internal(set) var nodes: [Node] = []
    /// The windows, in the order they first got a root.
    public internal(set) var windows: [Window] = []

    /// An empty hierarchy.
    public init() {}

    /// The node of `handle`.
    public subscript(handle: Int32) -> Node {
        // Yielded in place: reading one field of a node (the replayer does, several times per
        // event) then retains none of its arrays.
        _read { yield nodes[Int(handle)] }
    }

    /// Makes room for the controller `handle`.
    mutating func ensure(_ handle: ControllerHandle) {
        let needed = Int(handle.index) + 1
        if nodes.count < needed { nodes.append(contentsOf: repeatElement(Node(), count: needed - nodes.count)) }
    }

    /// How many steps a walk may take before it must have finished (a guard against damage).
    private var walkLimit: Int { nodes.count + 1 }

    /// The root of `handle`'s parent chain (a window root, a presented controller, or a free one).
    public func contextRoot(of handle: Int32) -> Int32 {
        var current = handle
        var steps = 0
        while nodes[Int(current)].parent >= 0, steps < walkLimit {
            current = nodes[Int(current)].parent
            steps += 1
        }
        return current
    }

    /// Whether `handle` is attached (H2): its parent chain ends at a window root, or at a
    /// presented controller whose presenter is attached.
    public func isAttached(_ handle: Int32) -> Bool {
        var current = handle
        var steps = 0
        while steps < walkLimit {
            let root = contextRoot(of: current)
            let node = nodes[Int(root)]
            switch node.placement {
            case .windowRoot: return true
            case .presented: current = node.presenter
            default: return false
            }
            steps += 1
        }
        return false
    }

    /// Calls `body` with `handle` and each controller up its parent chain (containment only).
    func forEachOnParentChain(of handle: Int32, _ body: (Int32) -> Bool) {
        var current = handle
        var steps = 0
        while current >= 0, steps < walkLimit {
            if !body(current) { return }
            current = nodes[Int(current)].parent
            steps += 1
        }
    }

    /// The top of `handle`'s chain of parents and presenters: itself when it has neither.
    func topmostAncestor(of handle: Int32) -> Int32 {
        var current = handle
        var steps = 0
        while steps < walkLimit {
            let node = nodes[Int(current)]
            let next = node.parent >= 0 ? node.parent : node.presenter
            if next < 0 { return current }
            current = next
            steps += 1
        }
        return current
    }

    /// Whether `ancestor` is `handle` or lies above it, following containment and presentations.
    func isAncestor(_ ancestor: Int32, of handle: Int32) -> Bool {
        var current = handle
        var steps = 0
        while current >= 0, steps < walkLimit {
            if current == ancestor { return true }
            let node = nodes[Int(current)]
            current = node.parent >= 0 ? node.parent : node.presenter
            steps += 1
        }
        return false
    }

    // MARK: Moving controllers

    /// Takes `handle` out of its place (H3), leaving what it contains and presents with it.
    mutating func remove(_ handle: Int32) {
        let node = nodes[Int(handle)]
        switch node.placement {
        case .none: return
        case .windowRoot:
            if node.window >= 0, Int(node.window) < windows.count, windows[Int(node.window)].root == handle {
                windows[Int(node.window)].root = -1
            }
        case .presented:
            if node.presenter >= 0, nodes[Int(node.presenter)].presented == handle { nodes[Int(node.presenter)].presented = -1 }
        case .stack, .tab:
            let parent = Int(node.parent)
            if let index = nodes[parent].items.firstIndex(of: handle) {
                nodes[parent].items.remove(at: index)
                if node.placement == .tab {
                    let selected = Int(nodes[parent].selected)
                    if index < selected || selected >= nodes[parent].items.count {
                        nodes[parent].selected = Int32(max(0, selected - 1))
                    }
                }
            }
        case .primary, .secondary, .supplementary: clearColumn(of: Int(node.parent), handle)
        case .child: nodes[Int(node.parent)].children.removeAll { $0 == handle }
        }
        nodes[Int(handle)].placement = .none
        nodes[Int(handle)].parent = -1
        nodes[Int(handle)].presenter = -1
        nodes[Int(handle)].window = -1
        nodes[Int(handle)].slot = -1
        nodes[Int(handle)].willMoveToNil = false
    }

    private mutating func clearColumn(of split: Int, _ handle: Int32) {
        if nodes[split].primary == handle { nodes[split].primary = -1 }
        if nodes[split].secondary == handle { nodes[split].secondary = -1 }
        if nodes[split].supplementary == handle { nodes[split].supplementary = -1 }
    }

    /// Where ``place(_:in:)`` puts a controller.
    enum Destination {
        case stack(Int32, at: Int?)
        case tab(Int32, at: Int?)
        case column(Int32, Placement)
        case child(Int32, slot: Int32)
        case presented(by: Int32, style: PresentationStyle)
        case windowRoot(Int32)
    }

    /// Moves `handle` to `destination`, out of wherever it was (H3). Returns false, changing
    /// nothing, when the move would make a controller contain itself.
    @discardableResult
    mutating func place(_ handle: Int32, in destination: Destination) -> Bool {
        let container: Int32? =
            switch destination {
            case .stack(let c, _), .tab(let c, _), .column(let c, _), .child(let c, _), .presented(let c, _): c
            case .windowRoot: nil
            }
        if let container, isAncestor(handle, of: container) { return false }
        remove(handle)
        nodes[Int(handle)].everPlaced = true
        switch destination {
        case .stack(let nav, let index), .tab(let nav, let index):
            let at = min(index ?? nodes[Int(nav)].items.count, nodes[Int(nav)].items.count)
            nodes[Int(nav)].items.insert(handle, at: at)
            nodes[Int(handle)].parent = nav
            if case .tab = destination {
                nodes[Int(handle)].placement = .tab
            } else {
                nodes[Int(handle)].placement = .stack
            }
        case .column(let split, let column):
            let previous: Int32 =
                switch column {
                case .primary: nodes[Int(split)].primary
                case .secondary: nodes[Int(split)].secondary
                default: nodes[Int(split)].supplementary
                }
            if previous >= 0, previous != handle { remove(previous) }
            switch column {
            case .primary: nodes[Int(split)].primary = handle
            case .secondary: nodes[Int(split)].secondary = handle
            default: nodes[Int(split)].supplementary = handle
            }
            nodes[Int(handle)].parent = split
            nodes[Int(handle)].placement = column
        case .child(let parent, let slot):
            nodes[Int(parent)].children.append(handle)
            nodes[Int(handle)].parent = parent
            nodes[Int(handle)].slot = slot
            nodes[Int(handle)].placement = .child
        case .presented(let presenter, let style):
            nodes[Int(presenter)].presented = handle
            nodes[Int(handle)].presenter = presenter
            nodes[Int(handle)].requestedStyle = style
            nodes[Int(handle)].placement = .presented
        case .windowRoot(let window):
            let previous = windows[Int(window)].root
            if previous >= 0, previous != handle { discardTree(previous) }
            windows[Int(window)].root = handle
            nodes[Int(handle)].window = window
            nodes[Int(handle)].placement = .windowRoot
        }
        return true
    }

    /// H1: a window's old root and everything it presented leave the window.
    mutating func discardTree(_ root: Int32) {
        dismissPresentations(within: root)
        remove(root)
    }

    /// The index of window `name`, adding it when new.
    mutating func window(named name: UnsafeRawBufferPointer?) -> Int32 {
        let name = name.map { String(decoding: $0, as: UTF8.self) } ?? "main"
        if let index = windows.firstIndex(where: { $0.name == name }) { return Int32(index) }
        windows.append(Window(name: name, root: -1))
        return Int32(windows.count - 1)
    }

    /// Replaces a navigation stack or a tab list (R9 `setViewControllers`, R13): controllers
    /// left out are detached, the others moved here in order.
    mutating func setItems(of container: Int32, to handles: [Int32], placement: Placement) {
        for old in nodes[Int(container)].items where !handles.contains(old) { remove(old) }
        nodes[Int(container)].items.removeAll()
        for handle in handles {
            guard !nodes[Int(container)].items.contains(handle) else { continue }
            place(handle, in: placement == .tab ? .tab(container, at: nil) : .stack(container, at: nil))
        }
    }

    /// Removes the items of navigation controller `nav` above index `index`.
    mutating func truncateStack(of nav: Int32, keeping count: Int) {
        while nodes[Int(nav)].items.count > count, let top = nodes[Int(nav)].items.last {
            remove(top)
            // Never loop: if the top's node did not say it was here, drop it from the stack anyway.
            if nodes[Int(nav)].items.last == top, nodes[Int(nav)].items.count > count { nodes[Int(nav)].items.removeLast() }
        }
    }

    /// Whether every link agrees with its other end (a child's node names the container that
    /// lists it, a presentation is known to both sides, a window's root is placed there), no
    /// controller is in two places (H3), and no parent chain loops. Checkpoint decoding checks
    /// it: the engine's walks rely on it.
    func isConsistent() -> Bool {
        let count = nodes.count
        func valid(_ handle: Int32) -> Bool { handle >= 0 && Int(handle) < count }
        var places = [UInt8](repeating: 0, count: count)
        func claim(_ handle: Int32) -> Bool {
            guard valid(handle), places[Int(handle)] == 0 else { return false }
            places[Int(handle)] = 1
            return true
        }
        for (index, window) in windows.enumerated() where window.root >= 0 {
            guard claim(window.root), nodes[Int(window.root)].placement == .windowRoot, nodes[Int(window.root)].window == Int32(index) else { return false }
        }
        for (index, node) in nodes.enumerated() {
            let container = Int32(index)
            for item in node.items {
                guard claim(item), nodes[Int(item)].parent == container,
                    nodes[Int(item)].placement == .stack || nodes[Int(item)].placement == .tab
                else { return false }
            }
            for (column, placement) in [(node.primary, Placement.primary), (node.secondary, .secondary), (node.supplementary, .supplementary)] where column >= 0 {
                guard claim(column), nodes[Int(column)].parent == container, nodes[Int(column)].placement == placement else { return false }
            }
            for child in node.children {
                guard claim(child), nodes[Int(child)].parent == container, nodes[Int(child)].placement == .child else { return false }
            }
            if node.presented >= 0 {
                guard claim(node.presented), nodes[Int(node.presented)].presenter == container, nodes[Int(node.presented)].placement == .presented
                else { return false }
            }
        }
        // Every placed node is listed where it says it is (the claims above), and nothing loops.
        for (index, node) in nodes.enumerated() {
            if (node.placement == .none) != (places[index] == 0) { return false }
            var current = Int32(index)
            var steps = 0
            while current >= 0 {
                let next = nodes[Int(current)].parent >= 0 ? nodes[Int(current)].parent : nodes[Int(current)].presenter
                current = next
                steps += 1
                if steps > count { return false }
            }
        }
        return true
    }

    // MARK: Presentations

    /// Dismisses whatever `presenter` presents, and everything presented in turn from inside it (R7).
    mutating func dismiss(presentedBy presenter: Int32) {
        let presented = nodes[Int(presenter)].presented
        guard presented >= 0 else { return }
        dismissPresentations(within: presented)
        remove(presented)
    }

    /// The presentations ``dismiss(presentedBy:)`` would end, as pairs of the presented
    /// controller and its presenter: what putting them back needs (E6).
    func presentations(endedByDismissing presenter: Int32) -> [Int32] {
        let first = nodes[Int(presenter)].presented
        guard first >= 0 else { return [] }
        var result: [Int32] = [first, presenter]
        var pending = [first]
        var steps = 0
        while let handle = pending.popLast(), steps < walkLimit * 2 {
            steps += 1
            let node = nodes[Int(handle)]
            if node.presented >= 0 {
                result.append(node.presented)
                result.append(handle)
                pending.append(node.presented)
            }
            pending.append(contentsOf: containedHandles(of: node))
        }
        return result
    }

    /// Dismisses every presentation made from `root`'s subtree (containment, at any depth).
    mutating func dismissPresentations(within root: Int32) {
        var pending = [root]
        var steps = 0
        while let handle = pending.popLast(), steps < walkLimit * 2 {
            steps += 1
            let node = nodes[Int(handle)]
            if node.presented >= 0 {
                let presented = node.presented
                pending.append(presented)
                remove(presented)
            }
            pending.append(contentsOf: containedHandles(of: node))
        }
    }

    /// Everything `node` contains directly: stack or tabs, columns, children.
    func containedHandles(of node: Node) -> [Int32] {
        var result = node.items
        for column in [node.primary, node.supplementary, node.secondary] where column >= 0 { result.append(column) }
        result.append(contentsOf: node.children)
        return result
    }
}
