import NavlogJSON
import NavlogReplay
import NavlogStoryboard

/// Misuse on purpose: each recipe makes the engine raise one anomaly code, and is kept only if
/// it did (then recorded in ``SimulatedSession/injected`` for the tests to find).
extension SimulatedSession {
    /// The codes the simulator knows how to cause.
    static let injectableCodes: [AnomalyCode] = [
        .presentDetached, .presentWhilePresenting, .presentAttached, .popoverWithoutAnchor, .dismissNothing, .pushDuplicate,
        .pushNavigationController, .nestedTransition, .popRoot, .popToMissing, .containmentOrder, .unwindNoTarget, .detachedAppearance,
        .unbalancedAppearance, .resolutionMismatch, .unknownController, .seqGap, .seqDuplicate,
    ]

    /// Tries misuse recipes (starting at a random one) until one applies here; false when none does.
    mutating func injectMisuse(_ tools: inout SimulationTools) -> Bool {
        let codes = Self.injectableCodes
        let first = pick(codes.count)
        for offset in 0..<codes.count {
            let code = codes[(first + offset) % codes.count]
            var trial = self
            trial.nextTime(trial.thinkTime(mean: 3_000_000))
            let baseline = trial.replayer.anomalies.count
            guard let sequence = trial.misuse(code) else { continue }
            _ = trial.flush(&tools)
            let raised = trial.replayer.anomalies[baseline...]
            guard raised.contains(where: { $0.code == code && $0.event.sequence == sequence }) else { continue }
            trial.injected.append(InjectedMisuse(session: id, sequence: sequence, code: code))
            self = trial
            return true
        }
        return false
    }

    /// A controller created only to misuse it (never part of the storyboard's graph).
    mutating func stray(className: String = "StrayViewController", kind: String? = nil) -> Int {
        nextAddress &+= 0x80
        let controller = SimulatedController(
            id: "0x" + String(nextAddress, radix: 16), storyboard: 0, sceneID: "", className: className, kind: kind, definesContext: false,
            unwindActions: [])
        controllers.append(controller)
        controllerByID[controller.id] = controllers.count - 1
        return controllers.count - 1
    }

    /// Where a recipe is tried: the engine's focus path and hierarchy, the focused controller,
    /// the innermost navigation controller on the path.
    struct MisuseSite {
        var path: [ControllerHandle]
        var hierarchy: Hierarchy
        var focus: ControllerHandle
        var focused: Int
        var nav: Int?

        /// Whether a controller on the focus path is presenting something.
        var pathPresents: Bool { path.contains { hierarchy[$0.index].presented >= 0 } }
    }

    /// Emits the events of one recipe; returns the seq of the event that must raise `code`, or
    /// nil when the recipe does not apply in this state.
    mutating func misuse(_ code: AnomalyCode) -> UInt64? {
        let path = replayer.focusPath
        guard let focus = path.last, let focused = controller(focus) else { return nil }
        let site = MisuseSite(
            path: path, hierarchy: replayer.hierarchy, focus: focus, focused: focused, nav: path.last { isNavigation($0) }.flatMap(controller))
        switch code {
        case .presentDetached: return presentDetached()
        case .presentWhilePresenting: return presentWhilePresenting(site)
        case .presentAttached: return presentAttached(site)
        case .popoverWithoutAnchor: return popoverWithoutAnchor(site)
        case .dismissNothing: return dismissNothing(site)
        case .unwindNoTarget: return unwindNoTarget(site)
        case .pushDuplicate: return pushDuplicate(site)
        case .pushNavigationController: return pushNavigationController(site)
        case .nestedTransition: return nestedTransition(site)
        case .popRoot: return popRoot(site)
        case .popToMissing: return popToMissing(site)
        case .unknownController: return unknownController()
        case .containmentOrder: return containmentOrder(site)
        case .detachedAppearance: return detachedAppearance(site)
        case .unbalancedAppearance: return unbalancedAppearance(site)
        case .resolutionMismatch: return resolutionMismatch(site)
        case .seqGap: return seqGap()
        case .seqDuplicate: return seqDuplicate()
        }
    }

    // MARK: - Events of the recipes

    /// Emits an event of `type` whose fields `fill` writes; returns its seq.
    private mutating func misuseEvent(_ type: String, _ fill: (inout JSONWriter, inout SimulatedSession) -> Void) -> UInt64 {
        var builder = begin(type)
        fill(&builder, &self)
        end(&builder)
        return sequence
    }

    /// Emits `present` of `vc` from `from`, with `style` and `cause` when given; returns its seq.
    private mutating func present(_ vc: Int, from: Int, style: String? = nil, cause: UInt64? = nil) -> UInt64 {
        misuseEvent("present") { e, s in
            e.member("from", json: s.reference(from))
            e.member("vc", json: s.reference(vc))
            if let style { e.member("style", style) }
            if let cause { e.member("cause", Int64(cause)) }
        }
    }

    /// Emits `nav.push` of `vc` onto `nav`, saying `animated` when it is; returns its seq.
    private mutating func push(_ vc: Int, onto nav: Int, animated: Bool = false) -> UInt64 {
        misuseEvent("nav.push") { e, s in
            e.member("nav", json: s.reference(nav))
            e.member("vc", json: s.reference(vc))
            if animated { e.member("animated", true) }
        }
    }

    // MARK: - Presentations and unwinds

    /// A1 (R3a): a presentation from a controller that is in no window.
    private mutating func presentDetached() -> UInt64? {
        let detached = stray(), presented = stray()
        return present(presented, from: detached)
    }

    /// A2 (R3c): a presentation from a controller that is already presenting.
    private mutating func presentWhilePresenting(_ site: MisuseSite) -> UInt64? {
        guard let presenter = site.path.last(where: { site.hierarchy[$0.index].presented >= 0 }), let from = controller(presenter) else { return nil }
        let presented = stray()
        return present(presented, from: from, style: "fullScreen")
    }

    /// A3 (R3d): presenting the window's root, a controller already in the hierarchy.
    private mutating func presentAttached(_ site: MisuseSite) -> UInt64? {
        guard site.hierarchy[site.focus.index].presented < 0, let root = site.path.first.flatMap(controller), root != site.focused, !site.pathPresents
        else { return nil }
        return present(root, from: site.focused, style: "fullScreen")
    }

    /// A4 (R6): a popover (in a regular width) without an anchor.
    private mutating func popoverWithoutAnchor(_ site: MisuseSite) -> UInt64? {
        guard !compact, !site.pathPresents else { return nil }
        let presented = stray()
        return present(presented, from: site.focused, style: "popover")
    }

    /// A5 (R7): a dismissal where nothing is presented.
    private mutating func dismissNothing(_ site: MisuseSite) -> UInt64? {
        guard !site.path.contains(where: { site.hierarchy[$0.index].placement == .presented || site.hierarchy[$0.index].presented >= 0 }) else {
            return nil
        }
        return misuseEvent("dismiss") { e, s in e.member("vc", json: s.reference(site.focused)) }
    }

    /// A12 (R17): an unwind whose action no controller implements.
    private mutating func unwindNoTarget(_ site: MisuseSite) -> UInt64? {
        misuseEvent("unwind") { e, s in
            e.member("source", json: s.reference(site.focused))
            e.member("action", "unwindToNowhere:")
        }
    }

    // MARK: - Navigation stacks and transitions

    /// A6 (R8): pushing the controller already on top of the stack.
    private mutating func pushDuplicate(_ site: MisuseSite) -> UInt64? {
        guard let nav = site.nav, let navHandle = site.path.last(where: { isNavigation($0) }),
            let top = site.hierarchy[navHandle.index].items.last.flatMap({ controller(ControllerHandle(index: $0)) })
        else { return nil }
        return push(top, onto: nav)
    }

    /// A7 (R8): pushing a navigation controller.
    private mutating func pushNavigationController(_ site: MisuseSite) -> UInt64? {
        guard let nav = site.nav else { return nil }
        let other = stray(className: "UINavigationController", kind: "navigation")
        return push(other, onto: nav)
    }

    /// A8 (R8, E2): an animated push while the previous animated push is still running.
    private mutating func nestedTransition(_ site: MisuseSite) -> UInt64? {
        guard let nav = site.nav else { return nil }
        let first = stray(), second = stray()
        _ = push(first, onto: nav, animated: true)
        return push(second, onto: nav, animated: true)
    }

    /// A9 (R9): popping a stack that holds only its root.
    private mutating func popRoot(_ site: MisuseSite) -> UInt64? {
        guard let single = site.path.last(where: { isNavigation($0) && site.hierarchy[$0.index].items.count == 1 }).flatMap(controller) else {
            return nil
        }
        return misuseEvent("nav.pop") { e, s in e.member("nav", json: s.reference(single)) }
    }

    /// A10 (R9): popping to a controller that is not on the stack.
    private mutating func popToMissing(_ site: MisuseSite) -> UInt64? {
        guard let nav = site.nav else { return nil }
        let missing = stray()
        return misuseEvent("nav.popTo") { e, s in
            e.member("nav", json: s.reference(nav))
            e.member("vc", json: s.reference(missing))
        }
    }

    /// A16 (H2): a push onto a navigation controller no event has put in the hierarchy.
    private mutating func unknownController() -> UInt64? {
        let orphan = stray(className: "UINavigationController", kind: "navigation"), pushed = stray()
        return push(pushed, onto: orphan)
    }

    // MARK: - Containment, appearance and intents

    /// A11 (R11): a child removed without `willMove(toParent: nil)`, in a session that records it.
    private mutating func containmentOrder(_ site: MisuseSite) -> UInt64? {
        // R11 needs evidence that the session records willMove: a correct removal first.
        let removed = stray(), child = stray()
        _ = misuseEvent("child.add") { e, s in
            e.member("parent", json: s.reference(site.focused))
            e.member("vc", json: s.reference(removed))
        }
        _ = misuseEvent("child.willMove") { e, s in
            e.member("vc", json: s.reference(removed))
            e.member("parent", json: Array("null".utf8))
        }
        _ = misuseEvent("child.remove") { e, s in e.member("vc", json: s.reference(removed)) }
        _ = misuseEvent("child.add") { e, s in
            e.member("parent", json: s.reference(site.focused))
            e.member("vc", json: s.reference(child))
        }
        return misuseEvent("child.remove") { e, s in e.member("vc", json: s.reference(child)) }
    }

    /// A13 (R18, R20): an appearance callback of a controller a custom segue left outside the hierarchy.
    private mutating func detachedAppearance(_ site: MisuseSite) -> UInt64? {
        let destination = stray()
        _ = misuseEvent("segue") { e, s in
            e.member("kind", "custom")
            e.member("source", json: s.reference(site.focused))
            e.member("destination", json: s.reference(destination))
        }
        return misuseEvent("vc.appear") { e, s in
            e.member("vc", json: s.reference(destination))
            e.member("phase", "will")
        }
    }

    /// A14 (R20): a `did` appearance without its `will`.
    private mutating func unbalancedAppearance(_ site: MisuseSite) -> UInt64? {
        misuseEvent("vc.appear") { e, s in
            e.member("vc", json: s.reference(site.focused))
            e.member("phase", "did")
        }
    }

    /// A15: an operation whose `cause` names an intent to show another controller.
    private mutating func resolutionMismatch(_ site: MisuseSite) -> UInt64? {
        let shown = stray(), other = stray()
        let intent = misuseEvent("show") { e, s in
            e.member("from", json: s.reference(site.focused))
            e.member("vc", json: s.reference(shown))
        }
        return present(other, from: site.focused, cause: intent)
    }

    // MARK: - Sequence numbers

    /// A17: a `seq` that skips one.
    private mutating func seqGap() -> UInt64? {
        sequence += 1
        return misuseEvent("mark") { e, _ in e.member("name", "after_lost_events") }
    }

    /// A18: a `seq` sent twice.
    private mutating func seqDuplicate() -> UInt64? {
        sequence -= 1
        return misuseEvent("mark") { e, _ in e.member("name", "resent") }
    }
}
