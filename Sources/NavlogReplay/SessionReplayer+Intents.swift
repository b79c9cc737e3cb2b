import NavlogEvents

/// Intents resolved into operations: show (R1), showDetail (R2), segues (R15–R18), unwind
/// (R17), and operations that confirm them through `cause` (A15).
extension SessionReplayer {
    /// R1: push onto the nearest navigation controller up the chain (a collapsed split view on
    /// the way sends it to its primary navigation controller); with none, present modally.
    mutating func show(_ vc: Int32, from source: Int32) -> Resolution {
        var target: Int32 = -1
        hierarchy.forEachOnParentChain(of: source) { handle in
            switch kind(of: handle) {
            case .navigation:
                target = handle
                return false
            case .split where hierarchy[handle].collapsed:
                let primary = hierarchy[handle].primary
                guard primary >= 0, kind(of: primary) == .navigation else { return true }
                target = primary
                return false
            default:
                return true
            }
        }
        guard target >= 0 else { return present(vc, from: source, style: .automatic, anchored: false) }
        return pushResolution(vc, onto: target, rule: "R1")
    }

    /// R2: replace the secondary column of the nearest split view (collapsed: push onto its
    /// primary navigation controller); with no split view, present modally.
    mutating func showDetail(_ vc: Int32, from source: Int32) -> Resolution {
        var split: Int32 = -1
        hierarchy.forEachOnParentChain(of: source) { handle in
            if kind(of: handle) == .split {
                split = handle
                return false
            }
            return true
        }
        guard split >= 0 else { return present(vc, from: source, style: .automatic, anchored: false) }
        let primary = hierarchy[split].primary
        if hierarchy[split].collapsed {
            guard primary >= 0, kind(of: primary) == .navigation else {
                return present(vc, from: source, style: .automatic, anchored: false)
            }
            let resolution = pushResolution(vc, onto: primary, rule: "R2")
            if case .push = resolution { hierarchy.nodes[Int(split)].movedFromSecondary.append(vc) }
            return resolution
        }
        if hierarchy.isAttached(vc) {
            raise(.presentAttached, rule: "R2", [vc, split], "\(name(vc)) is shown as the detail of \(name(split)) while it is already attached: nothing happens.")
            return .ignored
        }
        guard !hierarchy.isAncestor(vc, of: split) else { return .ignored }
        hierarchy.place(vc, in: .column(split, .secondary))
        return .setSecondary(container: ControllerHandle(index: split), vc: ControllerHandle(index: vc))
    }

    private mutating func pushResolution(_ vc: Int32, onto nav: Int32, rule: String) -> Resolution {
        push(vc, onto: nav, animated: false, rule: rule)
            ? .push(container: ControllerHandle(index: nav), vc: ControllerHandle(index: vc)) : .ignored
    }

    /// R15–R18: a `segue` event.
    mutating func performSegue(_ body: StoredBody) -> Resolution {
        // Register what every phase says about the controllers (the destination's class and
        // unwind actions often come only with `should` or `prepare`).
        let source = controller(body, .source)
        let destination = controller(body, .destination)
        let phase = body.field(.phase)
        if phase?.equals("should") == true {
            return body.field(.result)?.bool == false ? .cancelled : .none
        }
        if phase?.equals("prepare") == true { return .none }
        guard let kind = body.field(.kind), let source else { return .ignored }
        if kind.equals("show") || kind.equals("push") {
            guard let destination else { return remember(.ignored, rule: "R1") }
            return remember(show(destination, from: source), rule: "R1")
        }
        if kind.equals("showDetail") || kind.equals("replace") {
            guard let destination else { return remember(.ignored, rule: "R2") }
            return remember(showDetail(destination, from: source), rule: "R2")
        }
        if kind.equals("presentation") || kind.equals("modal") || kind.equals("popoverPresentation") || kind.equals("popover") {
            guard let destination else { return remember(.ignored, rule: "R3") }
            let popover = kind.equals("popoverPresentation") || kind.equals("popover")
            let style =
                popover ? .popover : requestedStyle(body.field(.style)?.bytes, of: destination, alertStyle: nil)
            return remember(present(destination, from: source, style: style, anchored: hasAnchor(body.field(.anchor))), rule: popover ? "R6" : "R3")
        }
        if kind.equals("embed") {
            guard let destination else { return remember(.ignored, rule: "R12") }
            // R12: the destination becomes a child of the source, with the container view as its slot.
            let slot = body.field(.identifier)?.bytes
            guard hierarchy.place(destination, in: .child(source, slot: slot.map { Int32(slotNames.intern($0)) } ?? -1)) else {
                return remember(.ignored, rule: "R12")
            }
            return remember(
                .addChild(container: ControllerHandle(index: source), vc: ControllerHandle(index: destination), slot: slot.map { String(decoding: $0, as: UTF8.self) }),
                rule: "R12")
        }
        if kind.equals("unwind") {
            guard let action = body.field(.action)?.bytes else { return remember(.ignored, rule: "R17") }
            return remember(unwind(from: source, action: action, expected: destination), rule: "R17")
        }
        if kind.equals("relationship") {
            guard let destination, let relationship = body.field(.relationship) else { return remember(.ignored, rule: "R16") }
            return remember(relate(destination, to: source, relationship), rule: "R16")
        }
        // R18: a custom segue does what its perform() does; nothing in the hierarchy changes.
        // Its destination is remembered: if it appears while detached, the segue swapped views.
        if let destination {
            if customSegueDestinations.count >= 16 { customSegueDestinations.removeFirst() }
            customSegueDestinations.append(destination)
        }
        return remember(.custom, rule: "R18")
    }

    /// R16: relationship segues build containers.
    private mutating func relate(_ vc: Int32, to container: Int32, _ relationship: StoredValue) -> Resolution {
        let handle = ControllerHandle(index: container)
        if hierarchy.isAncestor(vc, of: container) { return .ignored }
        if relationship.equals("rootViewController") {
            controllers.noteUse(handle, as: .navigation)
            if let root = hierarchy[container].items.first, root != vc { hierarchy.remove(root) }
            hierarchy.place(vc, in: .stack(container, at: 0))
            return .setRoot(container: handle, vc: ControllerHandle(index: vc))
        }
        if relationship.equals("viewControllers") {
            controllers.noteUse(handle, as: .tab)
            hierarchy.place(vc, in: .tab(container, at: nil))
            return .appendTab(container: handle, vc: ControllerHandle(index: vc))
        }
        let column: Hierarchy.Placement
        if relationship.equals("masterViewController") {
            column = .primary
        } else if relationship.equals("detailViewController") {
            column = .secondary
        } else if relationship.equals("supplementaryViewController") {
            column = .supplementary
        } else {
            return .none  // compactViewController: a column navlog's output does not model
        }
        controllers.noteUse(handle, as: .split)
        setColumns(container, [(vc, column)])
        return .setColumn(container: handle, column: column, vc: ControllerHandle(index: vc))
    }

    // MARK: Unwind

    /// R17: find the destination walking outward from `source`, then dismiss, pop and select
    /// back to it. `expected` is the app's own `target`; a different destination is A15.
    mutating func unwind(from source: Int32, action: UnsafeRawBufferPointer, expected: Int32?) -> Resolution {
        guard let destination = unwindDestination(from: source, action: action) else {
            raise(
                .unwindNoTarget, rule: "R17", [source],
                "No view controller outward from \(name(source)) implements the unwind action \(String(decoding: action, as: UTF8.self)): nothing happens.")
            return .ignored
        }
        if let expected, expected != destination {
            raise(
                .resolutionMismatch, rule: "R17", [source, destination, expected],
                "The unwind from \(name(source)) names \(name(expected)) as its target, but R17 finds \(name(destination)).")
        }
        // Dismiss every presentation above the destination's context.
        hierarchy.forEachOnParentChain(of: destination) { handle in
            if hierarchy[handle].presented >= 0 { hierarchy.dismiss(presentedBy: handle) }
            return true
        }
        // Pop navigation controllers back to, and select the tabs holding, the destination.
        var child = destination
        hierarchy.forEachOnParentChain(of: hierarchy[destination].parent) { container in
            let items = hierarchy[container].items
            if let index = items.firstIndex(of: child) {
                if kind(of: container) == .navigation {
                    hierarchy.truncateStack(of: container, keeping: index + 1)
                } else if kind(of: container) == .tab {
                    hierarchy.nodes[Int(container)].selected = Int32(index)
                }
            }
            child = container
            return true
        }
        return .unwind(destination: ControllerHandle(index: destination))
    }

    private func implements(_ handle: Int32, _ action: UnsafeRawBufferPointer) -> Bool {
        controllers[ControllerHandle(index: handle)].unwindActions.contains { $0.utf8.elementsEqual(action) }
    }

    /// R17's search: up the parent chain, searching each container's other children (depth
    /// first, most recently shown first) before the container; then on from the controller
    /// presenting the context root.
    func unwindDestination(from source: Int32, action: UnsafeRawBufferPointer) -> Int32? {
        var cameFrom = source
        var current = hierarchy[source].parent
        var steps = 0
        while steps <= hierarchy.nodes.count * 2 {
            steps += 1
            if current < 0 {
                let root = cameFrom
                guard hierarchy[root].placement == .presented else { return nil }
                let presenter = hierarchy[root].presenter
                if let found = searchChildren(of: presenter, excluding: -1, action, depth: 0) { return found }
                if implements(presenter, action) { return presenter }
                cameFrom = presenter
                current = hierarchy[presenter].parent
                continue
            }
            if let found = searchChildren(of: current, excluding: cameFrom, action, depth: 0) { return found }
            if current != source, implements(current, action) { return current }
            cameFrom = current
            current = hierarchy[current].parent
        }
        return nil
    }

    /// Depth-first over `container`'s children, most recently shown first (top of a stack,
    /// the selected tab, the secondary column, the last child added), each child's subtree
    /// before the child itself.
    private func searchChildren(of container: Int32, excluding: Int32, _ action: UnsafeRawBufferPointer, depth: Int) -> Int32? {
        guard depth <= hierarchy.nodes.count else { return nil }
        let node = hierarchy[container]
        var order: [Int32] = []
        if kind(of: container) == .tab, node.items.indices.contains(Int(node.selected)) {
            order.append(node.items[Int(node.selected)])
            order.append(contentsOf: node.items.enumerated().filter { $0.offset != Int(node.selected) }.map(\.element))
        } else {
            order.append(contentsOf: node.items.reversed())
        }
        for column in [node.secondary, node.supplementary, node.primary] where column >= 0 { order.append(column) }
        order.append(contentsOf: node.children.reversed())
        for child in order where child != excluding {
            if let found = searchChildren(of: child, excluding: -1, action, depth: depth + 1) { return found }
            if implements(child, action) { return child }
        }
        return nil
    }

    // MARK: Confirmation through `cause`

    /// An operation that carries `cause`: it confirms the intent's resolution (the replayer
    /// already applied it) or disagrees with it (A15). Either way it is not applied again.
    mutating func confirm(_ type: EventType, _ body: StoredBody, intent: IntentRecord) {
        let agrees: Bool
        switch type {
        case .windowRoot:
            let vc = controller(body, .vc)
            agrees = hierarchy.windows.contains { $0.root == vc }
        case .navPush:
            agrees = stackTop(body) == controller(body, .vc)
        case .navPopTo:
            agrees = stackTop(body) == controller(body, .vc)
        case .navPop:
            let nav = controller(body, .nav)
            agrees = controller(body, .vc).map { vc in nav.map { !hierarchy[$0].items.contains(vc) } ?? false } ?? true
        case .navPopToRoot:
            agrees = controller(body, .nav).map { hierarchy[$0].items.count <= 1 } ?? false
        case .navSet, .tabSet:
            let container = controller(body, type == .navSet ? .nav : .tab)
            var listed: [Int32] = []
            body.field(.vcs)?.forEachElement { value in
                if let reference = ControllerReference(value) { listed.append(register(reference)) }
            }
            agrees = container.map { hierarchy[$0].items == listed } ?? false
        case .tabSelect:
            guard let tab = controller(body, .tab) else { return }
            let node = hierarchy[tab]
            let selected = node.items.indices.contains(Int(node.selected)) ? node.items[Int(node.selected)] : -1
            if let index = body.field(.index)?.integer {
                agrees = index == Int64(node.selected)
            } else {
                agrees = controller(body, .vc) == selected
            }
        case .splitSet:
            guard let split = controller(body, .split) else { return }
            let node = hierarchy[split]
            var matches = true
            for (field, column) in [(FieldName.primary, node.primary), (.secondary, node.secondary), (.supplementary, node.supplementary)] {
                guard let vc = controller(body, field) else { continue }
                if vc != column && !(field == .secondary && node.movedFromSecondary.contains(vc)) { matches = false }
            }
            agrees = matches
        case .present:
            agrees = controller(body, .vc).map { hierarchy[$0].placement == .presented } ?? false
        case .dismiss:
            guard let vc = controller(body, .vc) else { return }
            var presenting = false
            hierarchy.forEachOnParentChain(of: vc) { handle in
                presenting = presenting || hierarchy[handle].presented >= 0
                return !presenting
            }
            agrees = !presenting && hierarchy[hierarchy.contextRoot(of: vc)].placement != .presented
        case .childAdd:
            let parent = controller(body, .parent)
            agrees = controller(body, .vc).map { hierarchy[$0].placement == .child && hierarchy[$0].parent == parent } ?? false
        default:
            agrees = true
        }
        guard !agrees else { return }
        raise(
            .resolutionMismatch, rule: intent.rule, [],
            "This \(type.name) carries out the intent with seq \(intent.sequence), which \(intent.rule) resolved as \(intent.resolution.action): they disagree.")
    }

    private mutating func stackTop(_ body: StoredBody) -> Int32? {
        controller(body, .nav).flatMap { hierarchy[$0].items.last }
    }
}
