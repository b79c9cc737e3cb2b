import NavlogEvents

/// Navigation stacks (R8, R9), tab bars (R13) and split views (R14).
extension SessionReplayer {
    /// R8: push `vc` onto `nav`. Returns whether the push happened.
    @discardableResult
    mutating func push(_ vc: Int32, onto nav: Int32, animated: Bool, rule: String) -> Bool {
        requireAttached(nav, "nav.push")
        if hierarchy[nav].items.contains(vc) {
            raise(
                .pushDuplicate, rule: "R8", [vc, nav],
                "\(name(vc)) is pushed onto \(name(nav)), whose stack already holds it: UIKit raises (pushing the same view controller instance more than once is not supported); the stack is unchanged."
            )
            return false
        }
        if kind(of: vc) == .navigation {
            raise(
                .pushNavigationController, rule: "R8", [vc, nav],
                "\(name(vc)) is a navigation controller pushed onto \(name(nav)): UIKit raises (pushing a navigation controller is not supported); the stack is unchanged.")
            return false
        }
        if hierarchy.isAttached(vc) {
            raise(
                .presentAttached, rule: "R8", [vc, nav],
                "\(name(vc)) is pushed onto \(name(nav)) while it is already on screen elsewhere: nothing happens.")
            return false
        }
        // R8, E2: the earlier transition must be animated and unfinished; this push may be either.
        if hierarchy[nav].isTransitioning(at: current.timestamp) {
            raise(
                .nestedTransition, rule: "R8", [vc, nav],
                "\(name(vc)) is pushed onto \(name(nav)) while its previous animated transition has not finished (nested push animation can result in corrupted navigation bar): wait for the transition to end (the pushed controller's viewDidAppear, or the transition coordinator's completion) before pushing again."
            )
        }
        guard hierarchy.place(vc, in: .stack(nav, at: nil)) else {
            raise(.presentAttached, rule: "H3", [vc, nav], "\(name(vc)) would contain itself if pushed onto \(name(nav)): nothing happens.")
            return false
        }
        if animated { beginNavigationTransition(nav, duration: Self.standardPushDuration) }
        return true
    }

    /// E2: UIKit's default duration of a navigation controller's push and pop animation, about
    /// 0.35 s (the figure rule E2 gives). A session that records no end of the transition has
    /// it end after this long.
    static let standardPushDuration: Int64 = 350_000
    static let standardPopDuration: Int64 = 350_000

    /// An animated transition of `nav` begins now (R8, E2). It ends at the first later event
    /// that proves it finished (a `vc.appear` did of a controller of its stack, or a
    /// `transition.end`) or after `duration`; a recorded `transition.begin` that is open
    /// holds it until that transition's end.
    mutating func beginNavigationTransition(_ nav: Int32, duration: Int64) {
        let (end, overflow) = current.timestamp.addingReportingOverflow(duration)
        let heldOpen = transitions.contains { $0.began == current.timestamp }
        hierarchy.nodes[Int(nav)].transitionEnd = heldOpen ? Hierarchy.Node.untilTransitionEnd : overflow ? Hierarchy.Node.untilTransitionEnd - 1 : end
    }

    /// R9: pop the top of `nav` (not its root).
    mutating func pop(_ nav: Int32, animated: Bool) {
        requireAttached(nav, "nav.pop")
        guard hierarchy[nav].items.count > 1, let top = hierarchy[nav].items.last else {
            raise(.popRoot, rule: "R9", [nav], "pop on \(name(nav)), whose stack holds \(hierarchy[nav].items.count) controller(s): nothing happens.")
            return
        }
        hierarchy.remove(top)
        if animated { beginNavigationTransition(nav, duration: Self.standardPopDuration) }
    }

    /// R9: pop `nav` back to `vc`.
    mutating func pop(_ nav: Int32, to vc: Int32) {
        requireAttached(nav, "nav.popTo")
        guard let index = hierarchy[nav].items.firstIndex(of: vc) else {
            raise(
                .popToMissing, rule: "R9", [vc, nav],
                "popTo \(name(vc)) on \(name(nav)), whose stack does not hold it: UIKit raises (tried to pop to a view controller that doesn't exist); the stack is unchanged.")
            return
        }
        hierarchy.truncateStack(of: nav, keeping: index + 1)
    }

    /// R9: keep only the root of `nav`.
    mutating func popToRoot(_ nav: Int32) {
        requireAttached(nav, "nav.popToRoot")
        hierarchy.truncateStack(of: nav, keeping: 1)
    }

    // MARK: Tab bars

    /// R13: `tab.set` replaces the tabs; the selection is kept when still valid.
    mutating func setTabs(_ body: StoredBody) {
        guard let tab = controller(body, .tab, use: .tab) else { return }
        hierarchy.setItems(of: tab, to: controllers(body, .vcs, placingUnder: tab), placement: .tab)
        let count = hierarchy[tab].items.count
        if let selected = body.field(.selected)?.integer, selected >= 0, selected < count {
            hierarchy.nodes[Int(tab)].selected = Int32(selected)
        } else if Int(hierarchy[tab].selected) >= count {
            hierarchy.nodes[Int(tab)].selected = 0
        }
    }

    /// R13: selecting a tab keeps every tab's stack; a tap on the selected tab's item pops its
    /// navigation controller to the root, a programmatic re-selection changes nothing.
    mutating func selectTab(_ body: StoredBody) {
        guard let tab = controller(body, .tab, use: .tab) else { return }
        requireAttached(tab, "tab.select")
        let items = hierarchy[tab].items
        var target: Int?
        if let index = body.field(.index)?.integer, index >= 0, index < items.count { target = Int(index) }
        if target == nil, let vc = controller(body, .vc) { target = items.firstIndex(of: vc) }
        guard let target else { return }
        if target == Int(hierarchy[tab].selected) {
            if body.field(.byUser)?.bool == true, kind(of: items[target]) == .navigation {
                hierarchy.truncateStack(of: items[target], keeping: 1)
            }
        } else {
            hierarchy.nodes[Int(tab)].selected = Int32(target)
        }
    }

    // MARK: Split views

    /// R14, R16: set the given columns. A split view set up in a compact width starts collapsed.
    mutating func setSplit(_ body: StoredBody) {
        guard let split = controller(body, .split, use: .split) else { return }
        let columns: [(FieldName, Hierarchy.Placement)] = [(.primary, .primary), (.supplementary, .supplementary), (.secondary, .secondary)]
        var handles: [(Int32, Hierarchy.Placement)] = []
        for (field, column) in columns {
            if let vc = controller(body, field) { handles.append((vc, column)) }
        }
        setColumns(split, handles)
    }

    /// Puts controllers into columns of `split`, collapsing them as R14 says when the split view is collapsed.
    mutating func setColumns(_ split: Int32, _ columns: [(Int32, Hierarchy.Placement)]) {
        let node = hierarchy[split]
        let isNew = node.primary < 0 && node.secondary < 0 && node.supplementary < 0 && node.movedFromSecondary.isEmpty
        let collapsed = isNew ? horizontal == .compact : node.collapsed
        if node.collapsed { expand(split) }
        for (vc, column) in columns where !hierarchy.isAncestor(vc, of: split) {
            hierarchy.place(vc, in: .column(split, column))
        }
        if collapsed { collapse(split) }
    }

    /// R14: collapsing pushes the secondary column's controller onto the primary navigation controller.
    mutating func collapse(_ split: Int32) {
        guard !hierarchy[split].collapsed else { return }
        hierarchy.nodes[Int(split)].collapsed = true
        let primary = hierarchy[split].primary
        let secondary = hierarchy[split].secondary
        guard primary >= 0, secondary >= 0, kind(of: primary) == .navigation else { return }
        if hierarchy.place(secondary, in: .stack(primary, at: nil)) {
            hierarchy.nodes[Int(split)].movedFromSecondary = [secondary]
        }
    }

    /// R14: expanding pops what came from the secondary column off the primary stack; the first
    /// of those becomes the secondary column again.
    mutating func expand(_ split: Int32) {
        guard hierarchy[split].collapsed else { return }
        hierarchy.nodes[Int(split)].collapsed = false
        let moved = hierarchy[split].movedFromSecondary
        hierarchy.nodes[Int(split)].movedFromSecondary = []
        let primary = hierarchy[split].primary
        guard primary >= 0, let first = moved.first, let index = hierarchy[primary].items.firstIndex(of: first) else { return }
        hierarchy.truncateStack(of: primary, keeping: index)
        hierarchy.place(first, in: .column(split, .secondary))
    }
}
