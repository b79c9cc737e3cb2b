import NavlogEvents

/// Contained children (R10, R11) and appearance callbacks and transitions (R19, R20).
extension SessionReplayer {
    /// R10: `addChild(c)`: c is attached from here until `removeFromParent`. A child that already
    /// has a parent moves (R11: a note, not an anomaly).
    mutating func addChild(_ body: StoredBody) {
        guard let parent = controller(body, .parent), let vc = controller(body, .vc) else { return }
        requireAttached(parent, "child.add")
        let slot = body.field(.slot)?.bytes.map { Int32(slotNames.intern($0)) } ?? -1
        if hierarchy[vc].placement == .child, hierarchy[vc].parent == parent {
            hierarchy.nodes[Int(vc)].slot = slot
            return
        }
        if !hierarchy.place(vc, in: .child(parent, slot: slot)) {
            raise(.presentAttached, rule: "H3", [vc, parent], "\(name(vc)) would contain itself as a child of \(name(parent)): nothing happens.")
        }
    }

    /// `willMove(toParent:)`: toParent nil starts a removal (R10); otherwise it is the call
    /// `addChild` makes itself.
    mutating func childWillMove(_ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        if controller(body, .parent) == nil, hierarchy[vc].placement == .child {
            hierarchy.nodes[Int(vc)].willMoveToNil = true
        }
    }

    /// R11: `didMove(toParent: p)` when the child's parent is not p is out of order.
    mutating func childDidMove(_ body: StoredBody) {
        guard let vc = controller(body, .vc), let parent = controller(body, .parent) else { return }
        let node = hierarchy[vc]
        guard node.placement != .child || node.parent != parent else { return }
        let actual = node.placement == .child ? name(node.parent) : "none"
        raise(
            .containmentOrder, rule: "R11", [vc, parent],
            "didMove(toParent: \(name(parent))) on \(name(vc)), whose parent is \(actual): call addChild before didMove(toParent:).")
    }

    /// R10, R11: `removeFromParent` detaches the child; without `willMove(toParent: nil)` first it is out of order.
    mutating func removeChild(_ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        let node = hierarchy[vc]
        guard node.placement == .child else { return }
        if !node.willMoveToNil {
            raise(
                .containmentOrder, rule: "R11", [vc, node.parent],
                "removeFromParent on \(name(vc)) with no willMove(toParent: nil) since it was added to \(name(node.parent)).")
        }
        hierarchy.remove(vc)
    }

    // MARK: Appearance (R20)

    /// R20: appearance callbacks must balance; a controller appearing outside the hierarchy is A13.
    mutating func appearanceCallback(_ type: EventType, _ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        let will = body.field(.phase)?.equals("will") ?? false
        let appearing = type == .vcAppear
        let state = appearance[Int(vc)]
        var balanced = true
        let next: AppearanceState
        // A will reversed before its did (will-appear then will-disappear, or the other way)
        // is what a cancelled interactive transition does (R19); anywhere else it is A14.
        let reversing = transitions.contains { $0.snapshot != nil }
        switch (appearing, will) {
        case (true, true):
            balanced = state == .disappeared || (state == .disappearing && reversing)
            next = .appearing
        case (true, false):
            balanced = state == .appearing
            next = .appeared
        case (false, true):
            balanced = state == .appeared || (state == .appearing && reversing)
            next = .disappearing
        case (false, false):
            balanced = state == .disappearing
            next = .disappeared
        }
        appearance[Int(vc)] = next
        // Built only for a report: this runs for every appearance event.
        func callback() -> String { "view\(will ? "Will" : "Did")\(appearing ? "Appear" : "Disappear")" }
        if !balanced {
            raise(
                .unbalancedAppearance, rule: "R20", [vc],
                "\(callback()) on \(name(vc)) after \(state.lastCallback): appearance callbacks must balance (a will with its did, no second appear without a disappear).")
        }
        if appearing, !hierarchy.isAttached(vc) {
            raise(
                .detachedAppearance, rule: "R20", [vc],
                "\(callback()) on \(name(vc)), which is not in the view controller hierarchy: it has no parent and no presenter (a custom segue that swaps views on the window?).")
        }
        if appearing, !will {
            // R8: the pushed controller's viewDidAppear ends its navigation controller's animated transition.
            let parent = hierarchy[vc].parent
            if parent >= 0, hierarchy[vc].placement == .stack { hierarchy.nodes[Int(parent)].transitionPending = false }
        }
    }

    // MARK: Transitions (R19)

    /// `transition.begin`: an interactive transition remembers the hierarchy it may have to restore.
    mutating func beginTransition(_ body: StoredBody) {
        guard let id = body.field(.id)?.string else { return }
        let interactive = body.field(.interactive)?.bool ?? false
        if transitions.count >= 16 { transitions.removeFirst() }
        transitions.append(OpenTransition(id: id, snapshot: interactive ? hierarchy : nil))
    }

    /// `transition.end`: a cancelled interactive transition is rolled back as if it never
    /// happened (R19); anomalies and appearance bookkeeping stay.
    mutating func endTransition(_ body: StoredBody) {
        for index in hierarchy.nodes.indices where hierarchy.nodes[index].transitionPending {
            hierarchy.nodes[index].transitionPending = false
        }
        guard let id = body.field(.id)?.bytes, let index = transitions.lastIndex(where: { $0.id.utf8.elementsEqual(id) }) else { return }
        let transition = transitions.remove(at: index)
        guard body.field(.completed)?.bool == false, var snapshot = transition.snapshot else { return }
        if controllers.count > 0 { snapshot.ensure(ControllerHandle(index: Int32(controllers.count - 1))) }
        hierarchy = snapshot
    }
}

extension AppearanceState {
    /// The callback that led to this state, for messages.
    var lastCallback: String {
        switch self {
        case .disappeared: "viewDidDisappear (or none yet)"
        case .appearing: "viewWillAppear"
        case .appeared: "viewDidAppear"
        case .disappearing: "viewWillDisappear"
        }
    }
}
