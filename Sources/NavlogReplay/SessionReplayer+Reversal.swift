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
        /// A dismissal: the presentations it ended, as pairs of the presented controller and its
        /// presenter, put back if the gesture was cancelled. Only these links change when a
        /// presentation ends (what a presented controller contains stays linked to it), so they
        /// are all a cancel needs: a copy of the whole hierarchy would cost every dismissal.
        var dismissed = PresentationLinks()
        /// Its event: when, its `seq`, and which operation (`nav.pop` or `dismiss`).
        var began: Int64
        var sequence: UInt64?
        var cause: EventType
        // (The three fields below sit in what would be padding after `cause`: the struct stays
        // the size it was before `gesture`, and the replayer copies and tests it per event.)
        /// Whether the session records navigation calls only (E7): then the next operation
        /// decides, however long the user stays, instead of appearance callbacks.
        var navigationOnly = false
        /// ``named`` and ``earlierFitsAsWell``, as bits (1, 2) in what would be padding.
        private var popFlags: UInt8 = 0
        /// The position in the session (0-based) of the animated pop or dismissal whose gesture
        /// a put-back of this removal proves cancelled (E7): its own event, or for a pop found
        /// beneath an unproven one, that one's. -1 for none.
        var gesture: Int32 = -1
        /// The screen it reveals: its did-appear proves the gesture completed.
        var revealed: Int32
        /// A pop (E7): the depth of its stack after it, and the lowest depth since (pushes
        /// above leave what was beneath in place; pops and pops-to take it away). In what would
        /// be padding before `foregroundTime`: the replayer copies removals per event, and a
        /// bigger one is copied through an outlined function (1% of an index build).
        var lowestDepth: Int32 = 0
        /// Foreground time since `began`, counted meanwhile to the screen focused before it.
        var foregroundTime: Int64 = 0

        /// A pop (E7): whether its event named the controller it popped (`vc`): then no other
        /// story can have it pop another.
        var named: Bool {
            get { popFlags & 1 != 0 }
            set { popFlags = newValue ? popFlags | 1 : popFlags & ~1 }
        }

        /// A pop (E7): whether an earlier unproven pop of the same stack, neither naming its
        /// controller, could be the cancelled one instead when a later call proves the one
        /// this pop took still there: that earlier pop happened while this pop's controller
        /// was already on the stack, and the stack never went below it since, so had that one
        /// been cancelled, this pop would have taken the controller the earlier one left.
        var earlierFitsAsWell: Bool {
            get { popFlags & 2 != 0 }
            set { popFlags = newValue ? popFlags | 2 : popFlags & ~2 }
        }

        init(
            nav: Int32 = -1, popped: Int32 = -1, dismissed: PresentationLinks = PresentationLinks(), began: Int64, sequence: UInt64?, cause: EventType,
            revealed: Int32, foregroundTime: Int64 = 0, navigationOnly: Bool = false, gesture: Int32 = -1
        ) {
            (self.nav, self.popped, self.dismissed, self.began, self.sequence, self.cause) = (nav, popped, dismissed, began, sequence, cause)
            (self.revealed, self.foregroundTime, self.navigationOnly, self.gesture) = (revealed, foregroundTime, navigationOnly, gesture)
        }
    }

    /// The presentations a dismissal ended (pairs of presented controller and presenter), held
    /// inline: a pending or unproven removal is copied as plain bytes, with no array to retain
    /// (the index build reads them at every event of a session that has one). A swipe-down ends
    /// one sheet and what it presents: up to ``capacity`` pairs are kept, the outermost first;
    /// deeper ones are not put back by a cancel.
    struct PresentationLinks: Sendable, Equatable {
        static let capacity = 8
        private var storage = InlineArray<16, Int32>(repeating: -1)
        /// How many handles are held (twice the number of pairs).
        private(set) var count = 0

        init() {}

        /// The first ``capacity`` pairs of `handles`.
        init(_ handles: [Int32]) {
            for handle in handles.prefix(2 * Self.capacity) {
                storage[count] = handle
                count += 1
            }
        }

        var isEmpty: Bool { count == 0 }

        subscript(index: Int) -> Int32 { storage[index] }

        /// The handles, in order (checkpoints).
        var handles: [Int32] { (0..<count).map { storage[$0] } }

        static func == (left: PresentationLinks, right: PresentationLinks) -> Bool { left.handles == right.handles }
    }

    /// What shows whether a pop or dismissal was a cancelled interactive gesture (E6, E7).
    enum GestureEvidence {
        /// The appearance callbacks that follow it (E6).
        case appearance
        /// The next navigation call (E7): the session records no appearance callbacks.
        case navigationCalls
    }

    /// Whether `vc` is one of the controllers the pending removal took out of the hierarchy
    /// (the popped controller or the dismissed ones, with their children and presentations).
    func pendingRemovalTookOut(_ vc: Int32, _ pending: PendingRemoval) -> Bool {
        if pending.popped >= 0 { return vc == pending.popped || hierarchy.isAncestor(pending.popped, of: vc) }
        var index = 0
        while index < pending.dismissed.count {
            if hierarchy.isAncestor(pending.dismissed[index], of: vc) { return true }
            index += 2
        }
        return false
    }

    /// How long a removal may stay pending: a gesture held longer than this is taken as
    /// completed when nothing decided it (UIKit's interactive transitions rarely last a second).
    static let pendingRemovalLimit: Int64 = 10_000_000

    /// Whether a `nav.pop` or `dismiss` about to be applied may be an interactive gesture whose
    /// outcome only later events tell, and which events tell: animated, in a session that records
    /// no transitions (those say it themselves, R19); appearance callbacks when the session
    /// records them (E6), else the next navigation call (E7).
    func interactiveGestureEvidence(animated: Bool) -> GestureEvidence? {
        guard animated, !evidence.contains(.transitions) else { return nil }
        return evidence.intersection([.willAppear, .didAppear, .willDisappear, .didDisappear]).isEmpty ? .navigationCalls : .appearance
    }

    /// After a pop that ``interactiveGestureEvidence(animated:)`` took `popped` off `nav`: holds
    /// the focus until the evidence shows whether it completed.
    mutating func beginPendingPop(_ popped: Int32, from nav: Int32, evidence: GestureEvidence, named: Bool, earlierFitsAsWell: Bool) {
        pendingRemoval = PendingRemoval(
            nav: nav, popped: popped, began: current.timestamp, sequence: current.sequence, cause: .navPop, revealed: hierarchy[nav].items.last ?? -1,
            navigationOnly: evidence == .navigationCalls, gesture: Int32(clamping: current.index))
        pendingRemoval!.lowestDepth = Int32(clamping: hierarchy[nav].items.count)
        pendingRemoval!.named = named
        pendingRemoval!.earlierFitsAsWell = earlierFitsAsWell
        if evidence == .navigationCalls, isCancelledInHindsight(current.index) {
            // Whatever proved it, an earlier pop that would have left this one's controller in
            // place fits the proof as well (in this story: the replay that found the proof may
            // have had another).
            if earlierFitsAsWell && !named { markChosenInHindsight(current.index) }
            cancelPendingRemoval()
        }
    }

    /// After a pop of `nav` that left `depth` controllers on it (E7): whether an unproven pop
    /// of that stack that did not name its controller could be the cancelled one instead of
    /// this pop (``PendingRemoval/earlierFitsAsWell``). With `lowering` (a pop that is no
    /// gesture, or one found completed: ``lowerUnprovenDepths(of:to:)``), each unproven pop of
    /// the stack then has its lowest depth lowered; a gesture's pop lowers them only once
    /// found completed, since a cancelled one never took anything.
    mutating func notePop(of nav: Int32, leaving depth: Int, named: Bool, lowering: Bool) -> Bool {
        guard !unprovenRemovals.isEmpty else { return false }
        var fits = false
        var index = 0
        while index < unprovenRemovals.count {
            if unprovenRemovals[index].popped >= 0, unprovenRemovals[index].nav == nav, !named, !unprovenRemovals[index].named,
                unprovenRemovals[index].lowestDepth > Int32(clamping: depth), canPutBack(unprovenRemovals[index])
            {
                fits = true
                break
            }
            index += 1
        }
        if lowering { lowerUnprovenDepths(of: nav, to: Int32(clamping: depth)) }
        return fits
    }

    /// Lowers the lowest depth of each unproven pop of `nav` to `depth` (E7).
    mutating func lowerUnprovenDepths(of nav: Int32, to depth: Int32) {
        var index = 0
        while index < unprovenRemovals.count {
            if unprovenRemovals[index].popped >= 0, unprovenRemovals[index].nav == nav {
                unprovenRemovals[index].lowestDepth = min(unprovenRemovals[index].lowestDepth, depth)
            }
            index += 1
        }
    }

    /// After a dismissal that ``interactiveGestureEvidence(animated:)`` ended `dismissed`
    /// (pairs of presented controller and presenter): holds the focus until the evidence shows
    /// whether it completed.
    mutating func beginPendingDismissal(_ dismissed: [Int32], evidence: GestureEvidence) {
        pendingRemoval = PendingRemoval(
            dismissed: PresentationLinks(dismissed), began: current.timestamp, sequence: current.sequence, cause: .dismiss, revealed: focusedHandle(),
            navigationOnly: evidence == .navigationCalls, gesture: Int32(clamping: current.index))
        if evidence == .navigationCalls, isCancelledInHindsight(current.index) { cancelPendingRemoval() }
    }

    /// Before `event` is applied: resolves the pending removal when the event decides it.
    mutating func decidePendingRemoval(_ event: ReplayEvent) {
        guard let pending = pendingRemoval else { return }
        if pending.navigationOnly { return decideFromNavigationCall(event, pending) }
        if event.timestamp &- pending.began > Self.pendingRemovalLimit { return completePendingRemoval() }
        switch event.type {
        case .vcAppear, .vcDisappear, .mark, .appForeground, .appBackground:
            // An appearance callback decides in ``decidePendingRemoval(appearing:_:did:)``, once
            // its controller is read.
            break
        default:
            completePendingRemoval()
        }
    }

    /// Before an appearance callback of `vc` is judged (E6): the removed controller appearing
    /// again means the gesture was cancelled; the revealed one's did-appear, or the removed
    /// one's did-disappear, that it completed.
    mutating func decidePendingRemoval(appearing: Bool, _ vc: Int32, did: Bool) {
        guard let pending = pendingRemoval, !pending.navigationOnly else { return }
        if appearing, pendingRemovalTookOut(vc, pending) {
            cancelPendingRemoval()
        } else if did, appearing ? vc == pending.revealed : pendingRemovalTookOut(vc, pending) {
            completePendingRemoval()
        }
    }

    /// E7: in a session that records navigation calls only, the next operation decides a pending
    /// pop or dismissal: one that acts through a controller it removed (presents or shows from
    /// it, performs a segue or unwind from it, dismisses it, pops it or a stack it holds, adds a
    /// child to it), or pops the same stack past its root, shows the user was still there: the
    /// gesture was cancelled. Any other operation leaves the call as recorded. Marks, traits and
    /// the app going to the background and back decide nothing.
    mutating func decideFromNavigationCall(_ event: ReplayEvent, _ pending: PendingRemoval) {
        switch event.type {
        case .mark, .appForeground, .appBackground, .traitsChange, .vcAppear, .vcDisappear, .transitionEnd: return
        default: break
        }
        if let acting = actingControllers(of: event), uses(acting, pending) {
            if isChoice(acting, pending, among: unprovenRemovals) { noteRollbackChosen(Int(pending.gesture)) }
            cancelPendingRemoval()
        } else {
            completePendingRemoval()
            // Still unproven: a later operation through the removed controller puts it back.
            if unprovenRemovals.count == Self.unprovenRemovalLimit { unprovenRemovals.removeFirst() }
            unprovenRemovals.append(pending)
        }
    }

    /// How many removals a navigation-only session keeps as unproven (E7): the oldest is
    /// forgotten first. Every animated pop of such a session is one until a later call settles
    /// it, and a controller found still there may need the pops beneath it undone too.
    static let unprovenRemovalLimit = 64

    /// Whether an unproven removal can still be undone: its controllers were not placed
    /// anywhere since; for a dismissal, its presenter presents nothing else (presenting again
    /// would have been A2 had the sheet stayed, so the dismissal is taken as done).
    private func canPutBack(_ removal: PendingRemoval) -> Bool {
        if removal.popped >= 0 { return hierarchy[removal.popped].placement == .none && removal.revealed >= 0 }
        guard removal.dismissed.count >= 2 else { return false }
        let (presented, presenter) = (removal.dismissed[0], removal.dismissed[1])
        return hierarchy[presented].placement == .none && hierarchy[presenter].presented < 0
    }

    /// E7, later: before an operation, puts back an unproven removal whose controller the
    /// operation acts through (a controller popped by a possible gesture presents, is popped,
    /// is dismissed ...): the gesture was cancelled after all, and the operation is judged on
    /// the hierarchy with it in place (no A1, A5, A9 or A10 from a gesture nobody recorded).
    /// The screens before it are as they were shown: only this operation proves it.
    ///
    /// A popped controller goes back directly above the controller it sat on. Each unproven
    /// pop of a stack may have left its controller there, so the stack as the recorded calls
    /// make it lies within the stack that would be had every one been cancelled; a controller
    /// found still there proves everything beneath it in that stack is there too (only the
    /// top is ever popped), so a controller it sat on that was popped since is put back first.
    mutating func putBackUnprovenRemoval(for event: ReplayEvent) {
        guard let acting = actingControllers(of: event) else { return }
        // The list is moved out while it is worked on (no copy of it, none of the state), and
        // walked with plain loops: a closure over `self` here would copy the whole replayer.
        var removals: [PendingRemoval] = []
        swap(&removals, &unprovenRemovals)
        defer { swap(&removals, &unprovenRemovals) }
        var index = 0
        while index < removals.count {
            if canPutBack(removals[index]) { index += 1 } else { removals.remove(at: index) }
        }
        index = removals.count - 1
        while index >= 0, !uses(acting, removals[index]) { index -= 1 }
        if index >= 0 {
            putBack(index, from: &removals, chosen: isChoice(acting, removals[index], among: removals))
            removalsPutBack += 1
        }
        switch event.type {
        case .navPopTo, .navPopToRoot, .navSet:
            // They take what sat above the controller they keep, in either story: the unproven
            // pops above it are settled (the ones beneath it stay unproven).
            let nav = acting.first
            guard nav >= 0 else { break }
            var kept = 0
            if event.type == .navPopTo {
                // A pop to a controller the stack does not hold changes nothing (A10).
                guard acting.second >= 0, let position = hierarchy[nav].items.firstIndex(of: acting.second) else { break }
                kept = position
            } else if event.type == .navSet {
                kept = -1
            }
            settleUnprovenPops(of: nav, above: kept, in: &removals)
        case .present:
            // Presenting again from a presenter settles its unproven dismissal (over the sheet it
            // would have been A2).
            index = 0
            while index < removals.count {
                if removals[index].dismissed.count >= 2 && removals[index].dismissed[1] == acting.first { removals.remove(at: index) } else { index += 1 }
            }
        default: break
        }
    }

    /// Forgets the unproven pops of `nav` that sat at or above position `kept` of its stack
    /// (through the unproven pops beneath them): a pop to the controller there took them in
    /// either story.
    private func settleUnprovenPops(of nav: Int32, above kept: Int, in removals: inout [PendingRemoval]) {
        let items = hierarchy[nav].items
        let before = removals
        var index = 0
        while index < removals.count {
            guard removals[index].popped >= 0, removals[index].nav == nav else {
                index += 1
                continue
            }
            // Where it sat: the controller beneath it on the stack, through unproven pops.
            var beneath = removals[index].revealed
            var steps = 0
            while !items.contains(beneath), steps < before.count, let next = before.firstIndex(where: { $0.popped == beneath && $0.nav == nav }) {
                beneath = before[next].revealed
                steps += 1
            }
            if let position = items.firstIndex(of: beneath), position < kept { index += 1 } else { removals.remove(at: index) }
        }
    }

    /// After a pop (without animation: no gesture) of `popped` off `nav`, in a session with an
    /// unproven pop of a controller that sat on `popped`: had that gesture been cancelled, this
    /// pop took that controller and `popped` is still there, so its removal is unproven too (E7).
    mutating func notePopBeneathUnproven(_ popped: Int32, from nav: Int32) {
        guard let above = unprovenRemovals.lastIndex(where: { $0.popped >= 0 && $0.nav == nav && $0.revealed == popped }) else { return }
        // Found still there, `popped` proves the gesture above it cancelled: that is the one.
        let gesture = unprovenRemovals[above].gesture
        if unprovenRemovals.count == Self.unprovenRemovalLimit { unprovenRemovals.removeFirst() }
        unprovenRemovals.append(
            PendingRemoval(
                nav: nav, popped: popped, began: current.timestamp, sequence: current.sequence, cause: .navPop, revealed: hierarchy[nav].items.last ?? -1,
                navigationOnly: true, gesture: gesture))
        unprovenRemovals[unprovenRemovals.count - 1].lowestDepth = Int32(clamping: hierarchy[nav].items.count)
    }

    /// Undoes `removals[index]` (and, for a pop, the unproven pops of what it sat on);
    /// `chosen`: the proof fitted another of them as well (``CancelledGesture/chosen``), and
    /// so do the pops beneath it that putting it back undoes.
    private mutating func putBack(_ index: Int, from removals: inout [PendingRemoval], chosen: Bool = false) {
        let removal = removals.remove(at: index)
        noteCancelledInHindsight(Int(removal.gesture), chosen: chosen)
        guard removal.popped >= 0 else {
            var pair = 0
            while pair + 1 < removal.dismissed.count {
                let presented = removal.dismissed[pair]
                hierarchy.place(presented, in: .presented(by: removal.dismissed[pair + 1], style: hierarchy[presented].requestedStyle))
                pair += 2
            }
            return
        }
        if !hierarchy[removal.nav].items.contains(removal.revealed),
            let beneath = removals.lastIndex(where: { $0.popped == removal.revealed && $0.nav == removal.nav })
        {
            putBack(beneath, from: &removals, chosen: chosen)
        }
        guard let beneath = hierarchy[removal.nav].items.firstIndex(of: removal.revealed) else { return }
        hierarchy.place(removal.popped, in: .stack(removal.nav, at: beneath + 1))
        // The stack itself in a sheet whose dismissal is unproven: found in use, so is the sheet.
        var sheet = removals.count - 1
        while sheet >= 0, removals[sheet].popped >= 0 || !pendingRemovalTookOut(removal.nav, removals[sheet]) { sheet -= 1 }
        if sheet >= 0 { putBack(sheet, from: &removals) }
    }

    /// The controllers an operation acts through (E7), read once from its event: those it uses
    /// as in place (a presenter, a segue's source, a receiver, a container), the stack a
    /// `nav.pop` pops and the receiver of a `dismiss`.
    struct ActingControllers {
        var first: Int32 = -1
        var second: Int32 = -1
        var poppedStack: Int32 = -1
        var dismissReceiver: Int32 = -1
        /// The tops of `first`'s and `second`'s chains of parents and presenters: a controller
        /// a removal took out has its removed controller at the top of its chain (a popped or
        /// dismissed controller has neither parent nor presenter), so one comparison per
        /// removal tells, however many there are.
        var firstTop: Int32 = -1
        var secondTop: Int32 = -1
    }

    /// What `event` acts through; nil for an event that acts through no controller.
    func actingControllers(of event: ReplayEvent) -> ActingControllers? {
        let body = event.body
        func handle(_ field: FieldName) -> Int32 {
            guard let value = body.field(field), let reference = ControllerReference(value) else { return -1 }
            return controllers.handle(forID: reference.id)?.index ?? -1
        }
        guard var acting = usedControllers(of: event, handle) else { return nil }
        if acting.first >= 0 { acting.firstTop = hierarchy.topmostAncestor(of: acting.first) }
        if acting.second >= 0 { acting.secondTop = hierarchy.topmostAncestor(of: acting.second) }
        return acting
    }

    /// ``actingControllers(of:)`` before the tops of their chains are found.
    private func usedControllers(of event: ReplayEvent, _ handle: (FieldName) -> Int32) -> ActingControllers? {
        switch event.type {
        case .present, .show, .showDetail: return ActingControllers(first: handle(.from))
        case .segue, .unwind: return ActingControllers(first: handle(.source))
        case .dismiss:
            let receiver = handle(.vc)
            return ActingControllers(first: receiver, dismissReceiver: receiver)
        case .navPop:
            let nav = handle(.nav)
            return ActingControllers(first: nav, second: handle(.vc), poppedStack: nav)
        case .navPopTo: return ActingControllers(first: handle(.nav), second: handle(.vc))
        case .navPush, .navPopToRoot, .navSet: return ActingControllers(first: handle(.nav))
        case .tabSet, .tabSelect: return ActingControllers(first: handle(.tab))
        case .splitSet, .splitCollapse, .splitExpand: return ActingControllers(first: handle(.split))
        case .childAdd, .childDidMove, .childWillMove, .childRemove: return ActingControllers(first: handle(.parent))
        default: return nil
        }
    }

    /// Whether an operation acting through `acting` shows `removal` was a cancelled gesture
    /// (E7): it acts through a controller the removal took out, or it pops the popped
    /// controller's stack when taking the pop as done would leave only its root to pop (A9), or
    /// it dismisses the sheet's presenter when taking the dismissal as done would leave nothing
    /// to dismiss (A5).
    func uses(_ acting: ActingControllers, _ removal: PendingRemoval) -> Bool {
        if removal.popped >= 0 {
            if acting.firstTop == removal.popped || acting.secondTop == removal.popped { return true }
        } else {
            var pair = 0
            while pair < removal.dismissed.count {
                let presented = removal.dismissed[pair]
                if acting.firstTop == presented || acting.secondTop == presented { return true }
                pair += 2
            }
        }
        if acting.poppedStack >= 0, removal.popped >= 0, acting.poppedStack == removal.nav {
            let items = hierarchy[removal.nav].items
            if items.count <= 1 && items.last == removal.revealed { return true }
        }
        if acting.dismissReceiver >= 0, removal.dismissed.count >= 2, acting.dismissReceiver == removal.dismissed[1] {
            return dismissalPresenter(of: acting.dismissReceiver) < 0
        }
        return false
    }

    /// Whether `acting`, which ``uses(_:_:)`` `removal`, proves it cancelled only by a count (a
    /// pop past the root, a dismissal with nothing left to dismiss: that one of the removals
    /// of that stack or presenter was a cancelled gesture), not by acting through a controller
    /// it took out (which names it).
    func provesByCountOnly(_ acting: ActingControllers, _ removal: PendingRemoval) -> Bool {
        if removal.popped >= 0 { return acting.firstTop != removal.popped && acting.secondTop != removal.popped }
        var pair = 0
        while pair < removal.dismissed.count {
            if acting.firstTop == removal.dismissed[pair] || acting.secondTop == removal.dismissed[pair] { return false }
            pair += 2
        }
        return true
    }

    /// Whether `acting`, which proves `removal` cancelled (``uses(_:_:)``), fits another of
    /// `others` (unproven removals) as well, so that rolling back `removal`, the most recent,
    /// is a choice (E7: the calls alone do not say which of them the user cancelled):
    /// - a count (``provesByCountOnly(_:_:)``) fits any other pop of the same stack, or
    ///   dismissal by the same presenter, that can still be undone, when neither pop named
    ///   its controller;
    /// - a call through the controller a pop took fits an earlier pop of the stack that
    ///   would have left it there had it been the cancelled one
    ///   (``PendingRemoval/earlierFitsAsWell``), when one can still be undone.
    func isChoice(_ acting: ActingControllers, _ removal: PendingRemoval, among others: [PendingRemoval]) -> Bool {
        let byCount = provesByCountOnly(acting, removal)
        if removal.popped >= 0 && (removal.named || !(byCount || removal.earlierFitsAsWell)) { return false }
        for other in others where other.gesture != removal.gesture && canPutBack(other) {
            if removal.popped >= 0 {
                if other.popped >= 0, other.nav == removal.nav, !other.named, byCount || other.gesture < removal.gesture { return true }
            } else if byCount, other.popped < 0, other.dismissed.count >= 2, removal.dismissed.count >= 2, other.dismissed[1] == removal.dismissed[1] {
                return true
            }
        }
        return false
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
        } else {
            var index = 0
            while index + 1 < pending.dismissed.count {
                let presented = pending.dismissed[index]
                hierarchy.place(presented, in: .presented(by: pending.dismissed[index + 1], style: hierarchy[presented].requestedStyle))
                index += 2
            }
            for handle in hierarchy.nodes.indices.lazy.map(Int32.init) where pendingRemovalTookOut(handle, pending) { restored.append(handle) }
        }
        cancelledTransitionAt = current.timestamp
        cancelledRemoval = restored + (pending.revealed >= 0 ? [pending.revealed] : [])
        let focus = focusedHandle()
        rolledBackFocus = focus >= 0 ? ControllerHandle(index: focus) : nil
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
        if pending.popped >= 0, !unprovenRemovals.isEmpty { lowerUnprovenDepths(of: pending.nav, to: pending.lowestDepth) }
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
    /// cancelled, else completed; `chosen` when the later event that proved it fitted another
    /// removal as well (``isRollbackChosen(position:)`` of the state after it).
    public mutating func resolvePendingRemoval(cancelled: Bool, chosen: Bool = false) {
        if cancelled, chosen, let pending = pendingRemoval { noteRollbackChosen(Int(pending.gesture)) }
        if cancelled { cancelPendingRemoval() } else { completePendingRemoval() }
    }

    /// The position in the session (0-based) of the gesture whose pop or dismissal is pending
    /// (E6, E7); nil when none is.
    public var pendingRemovalPosition: Int? { pendingRemoval.map { Int($0.gesture) } }

    /// How a pending pop or dismissal turned out (E6, E7).
    public enum RemovalOutcome: Sendable {
        /// The user completed it: the removal stands as the call made it.
        case completed
        /// The user cancelled the gesture: the removal is rolled back at its own event.
        case cancelled
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
