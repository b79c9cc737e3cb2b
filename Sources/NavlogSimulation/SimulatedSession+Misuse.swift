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

    /// Emits the events of one recipe; returns the seq of the event that must raise `code`, or
    /// nil when the recipe does not apply in this state.
    mutating func misuse(_ code: AnomalyCode) -> UInt64? {
        let path = replayer.focusPath
        guard let focus = path.last, let focused = controller(focus) else { return nil }
        let hierarchy = replayer.hierarchy
        let nav = path.last { isNavigation($0) }.flatMap(controller)
        func event(_ type: String, _ fill: (inout JSONWriter, inout SimulatedSession) -> Void) -> UInt64 {
            var builder = begin(type)
            fill(&builder, &self)
            end(&builder)
            return sequence
        }
        switch code {
        case .presentDetached:
            let detached = stray(), presented = stray()
            return event("present") { e, s in
                e.member("from", json: s.reference(detached))
                e.member("vc", json: s.reference(presented))
            }
        case .presentWhilePresenting:
            guard let presenter = path.last(where: { hierarchy[$0.index].presented >= 0 }), let from = controller(presenter) else { return nil }
            let presented = stray()
            return event("present") { e, s in
                e.member("from", json: s.reference(from))
                e.member("vc", json: s.reference(presented))
                e.member("style", "fullScreen")
            }
        case .presentAttached:
            guard hierarchy[focus.index].presented < 0, let root = path.first.flatMap(controller), root != focused,
                !path.contains(where: { hierarchy[$0.index].presented >= 0 })
            else { return nil }
            return event("present") { e, s in
                e.member("from", json: s.reference(focused))
                e.member("vc", json: s.reference(root))
                e.member("style", "fullScreen")
            }
        case .popoverWithoutAnchor:
            guard !compact, !path.contains(where: { hierarchy[$0.index].presented >= 0 }) else { return nil }
            let presented = stray()
            return event("present") { e, s in
                e.member("from", json: s.reference(focused))
                e.member("vc", json: s.reference(presented))
                e.member("style", "popover")
            }
        case .dismissNothing:
            guard !path.contains(where: { hierarchy[$0.index].placement == .presented || hierarchy[$0.index].presented >= 0 }) else { return nil }
            return event("dismiss") { e, s in e.member("vc", json: s.reference(focused)) }
        case .pushDuplicate:
            guard let nav, let navHandle = path.last(where: { isNavigation($0) }),
                let top = hierarchy[navHandle.index].items.last.flatMap({ controller(ControllerHandle(index: $0)) })
            else { return nil }
            let topIndex = top
            return event("nav.push") { e, s in
                e.member("nav", json: s.reference(nav))
                e.member("vc", json: s.reference(topIndex))
            }
        case .pushNavigationController:
            guard let nav else { return nil }
            let other = stray(className: "UINavigationController", kind: "navigation")
            return event("nav.push") { e, s in
                e.member("nav", json: s.reference(nav))
                e.member("vc", json: s.reference(other))
            }
        case .nestedTransition:
            guard let nav else { return nil }
            let first = stray(), second = stray()
            _ = event("nav.push") { e, s in
                e.member("nav", json: s.reference(nav))
                e.member("vc", json: s.reference(first))
                e.member("animated", true)
            }
            return event("nav.push") { e, s in
                e.member("nav", json: s.reference(nav))
                e.member("vc", json: s.reference(second))
                e.member("animated", true)
            }
        case .popRoot:
            guard let single = path.last(where: { isNavigation($0) && hierarchy[$0.index].items.count == 1 }).flatMap(controller) else { return nil }
            return event("nav.pop") { e, s in e.member("nav", json: s.reference(single)) }
        case .popToMissing:
            guard let nav else { return nil }
            let missing = stray()
            return event("nav.popTo") { e, s in
                e.member("nav", json: s.reference(nav))
                e.member("vc", json: s.reference(missing))
            }
        case .containmentOrder:
            // R11 needs evidence that the session records willMove: a correct removal first.
            let removed = stray(), child = stray()
            _ = event("child.add") { e, s in
                e.member("parent", json: s.reference(focused))
                e.member("vc", json: s.reference(removed))
            }
            _ = event("child.willMove") { e, s in
                e.member("vc", json: s.reference(removed))
                e.member("parent", json: Array("null".utf8))
            }
            _ = event("child.remove") { e, s in e.member("vc", json: s.reference(removed)) }
            _ = event("child.add") { e, s in
                e.member("parent", json: s.reference(focused))
                e.member("vc", json: s.reference(child))
            }
            return event("child.remove") { e, s in e.member("vc", json: s.reference(child)) }
        case .unwindNoTarget:
            return event("unwind") { e, s in
                e.member("source", json: s.reference(focused))
                e.member("action", "unwindToNowhere:")
            }
        case .detachedAppearance:
            let destination = stray()
            _ = event("segue") { e, s in
                e.member("kind", "custom")
                e.member("source", json: s.reference(focused))
                e.member("destination", json: s.reference(destination))
            }
            return event("vc.appear") { e, s in
                e.member("vc", json: s.reference(destination))
                e.member("phase", "will")
            }
        case .unbalancedAppearance:
            return event("vc.appear") { e, s in
                e.member("vc", json: s.reference(focused))
                e.member("phase", "did")
            }
        case .resolutionMismatch:
            let shown = stray(), other = stray()
            let intent = event("show") { e, s in
                e.member("from", json: s.reference(focused))
                e.member("vc", json: s.reference(shown))
            }
            return event("present") { e, s in
                e.member("from", json: s.reference(focused))
                e.member("vc", json: s.reference(other))
                e.member("cause", Int64(intent))
            }
        case .unknownController:
            let orphan = stray(className: "UINavigationController", kind: "navigation"), pushed = stray()
            return event("nav.push") { e, s in
                e.member("nav", json: s.reference(orphan))
                e.member("vc", json: s.reference(pushed))
            }
        case .seqGap:
            sequence += 1
            return event("mark") { e, _ in e.member("name", "after_lost_events") }
        case .seqDuplicate:
            sequence -= 1
            return event("mark") { e, _ in e.member("name", "resent") }
        }
    }
}
