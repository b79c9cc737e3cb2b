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

    /// R11: `didMove(toParent: p)` when the child's parent is not p is out of order. Only a
    /// session that records `addChild` can show that the parent is not p.
    mutating func childDidMove(_ body: StoredBody) {
        guard let vc = controller(body, .vc), let parent = controller(body, .parent) else { return }
        let node = hierarchy[vc]
        guard node.placement != .child || node.parent != parent, evidence.contains(.childAdd) else { return }
        let actual = node.placement == .child ? name(node.parent) : "none"
        raise(
            .containmentOrder, rule: "R11", [vc, parent],
            "didMove(toParent: \(name(parent))) on \(name(vc)), whose parent is \(actual): call addChild before didMove(toParent:).")
    }

    /// R10, R11: `removeFromParent` detaches the child; without `willMove(toParent: nil)` first
    /// it is out of order, which only a session that records `willMove` can show.
    mutating func removeChild(_ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        let node = hierarchy[vc]
        guard node.placement == .child else { return }
        if !node.willMoveToNil, evidence.contains(.childWillMove) {
            raise(
                .containmentOrder, rule: "R11", [vc, node.parent],
                "removeFromParent on \(name(vc)) with no willMove(toParent: nil) since it was added to \(name(node.parent)): call willMove(toParent: nil) before removing the child's view."
            )
        }
        hierarchy.remove(vc)
    }

    // MARK: Appearance (R20, E1, E5)

    /// R20 as the evidence allows (E1, E5): appearance callbacks must balance, and a controller
    /// appearing outside the hierarchy is A13. Each imbalance is reported only when the session
    /// records the callbacks whose absence proves it.
    mutating func appearanceCallback(_ type: EventType, _ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        let will = body.field(.phase)?.equals("will") ?? false
        let appearing = type == .vcAppear
        if pendingRemoval != nil { decidePendingRemoval(appearing: appearing, vc, did: !will) }
        evidence.formUnion(.of(type, will: will))
        let state = appearance[Int(vc)]
        // E5: a will reversed before its did is what a cancelled interactive transition does.
        // It is a misuse only when the session records transitions and none was in progress.
        // Without recorded transitions (E5 tightened): only for a controller such a transition
        // could reveal or cover; read lazily, as few callbacks need it.
        var reversal: Bool {
            if evidence.contains(.transitions) {
                return interactiveTransitionInProgress
                    || (cancelledTransitionAt != .min && current.timestamp &- cancelledTransitionAt <= Self.cancelledTransitionGrace)
            }
            return couldBeInteractivelyExposed(vc)
        }
        var problem: String?
        switch (appearing, will, state) {
        case (true, true, .appearing):
            // A revealed controller whose cancelled transition's disappear callbacks are not
            // recorded is left appearing (E5): only disappear callbacks, or a reversal nothing
            // explains, prove the did-appear is missing.
            if evidence.contains(.didAppear), !reversal || evidence.intersection(.disappear) != [] {
                problem = "viewWillAppear again before its viewDidAppear"
            }
        case (true, _, .appeared):
            if secondAppearIsProven(vc, reversal: reversal) { problem = "a second appear with no disappear since the last one" }
        case (true, _, .disappearing):
            if !reversal, evidence.contains(.didDisappear) { problem = "viewWillDisappear was not followed by its viewDidDisappear" }
        case (false, true, .appearing), (false, false, .appearing):
            if !reversal, evidence.contains(.didAppear) { problem = "viewWillAppear was not followed by its viewDidAppear" }
        case (false, true, .disappearing):
            if evidence.contains(.didDisappear) { problem = "viewWillDisappear again before its viewDidDisappear" }
        default:
            // E1: a did with no will recorded before it, and a disappear of a controller not on
            // screen (the controller an interactive transition revealed and covered again), prove nothing.
            break
        }
        appearance[Int(vc)] = appearing ? (will ? .appearing : .appeared) : (will ? .disappearing : .disappeared)
        if appearing { appearedAtOperation[Int(vc)] = operations }
        // Built only for a report: this runs for every appearance event.
        func callback() -> String { "view\(will ? "Will" : "Did")\(appearing ? "Appear" : "Disappear")" }
        if let problem {
            raise(
                .unbalancedAppearance, rule: "R20", [vc],
                "\(callback()) on \(name(vc)) after \(state.lastCallback): \(problem). Appearance callbacks must balance; a custom container must call beginAppearanceTransition and endAppearanceTransition in pairs."
            )
        }
        // Once per appearance: a did-appear that completes a reported will-appear is the same one.
        if appearing, !(state == .appearing && !will), !hierarchy.isAttached(vc), !attachedBeforeInteractiveTransition(vc), detachmentIsProven(vc) {
            raise(
                .detachedAppearance, rule: "R20", [vc],
                "\(callback()) on \(name(vc)), which is not in the view controller hierarchy: it has no parent and no presenter (a custom segue that swaps views on the window?). Present it, push it or add it as a child instead."
            )
        }
        if appearing, !will {
            // R8, E2: the did-appear of a controller of a stack proves its navigation controller's transition ended.
            let parent = hierarchy[vc].parent
            if parent >= 0, hierarchy[vc].placement == .stack { hierarchy.nodes[Int(parent)].transitionEnd = Hierarchy.Node.noTransition }
        }
    }

    /// R20: is an appear of `vc` while it is already on screen a proven imbalance? Not when a
    /// cancelled interactive transition may have covered and uncovered it (E5); yes when the
    /// session records disappear callbacks (one would be between), or when nothing at all
    /// happened since its last appear.
    private func secondAppearIsProven(_ vc: Int32, reversal: Bool) -> Bool {
        if reversal, couldBeInteractivelyUncovered(vc) || wasInCancelledRemoval(vc) { return false }
        return evidence.intersection(.disappear) != [] || appearedAtOperation[Int(vc)] == operations
    }

    /// Whether `vc` is the focused screen and an interactive pop (it is the top of a stack of
    /// two or more) or an interactive dismissal (it is inside a presented controller) could
    /// have begun to take it off screen.
    private func couldBeInteractivelyUncovered(_ vc: Int32) -> Bool {
        guard vc == focusedScreen else { return false }
        let node = hierarchy[vc]
        if node.placement == .stack, node.parent >= 0, hierarchy[node.parent].items.count > 1 { return true }
        return hierarchy[hierarchy.contextRoot(of: vc)].placement == .presented
    }

    /// R19: whether `vc` was attached before an interactive transition still in progress took
    /// it out (the transition may be cancelled; its callbacks come while it runs).
    private func attachedBeforeInteractiveTransition(_ vc: Int32) -> Bool {
        transitions.contains { transition in
            guard let snapshot = transition.snapshot, Int(vc) < snapshot.nodes.count else { return false }
            return snapshot.isAttached(vc)
        }
    }

    /// A13 needs evidence that `vc` is really outside the hierarchy, not placed by a call the
    /// session does not record: the session records containment calls (so it is no embedded
    /// child), a recorded operation took it out, or a custom segue made it (R18).
    private func detachmentIsProven(_ vc: Int32) -> Bool {
        evidence.intersection(.containment) != [] || hierarchy[vc].everPlaced || customSegueDestinations.contains(vc)
    }

    // MARK: Transitions (R19)

    /// `transition.begin`: an interactive transition remembers the hierarchy it may have to
    /// restore; a navigation controller whose animated transition began now is held until the
    /// transition's end (E2).
    mutating func beginTransition(_ body: StoredBody) {
        guard let id = body.field(.id)?.string else { return }
        let interactive = body.field(.interactive)?.bool ?? false
        if transitions.count >= 16 { transitions.removeFirst() }
        transitions.append(OpenTransition(id: id, snapshot: interactive ? hierarchy : nil, began: current.timestamp))
        for index in hierarchy.nodes.indices where hierarchy.nodes[index].isTransitioning(at: current.timestamp) {
            hierarchy.nodes[index].transitionEnd = Hierarchy.Node.untilTransitionEnd
        }
    }

    /// `transition.end`: a cancelled interactive transition is rolled back as if it never
    /// happened (R19); anomalies and appearance bookkeeping stay.
    mutating func endTransition(_ body: StoredBody) {
        for index in hierarchy.nodes.indices where hierarchy.nodes[index].transitionEnd != Hierarchy.Node.noTransition {
            hierarchy.nodes[index].transitionEnd = Hierarchy.Node.noTransition
        }
        guard let id = body.field(.id)?.bytes, let index = transitions.lastIndex(where: { $0.id.utf8.elementsEqual(id) }) else { return }
        let transition = transitions.remove(at: index)
        guard body.field(.completed)?.bool == false, var snapshot = transition.snapshot else { return }
        cancelledTransitionAt = current.timestamp
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
