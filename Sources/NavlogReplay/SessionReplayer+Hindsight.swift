/// E7 in hindsight: a navigation-only session's gesture that a later operation proves cancelled.
///
/// When such a proof comes (an unproven pop or dismissal is put back), the replay so far showed
/// the gesture as done: the focus moved at its call, and the screens since then are wrong. The
/// session is then replayed again from its first event knowing which gestures were cancelled,
/// each rolled back at its own event as E6 does, as a late event (E4) has a session re-derived.
/// Readers that replay a session from its first event do the same (``replayingWithHindsight(_:)``);
/// the replay index re-derives the session when one of its events proves a gesture cancelled.
extension SessionReplayer {
    /// A navigation-only gesture a later call proved cancelled (E7).
    public struct CancelledGesture: Sendable, Hashable {
        /// Its pop's or dismissal's position in the session (0-based, in replay order).
        public var position: Int
        /// Whether its proof fitted another removal as well (a pop past the root: any other
        /// pop of the stack; a call through the controller it took: an earlier pop that would
        /// have left that controller in place): navlog chose this one, the most recent.
        public var chosen: Bool

        /// The gesture at `position`; `chosen`: see ``chosen``.
        public init(position: Int, chosen: Bool = false) {
            (self.position, self.chosen) = (position, chosen)
        }
    }

    /// A new session whose gestures `known` are known to have been cancelled (E7): each is
    /// rolled back at its own event.
    public init(gesturesCancelledInHindsight known: [CancelledGesture]) {
        self.init()
        for gesture in known { noteCancelledInHindsight(gesture.position, chosen: gesture.chosen) }
    }

    /// Whether the pop or dismissal at `position` (0-based) of the session is a gesture known
    /// cancelled (E7), rolled back at its own event.
    public func isCancelledInHindsight(position: Int) -> Bool { isCancelledInHindsight(position) }

    /// Whether the pop or dismissal at `position` (0-based), found cancelled (E6 at the next
    /// call, or E7 in hindsight), was chosen among several that fitted the proof as well
    /// (``rollbacksChosen``, ``CancelledGesture/chosen``).
    public func isRollbackChosen(position: Int) -> Bool {
        if rollbacksChosen.contains(position) { return true }
        let index = hindsightIndex(position)
        return index < gesturesCancelledInHindsight.count && gesturesCancelledInHindsight[index].position == position
            && gesturesCancelledInHindsight[index].chosen
    }

    /// How many of the gestures rolled back so far were chosen among several that fitted as well.
    public var chosenRollbackCount: Int { rollbacksChosen.count + gesturesCancelledInHindsight.count { $0.chosen && $0.position < eventCount } }

    /// Whether the gesture at `position` is known cancelled.
    func isCancelledInHindsight(_ position: Int) -> Bool {
        guard !gesturesCancelledInHindsight.isEmpty else { return false }
        let index = hindsightIndex(position)
        return index < gesturesCancelledInHindsight.count && gesturesCancelledInHindsight[index].position == position
    }

    /// Where the gesture at `position` is, or would go, in ``gesturesCancelledInHindsight``.
    private func hindsightIndex(_ position: Int) -> Int {
        var (low, high) = (0, gesturesCancelledInHindsight.count)
        while low < high {
            let middle = (low + high) / 2
            if gesturesCancelledInHindsight[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Records that the gesture at `position` (-1: none) was cancelled, as a put-back proves;
    /// `chosen`: among several that the proof fitted as well.
    mutating func noteCancelledInHindsight(_ position: Int, chosen: Bool = false) {
        guard position >= 0, !isCancelledInHindsight(position) else { return }
        gesturesCancelledInHindsight.insert(CancelledGesture(position: position, chosen: chosen), at: hindsightIndex(position))
    }

    /// Marks the gesture at `position`, known cancelled, as chosen among several that fitted
    /// its proof as well.
    mutating func markChosenInHindsight(_ position: Int) {
        let index = hindsightIndex(position)
        guard index < gesturesCancelledInHindsight.count, gesturesCancelledInHindsight[index].position == position else { return }
        gesturesCancelledInHindsight[index].chosen = true
    }

    /// Records that the pending removal of the gesture at `position` was found cancelled by a
    /// count that another removal fitted as well (``rollbacksChosen``).
    mutating func noteRollbackChosen(_ position: Int) {
        guard position >= 0, rollbacksChosen.last.map({ $0 < position }) ?? true else { return }
        rollbacksChosen.append(position)
    }

    /// Whether a later event may still prove a gesture of this session cancelled (E7): a
    /// navigation-only pop or dismissal is pending or unproven. Until then what the replay
    /// derives from that gesture on may change.
    public var mayBeCancelledInHindsight: Bool {
        !unprovenRemovals.isEmpty || (pendingRemoval?.navigationOnly ?? false)
    }

    /// Whether a later event of this session may yet prove one of its gestures cancelled (E7):
    /// it has recorded navigation calls alone so far (its next pop may be one), or such a
    /// removal is pending or unproven. Appearance callbacks and transitions, once recorded,
    /// decide later gestures themselves (E6, R19), so a session that records them and has no
    /// such removal left never needs hindsight again.
    public var mayStillProveGestureCancelled: Bool {
        mayBeCancelledInHindsight || evidence.isDisjoint(with: [.transitions, .willAppear, .didAppear, .willDisappear, .didDisappear])
    }

    /// How many replays of a whole session ``replayingWithHindsight(_:)`` makes at most: each
    /// replay knows the gestures the one before proved, and proves more only when a gesture
    /// rolled back changes what a later operation acts through (a chain of them).
    public static let hindsightReplayLimit = 8

    /// The state after `replay` applied a whole session's events in order to a new state that
    /// knows the gestures at `known` cancelled, once more for each time it proved gestures
    /// cancelled that it did not know (E7), until a replay proves nothing new: the returned
    /// state knows them all.
    public static func replayingWithHindsight(knowing known: [CancelledGesture] = [], _ replay: (inout SessionReplayer) throws -> Void) rethrows -> SessionReplayer {
        var known = known
        var passes = 0
        while true {
            var state = SessionReplayer(gesturesCancelledInHindsight: known)
            let given = state.gesturesCancelledInHindsight.count
            try replay(&state)
            passes += 1
            if state.gesturesCancelledInHindsight.count == given || passes == hindsightReplayLimit { return state }
            known = state.gesturesCancelledInHindsight
        }
    }
}
