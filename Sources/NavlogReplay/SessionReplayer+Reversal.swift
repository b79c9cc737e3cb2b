import NavlogEvents

/// Cancelled interactive pops and dismissals in sessions that record no transitions (E6, E5).
///
/// UIKit calls `popViewController` or `dismiss` when an interactive gesture begins, so the call
/// is recorded whether or not the user completes the gesture. Without `transition.end`, only
/// the appearance callbacks that follow tell: the removed controller appearing again before the
/// revealed one's did-appear means the gesture was cancelled. Until one of them comes the
/// removal is pending: the hierarchy shows it in progress and the focus (dwell, views) stays
/// where it was, as R19 does for a recorded interactive transition. Then it is resolved from its
/// own event: rolled back as if it never happened, or completed with the focus moved at the
/// instant of the call (the view before it ends there, the dwell since is the revealed screen's).
extension SessionReplayer {
    /// E6: a pop or dismissal whose outcome the evidence does not show yet.
    struct PendingRemoval: Sendable, Equatable {
        /// A pop: the navigation controller and the controller it popped (re-placed on top if
        /// the gesture was cancelled; its subtree stays linked to it meanwhile). -1 for a dismissal.
        var nav: Int32 = -1
        var popped: Int32 = -1
        /// A dismissal: the hierarchy before it, restored if it was cancelled.
        var snapshot: Hierarchy?
        /// Its event: when, its `seq`, and which operation (`nav.pop` or `dismiss`).
        var began: Int64
        var sequence: UInt64?
        var cause: EventType
        /// The screen it reveals: its did-appear proves the gesture completed.
        var revealed: Int32
        /// Foreground time since `began`, counted meanwhile to the screen focused before it.
        var foregroundTime: Int64 = 0
    }

    /// Whether `vc` is one of the controllers the pending removal took out of the hierarchy
    /// (the popped controller or the dismissed ones, with their children): read only for the
    /// appearance callbacks that come while it is pending.
    func pendingRemovalTookOut(_ vc: Int32, _ pending: PendingRemoval) -> Bool {
        if pending.popped >= 0 { return vc == pending.popped || hierarchy.isAncestor(pending.popped, of: vc) }
        guard let snapshot = pending.snapshot, Int(vc) < snapshot.nodes.count else { return false }
        return snapshot.isAttached(vc) && !hierarchy.isAttached(vc)
    }

    /// How long a removal may stay pending: a gesture held longer than this is taken as
    /// completed when nothing decided it (UIKit's interactive transitions rarely last a second).
    static let pendingRemovalLimit: Int64 = 10_000_000

    /// Whether a `nav.pop` or `dismiss` about to be applied may be an interactive gesture whose
    /// outcome only later callbacks tell (E6): animated, in a session that records appearance
    /// callbacks and no transitions.
    func mayBeInteractiveGesture(animated: Bool) -> Bool {
        animated && !evidence.contains(.transitions) && !evidence.intersection([.willAppear, .didAppear, .willDisappear, .didDisappear]).isEmpty
    }

    /// After a pop that ``mayBeInteractiveGesture(animated:)`` took `popped` off `nav`: holds the
    /// focus until the evidence shows whether it completed.
    mutating func beginPendingPop(_ popped: Int32, from nav: Int32) {
        pendingRemoval = PendingRemoval(
            nav: nav, popped: popped, began: current.timestamp, sequence: current.sequence, cause: .navPop, revealed: hierarchy[nav].items.last ?? -1)
    }

    /// After a dismissal that ``mayBeInteractiveGesture(animated:)`` (`before` is the hierarchy
    /// before it): holds the focus until the evidence shows whether it completed.
    mutating func beginPendingDismissal(before: Hierarchy) {
        pendingRemoval = PendingRemoval(snapshot: before, began: current.timestamp, sequence: current.sequence, cause: .dismiss, revealed: focusedHandle())
    }

    /// Before `event` is applied: resolves the pending removal when the event decides it.
    mutating func decidePendingRemoval(_ event: ReplayEvent) {
        guard let pending = pendingRemoval else { return }
        if event.timestamp &- pending.began > Self.pendingRemovalLimit { return completePendingRemoval() }
        switch event.type {
        case .vcAppear, .vcDisappear:
            guard let value = event.body.field(.vc), let reference = ControllerReference(value),
                let vc = controllers.handle(forID: reference.id)?.index
            else { return }
            let did = event.body.field(.phase)?.equals("did") ?? false
            if event.type == .vcAppear, pendingRemovalTookOut(vc, pending) {
                cancelPendingRemoval()
            } else if did, event.type == .vcAppear ? vc == pending.revealed : pendingRemovalTookOut(vc, pending) {
                completePendingRemoval()
            }
        case .mark, .appForeground, .appBackground:
            break
        default:
            completePendingRemoval()
        }
    }

    /// E6: the gesture was cancelled: the hierarchy is as if the pop or dismissal never
    /// happened; the focus never moved. The reversed callbacks that follow are E5's.
    mutating func cancelPendingRemoval() {
        guard let pending = pendingRemoval else { return }
        pendingRemoval = nil
        removalsResolved += 1
        removalsCancelled += 1
        var restored: [Int32] = []
        if pending.popped >= 0 {
            hierarchy.place(pending.popped, in: .stack(pending.nav, at: nil))
            restored = [pending.popped]
        } else if var snapshot = pending.snapshot {
            if controllers.count > 0 { snapshot.ensure(ControllerHandle(index: Int32(controllers.count - 1))) }
            for index in snapshot.nodes.indices where snapshot.isAttached(Int32(index)) && !hierarchy.isAttached(Int32(index)) {
                restored.append(Int32(index))
            }
            hierarchy = snapshot
        }
        cancelledTransitionAt = current.timestamp
        cancelledRemoval = restored + (pending.revealed >= 0 ? [pending.revealed] : [])
        // E5: a will-appear the gesture sent (the revealed screen's, its embedded children's) is
        // balanced by the cancel, recorded or not (an appear-only recorder never sees the
        // reversing disappear): those controllers are off screen again.
        for index in appearance.indices where appearance[index] == .appearing && appearedAtOperation[index] == operations {
            appearance[index] = .disappeared
        }
    }

    /// E6: the pop or dismissal completed: the focus moves at the instant of its call, with the
    /// foreground time since then counted to the revealed screen.
    mutating func completePendingRemoval() {
        guard let pending = pendingRemoval else { return }
        pendingRemoval = nil
        removalsResolved += 1
        let newFocus = focusedHandle()
        guard newFocus != focusedScreen else { return }
        if focusedScreen >= 0, Int(focusedScreen) < dwell.count { dwell[Int(focusedScreen)] = max(0, dwell[Int(focusedScreen)] &- pending.foregroundTime) }
        if dwell.count < controllers.count { dwell.append(contentsOf: repeatElement(0, count: controllers.count - dwell.count)) }
        moveFocus(to: newFocus, at: pending.began, cause: pending.cause, detail: nil, sequence: pending.sequence)
        if newFocus >= 0, Int(newFocus) < dwell.count {
            dwell[Int(newFocus)] = dwell[Int(newFocus)].addingReportingOverflow(pending.foregroundTime).overflow ? .max : dwell[Int(newFocus)] + pending.foregroundTime
        }
    }

    /// The state as the rest of the session shows it (E6 hindsight for a replay stopped while a
    /// removal is pending): `cancelled` when the session's later events prove the gesture was
    /// cancelled, else completed.
    public mutating func resolvePendingRemoval(cancelled: Bool) {
        if cancelled { cancelPendingRemoval() } else { completePendingRemoval() }
    }

    /// Whether a pop or dismissal is pending (E6): readers that stop here resolve it with the
    /// session's later events (``resolvePendingRemoval(cancelled:)``).
    public var hasPendingRemoval: Bool { pendingRemoval != nil }

    /// E5: whether an interactive transition nobody recorded could have revealed or covered
    /// `vc` (then a reversal of its callbacks is no A14): a controller of a pending pop or
    /// dismissal, of one found cancelled within ``cancelledTransitionGrace``, the focused
    /// screen, the controller beneath it on its navigation stack, the presenter's screen under
    /// a presented one; each with its embedded children.
    func couldBeInteractivelyExposed(_ vc: Int32) -> Bool {
        if let pending = pendingRemoval, pending.revealed == vc || pendingRemovalTookOut(vc, pending) { return true }
        if wasInCancelledRemoval(vc) { return true }
        // A controller never placed, in a session that records no containment calls, may be an
        // embedded child of one the gesture moves (its callbacks come with its parent's).
        if evidence.intersection(.containment).isEmpty, !hierarchy[vc].everPlaced,
            pendingRemoval != nil || (cancelledTransitionAt != .min && current.timestamp &- cancelledTransitionAt <= Self.cancelledTransitionGrace)
        {
            return true
        }
        var base = vc
        var steps = 0
        while hierarchy[base].placement == .child, hierarchy[base].parent >= 0, steps < 64 {
            base = hierarchy[base].parent
            steps += 1
        }
        let focus = focusedHandle()
        guard focus >= 0 else { return false }
        if base == focus || base == focusedScreen { return true }
        let top = hierarchy[focus]
        if top.placement == .stack, top.parent >= 0 {
            let items = hierarchy[top.parent].items
            if items.count >= 2, items[items.count - 2] == base { return true }
        }
        let root = hierarchy.contextRoot(of: focus)
        if hierarchy[root].placement == .presented, hierarchy[root].presenter >= 0 {
            let presenter = hierarchy[root].presenter
            if base == presenter { return true }
            // The screen the presenter shows: in its subtree, the top of its stack if in one.
            let node = hierarchy[base]
            let shownByPresenter = hierarchy.isAncestor(presenter, of: base) && (node.placement != .stack || hierarchy[node.parent].items.last == base)
            if shownByPresenter { return true }
        }
        return false
    }

    /// Whether `vc` was taken out by a pop or dismissal just found cancelled (E6), within
    /// ``cancelledTransitionGrace``: its callbacks reverse what the gesture began (E5).
    func wasInCancelledRemoval(_ vc: Int32) -> Bool {
        cancelledTransitionAt != .min && current.timestamp &- cancelledTransitionAt <= Self.cancelledTransitionGrace && cancelledRemoval.contains(vc)
    }
}
