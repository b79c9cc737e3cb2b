public import NavlogEvents

/// The replay engine: a pure state machine that applies one session's events, in order, to
/// the view-controller hierarchy the way UIKit would (uikit-navigation-rules.md), resolving
/// intents into operations and reporting misuses as anomalies.
///
/// No I/O and no clock: the same events always give the same state, so a state can be
/// serialized as a checkpoint and replay resumed from it (``encodeCheckpoint(into:)``).
/// Applying an event allocates only when the hierarchy grows or an anomaly is reported.
public struct SessionReplayer: Sendable {
    /// What `session.start` and `session.end` said about the session.
    public struct Info: Sendable, Equatable {
        /// App name, version, build, OS and device model, as the app reported them.
        public var app: String?
        public var version: String?
        public var build: String?
        public var os: String?
        public var device: String?
        /// Device family.
        public var idiom = Idiom.unknown
        /// Time of the first and the last event (µs since the epoch).
        public var firstTimestamp: Int64?
        public var lastTimestamp: Int64?
        /// Whether `session.end` was seen.
        public var ended = false
    }

    /// The controllers mentioned so far and what is known of them.
    public internal(set) var controllers = ControllerTable()
    /// Windows, containment and presentations.
    public internal(set) var hierarchy = Hierarchy()
    /// Every anomaly raised so far, in order.
    public internal(set) var anomalies: [Anomaly] = []
    /// Current size classes (nil before any are known).
    public internal(set) var horizontal: SizeClass?
    public internal(set) var vertical: SizeClass?
    /// Whether the app is in the foreground (F4).
    public internal(set) var foreground = true
    /// What the session said about itself.
    public internal(set) var info = Info()
    /// How many events were applied (duplicates included: they have an index too).
    public internal(set) var eventCount = 0
    /// The last event applied.
    public internal(set) var position: EventPosition?

    /// F4: how long each controller (by handle) was the focused screen while the app was in
    /// the foreground, in µs, up to the last event.
    public internal(set) var dwell: [Int64] = []
    /// What holds the focus now: the current view, or none (E3).
    public internal(set) var visit = FocusVisit()
    /// The view the last event closed, if it closed one (E3: a screen that held the focus for
    /// a positive time); it ended at that event, or at its ``FocusVisit/end`` when that is set.
    /// Analytics emit a screen view and its transition from it.
    public internal(set) var closedView: FocusVisit?
    /// A view the last event closed before ``closedView`` (E6: a pop that event proved
    /// completed ended the view before it at the pop, then the event itself moved the focus).
    public internal(set) var earlierClosedView: FocusVisit?
    /// How many views have closed.
    public internal(set) var viewsClosed = 0
    /// How many views the last event closed (0, 1 or 2: ``closedView`` and
    /// ``earlierClosedView``): readers test it before reading them (the index build does at
    /// every event, and an optional view is costly to copy).
    public internal(set) var viewsClosedByLastEvent = 0
    /// Which kinds of callbacks the session records (E1–E5), learned from its events so far.
    public internal(set) var evidence = RecordingEvidence()
    /// The deepest stack and presentation chain seen on the focus path.
    public internal(set) var deepest = Depths()
    /// The screen focused after the last event (-1 for none), and since when (µs).
    var focusedScreen: Int32 = -1
    var focusSince: Int64 = .min

    /// The last `seq` seen (A17, A18).
    var lastSequence: UInt64?
    /// Events of this session applied in `seq` order although the log stored them after an
    /// event with a higher `seq` (rule E4: delivered late or over another connection).
    /// Replays of such a session sort its events; checkpoints taken in log order do not hold.
    public internal(set) var lateEvents = 0

    /// The highest `seq` applied so far: an event at or below it arrived late or twice.
    public var highestSequence: UInt64? { lastSequence }

    /// Counts the event about to be applied as one stored late (E4); replays that sort a
    /// session's events call it for each event the log held after a higher `seq`.
    public mutating func noteLateEvent() { lateEvents += 1 }
    /// Appearance state per controller handle (R20).
    var appearance: [AppearanceState] = []
    /// Per controller handle, ``operations`` at its last appear callback: an appear again with
    /// no operation in between is a second appear nothing explains (R20).
    var appearedAtOperation: [UInt32] = []
    /// How many events other than appearance callbacks and marks were applied.
    var operations: UInt32 = 0
    /// When an interactive transition was last cancelled (µs, `Int64.min` for never): the
    /// appearance callbacks UIKit sends for the rollback may follow its `transition.end` (E5).
    /// The grace ends with the next operation or ``cancelledTransitionGrace`` later.
    var cancelledTransitionAt = Int64.min
    /// How long after a cancelled interactive transition its rollback callbacks are expected.
    static let cancelledTransitionGrace: Int64 = 1_000_000
    /// Destinations of recent custom segues (R18: evidence that a detached appearance is one).
    var customSegueDestinations: [Int32] = []
    /// The most recent intents and what they resolved into, for `cause` (A15).
    var intents: [IntentRecord] = []
    /// Transitions begun and not yet ended, with the hierarchy to restore if cancelled (R19).
    var transitions: [OpenTransition] = []
    /// A pop or dismissal that may be a cancelled interactive gesture (E6), until the evidence tells.
    var pendingRemoval: PendingRemoval?
    /// How many pending removals were resolved, and how many of them as cancelled gestures
    /// (E6); a reader that looks ahead reads how the one it holds was resolved in
    /// ``heldRemovalOutcome``, not in these counts.
    public internal(set) var removalsResolved = 0
    public internal(set) var removalsCancelled = 0
    /// How the last event resolved the pop or dismissal that was pending before it (E6, E7); nil
    /// when none was, or it is still pending. A reader holding what it shows of a pending
    /// removal (a timeline's lines, the viewer's focus, a replay stopped inside the gesture)
    /// reads its outcome here: the same event may also begin a gesture and roll it back at once
    /// (E7 in hindsight), which the counts above cannot tell from the held one's.
    public internal(set) var heldRemovalOutcome: RemovalOutcome?
    /// Removals a navigation-only session took as done for want of evidence, that a later
    /// operation may still show were cancelled gestures (E7), oldest first.
    var unprovenRemovals: [PendingRemoval] = []
    /// How many of them a later operation put back (E7).
    public internal(set) var removalsPutBack = 0
    /// After an event that found a pending pop or dismissal cancelled (E6, E7): the focus right
    /// after the rollback, before the event's own change (the focus the gesture's events had).
    public internal(set) var rolledBackFocus: ControllerHandle?
    /// The navigation-only gestures known cancelled in hindsight (E7), by position, ascending:
    /// given to a replay so that it rolls each back at its own event, and extended by the
    /// put-backs this replay makes.
    public internal(set) var gesturesCancelledInHindsight: [CancelledGesture] = []
    /// The positions (ascending) of pending pops and dismissals found cancelled (E7) by a call
    /// that fitted another removal as well (``isChoice(_:_:among:)``): navlog rolled back the
    /// most recent, a choice the recorded calls do not make for it. Those in hindsight are
    /// marked in ``gesturesCancelledInHindsight`` instead: a gesture added there has the index
    /// re-derive the session, which a removal decided at the next call does not need.
    public internal(set) var rollbacksChosen: [Int] = []
    /// The controllers of the last pending removal found cancelled (E5: their reversed
    /// callbacks follow, within ``cancelledTransitionGrace`` of ``cancelledTransitionAt``).
    var cancelledRemoval: [Int32] = []
    /// Slot names of contained children.
    var slotNames = ByteStringTable()
    /// The event being applied.
    var current = EventPosition(sequence: nil, timestamp: 0, lsn: nil, index: 0)

    /// How many recent intents are remembered for `cause`.
    static let rememberedIntents = 64

    /// A new session with nothing on screen.
    public init() {}

    /// Applies one event of the session.
    /// - Returns: for an intent (`show`, `showDetail`, `segue`, `unwind`), what it resolved into.
    @discardableResult
    public mutating func apply(_ event: ReplayEvent) -> Resolution? {
        // F4: the screen focused until now dwelt there until this event, if in the foreground.
        if focusedScreen >= 0, Int(focusedScreen) < dwell.count, foreground, event.timestamp > focusSince {
            // Saturating: damaged or hostile times may be far apart; dwell never traps.
            let (delta, overflow) = event.timestamp.subtractingReportingOverflow(focusSince)
            let (sum, sumOverflow) = dwell[Int(focusedScreen)].addingReportingOverflow(overflow ? .max : delta)
            dwell[Int(focusedScreen)] = sumOverflow ? .max : sum
            if pendingRemoval != nil {
                let (time, timeOverflow) = pendingRemoval!.foregroundTime.addingReportingOverflow(overflow ? .max : delta)
                pendingRemoval!.foregroundTime = timeOverflow ? .max : time
            }
        }
        focusSince = max(focusSince, event.timestamp)
        if rolledBackFocus != nil { rolledBackFocus = nil }
        if viewsClosedByLastEvent > 0 {
            closedView = nil
            earlierClosedView = nil
            viewsClosedByLastEvent = 0
        }
        let heldRemoval = pendingRemoval != nil
        let (resolvedBefore, cancelledBefore) = (removalsResolved, removalsCancelled)
        if pendingRemoval != nil || !unprovenRemovals.isEmpty {
            current = EventPosition(sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, index: eventCount)
            // The pending removal first: the event may be explained by its gesture alone. An
            // unproven one the event then still proves cancelled is put back after it (with the
            // sheet that holds it: the pending one may have just become unproven).
            decidePendingRemoval(event)
            if !unprovenRemovals.isEmpty { putBackUnprovenRemoval(for: event) }
        }
        let resolution = dispatch(event)
        if dwell.count < controllers.count { dwell.append(contentsOf: repeatElement(0, count: controllers.count - dwell.count)) }
        // R19: while an interactive transition is in progress its change may still be rolled
        // back as if it never happened, so the focus (dwell, views) stays where it was until
        // the transition ends; `focus` and the hierarchy show the change in progress. E6: so
        // does a pop or dismissal that may be an interactive gesture, until the evidence tells.
        let newFocus = interactiveTransitionInProgress || pendingRemoval != nil ? focusedScreen : focusedHandle()
        if newFocus != focusedScreen {
            moveFocus(
                to: newFocus, at: event.timestamp, cause: event.type, detail: event.type == .segue ? Self.segueDetail(event.body) : nil,
                sequence: event.sequence)
        } else if newFocus < 0, event.type.changesHierarchy, !(visit.started && visit.since == event.timestamp), focusedWindow != nil {
            // A window shows an empty container (the hierarchy is being built): the first event
            // that showed it at this instant is the cause the first view inherits (E3: `root`
            // at launch when the roots are pushed after the window's root is set).
            visit = FocusVisit(
                since: event.timestamp, cause: event.type, detail: event.type == .segue ? Self.segueDetail(event.body) : nil, index: viewsClosed,
                sequence: event.sequence, from: visit.from, started: true)
        }
        focusedScreen = newFocus
        if heldRemoval || heldRemovalOutcome != nil {
            // The held removal is the first this event resolved: a removal the event began can be
            // resolved by it only when it is rolled back at its own event (E7), after the held one.
            let resolved = removalsResolved &- resolvedBefore
            heldRemovalOutcome = !heldRemoval || resolved == 0 ? nil : removalsCancelled &- cancelledBefore >= resolved ? .cancelled : .completed
        }
        return resolution
    }

    /// Moves the focus (F1) to `newFocus` at `timestamp` (the current event's, or the instant
    /// of a pop found completed afterwards: E6), closing the view that held it (E3).
    @inline(__always)
    mutating func moveFocus(to newFocus: Int32, at timestamp: Int64, cause: EventType, detail: String?, sequence: UInt64?) {
        // E3: what held the focus since this same instant was replaced at once: it is no
        // view, and the view that follows keeps the cause of the event that began the
        // instant (a present of a navigation controller whose root is pushed at the same
        // time is one `present`).
        let instant = visit.since == timestamp && visit.started
        var next = FocusVisit(
            since: timestamp, dwellBaseline: newFocus >= 0 && Int(newFocus) < dwell.count ? dwell[Int(newFocus)] : 0, cause: cause, detail: detail,
            index: viewsClosed, sequence: sequence, screen: newFocus, from: visit.from, started: true)
        if instant {
            next.cause = visit.cause
            next.detail = visit.detail
            next.sequence = visit.sequence
        } else if focusedScreen >= 0 {
            // A screen that held the focus for a positive time: a view (E3), closed here.
            if closedView != nil { earlierClosedView = closedView }
            closedView = visit
            if timestamp != current.timestamp { closedView!.end = timestamp }
            viewsClosed += 1
            viewsClosedByLastEvent += 1
            next.index = viewsClosed
            next.from = focusedScreen
        }
        visit = next
        focusedScreen = newFocus
        if newFocus >= 0 {
            var stack = 0
            var presentations = 0
            forEachOnFocusPath { handle in
                if hierarchy[handle].placement == .presented { presentations += 1 }
                if controllers.kind(of: handle) == .navigation { stack = max(stack, hierarchy[handle].items.count) }
            }
            deepest.stack = max(deepest.stack, stack)
            deepest.presentations = max(deepest.presentations, presentations)
        }
    }

    /// Whether an interactive transition has begun and not ended (R19: it may still be cancelled).
    var interactiveTransitionInProgress: Bool { transitions.contains { $0.snapshot != nil } }

    /// How a segue is named in analytics: `#unwind` for an unwind, else its identifier, else `#kind`.
    static func segueDetail(_ body: StoredBody) -> String? {
        if body.field(.kind)?.equals("unwind") == true { return "#unwind" }
        return body.field(.identifier)?.string ?? body.field(.kind)?.string.map { "#" + $0 }
    }

    /// What holds the focus now (F1): a screen, or none. When it began, the screen's dwell
    /// then (its dwell in this visit is ``dwell`` minus that), what event began it, and its
    /// number among the session's views. A visit replaced at the instant it began is no view
    /// (E3) and is never counted or closed.
    public struct FocusVisit: Sendable, Equatable {
        public var since: Int64 = 0
        public var dwellBaseline: Int64 = 0
        public var cause: EventType = .sessionStart
        /// For a segue: its identifier, or `#kind` without one.
        public var detail: String?
        /// Its number among the session's views (0-based).
        public var index = 0
        /// The `seq` of the event that began it.
        public var sequence: UInt64?
        /// The focused screen (-1 for none).
        public var screen: Int32 = -1
        /// The screen of the previous view (-1 for none): where the transition into this one came from.
        public var from: Int32 = -1
        /// False only for the state before the session's first event.
        public var started = false
        /// For a closed view that ended before the event that closed it (E6: at a pop found
        /// completed afterwards): when it ended. Nil when it ended at that event.
        public var end: Int64?
    }

    /// The deepest navigation stack and presentation chain the focus path has had.
    public struct Depths: Sendable, Equatable {
        public var stack = 0
        public var presentations = 0
    }

    /// Applies one event (without the dwell bookkeeping).
    private mutating func dispatch(_ event: ReplayEvent) -> Resolution? {
        guard advance(to: event) else { return nil }
        let body = event.body
        noteOperation(event.type)
        let causeField = event.type.isOperation ? body.field(.cause) : nil
        if causeField != nil { evidence.insert(.cause) }
        if let cause = causeField?.integer, cause >= 0, let intent = intents.last(where: { $0.sequence == UInt64(cause) }) {
            confirm(event.type, body, intent: intent)
            return nil
        }
        switch event.type {
        case .sessionStart: startSession(body)
        case .sessionEnd: info.ended = true
        case .appForeground: foreground = true
        case .appBackground: foreground = false
        case .traitsChange: changeTraits(horizontal: body.field(.h)?.bytes.flatMap(SizeClass.init), vertical: body.field(.v)?.bytes.flatMap(SizeClass.init))
        case .windowRoot:
            guard let vc = controller(body, .vc) else { break }
            let window = hierarchy.window(named: body.field(.window)?.bytes)
            hierarchy.place(vc, in: .windowRoot(window))
        case .navPush:
            guard let nav = controller(body, .nav, use: .navigation), let vc = controller(body, .vc) else { break }
            push(vc, onto: nav, animated: body.field(.animated)?.bool ?? false, rule: "R8")
        case .navPop: popEvent(body)
        case .navPopTo:
            guard let nav = controller(body, .nav, use: .navigation), let vc = controller(body, .vc) else { break }
            pop(nav, to: vc)
            lowerUnprovenDepths(of: nav, to: Int32(clamping: hierarchy[nav].items.count))
        case .navPopToRoot:
            guard let nav = controller(body, .nav, use: .navigation) else { break }
            popToRoot(nav)
        case .navSet:
            guard let nav = controller(body, .nav, use: .navigation) else { break }
            hierarchy.setItems(of: nav, to: controllers(body, .vcs, placingUnder: nav), placement: .stack)
        case .tabSet: setTabs(body)
        case .tabSelect: selectTab(body)
        case .splitSet: setSplit(body)
        case .splitCollapse:
            guard let split = controller(body, .split, use: .split) else { break }
            requireAttached(split, "split.collapse")
            collapse(split)
        case .splitExpand:
            guard let split = controller(body, .split, use: .split) else { break }
            requireAttached(split, "split.expand")
            expand(split)
        case .present: presentEvent(body)
        case .dismiss: dismissEvent(body)
        case .show:
            guard let source = controller(body, .from), let vc = controller(body, .vc) else { return remember(.ignored, rule: "R1") }
            return remember(show(vc, from: source), rule: "R1")
        case .showDetail:
            guard let source = controller(body, .from), let vc = controller(body, .vc) else { return remember(.ignored, rule: "R2") }
            return remember(showDetail(vc, from: source), rule: "R2")
        case .segue: return performSegue(body)
        case .unwind:
            guard let source = controller(body, .source), let action = body.field(.action)?.bytes else { return remember(.ignored, rule: "R17") }
            return remember(unwind(from: source, action: action, expected: controller(body, .target)), rule: "R17")
        case .childAdd: addChild(body)
        case .childWillMove: childWillMove(body)
        case .childDidMove: childDidMove(body)
        case .childRemove: removeChild(body)
        case .vcAppear, .vcDisappear: appearanceCallback(event.type, body)
        case .transitionBegin: beginTransition(body)
        case .transitionEnd: endTransition(body)
        case .mark: break
        }
        return nil
    }

    /// Moves the session's position to `event`; false when its `seq` is not greater than the
    /// previous one (a duplicate, A-code seqDuplicate: it is not applied); a jump in `seq` is a gap.
    private mutating func advance(to event: ReplayEvent) -> Bool {
        current = EventPosition(sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, index: eventCount)
        eventCount += 1
        position = current
        if info.firstTimestamp == nil { info.firstTimestamp = event.timestamp }
        info.lastTimestamp = event.timestamp
        if let sequence = event.sequence {
            if let last = lastSequence {
                if sequence <= last {
                    raise(
                        .seqDuplicate, rule: nil, [],
                        "seq \(sequence) is not greater than the previous seq \(last): the event repeats or arrived out of order and is not applied.")
                    return false
                }
                if sequence > last + 1 {
                    raise(.seqGap, rule: nil, [], "seq jumps from \(last) to \(sequence): \(sequence - last - 1) event(s) of this session were lost.")
                }
            }
            lastSequence = sequence
        }
        return true
    }

    /// What an event of `type` tells of the recording (its evidence) and of the operations
    /// applied: appearance evidence is learned where the phase is read.
    private mutating func noteOperation(_ type: EventType) {
        switch type {
        case .vcAppear, .vcDisappear, .mark: break
        case .transitionEnd:
            operations &+= 1
        default:
            evidence.formUnion(.of(type, will: false))
            operations &+= 1
            cancelledTransitionAt = .min
        }
    }

    /// `nav.pop`: the top controller leaves its stack; a pop that may be an interactive gesture
    /// still to be completed or cancelled is held pending (R19, E6, E7).
    private mutating func popEvent(_ body: StoredBody) {
        guard let nav = controller(body, .nav, use: .navigation) else { return }
        let animated = body.field(.animated)?.bool ?? false
        let top = hierarchy[nav].items.count > 1 ? hierarchy[nav].items.last : nil
        pop(nav, animated: animated)
        let named = body.field(.vc) != nil
        let gesture = top == nil ? nil : interactiveGestureEvidence(animated: animated)
        let earlierFits = top == nil ? false : notePop(of: nav, leaving: hierarchy[nav].items.count, named: named, lowering: gesture == nil)
        if let top, let gesture {
            beginPendingPop(top, from: nav, evidence: gesture, named: named, earlierFitsAsWell: earlierFits)
        } else if let top, !unprovenRemovals.isEmpty {
            notePopBeneathUnproven(top, from: nav)
        }
    }

    /// `dismiss`: the presentations the dismissal ends; one that may be a sheet's swipe-down
    /// still to be completed or cancelled is held pending (E6, E7).
    private mutating func dismissEvent(_ body: StoredBody) {
        guard let vc = controller(body, .vc) else { return }
        let presenter = dismissalPresenter(of: vc)
        // A dismissal that dismisses nothing (A5) changes nothing to hold. E7: from navigation
        // calls alone, only a sheet can have been swiped down (a full-screen modal cannot).
        var gesture = presenter >= 0 ? interactiveGestureEvidence(animated: body.field(.animated)?.bool ?? false) : nil
        if gesture == .navigationCalls, !hierarchy[hierarchy[presenter].presented].requestedStyle.canBeSwipedDown { gesture = nil }
        let dismissed = gesture == nil ? [] : hierarchy.presentations(endedByDismissing: presenter)
        dismiss(from: vc, presenter: presenter)
        if let gesture { beginPendingDismissal(dismissed, evidence: gesture) }
    }

    private mutating func startSession(_ body: StoredBody) {
        info.app = body.field(.app)?.string
        info.version = body.field(.version)?.string
        info.build = body.field(.build)?.string
        info.os = body.field(.os)?.string
        info.device = body.field(.device)?.string
        if let idiom = body.field(.idiom)?.bytes { info.idiom = Idiom(idiom) }
        if let traits = body.field(.traits) {
            changeTraits(horizontal: traits.member(.h)?.bytes.flatMap(SizeClass.init), vertical: traits.member(.v)?.bytes.flatMap(SizeClass.init))
        }
    }

    /// R4, R14: a new horizontal size class recomputes effective styles (they are derived when
    /// read) and collapses or expands split views.
    private mutating func changeTraits(horizontal newHorizontal: SizeClass?, vertical newVertical: SizeClass?) {
        let previous = horizontal
        if let newHorizontal { horizontal = newHorizontal }
        if let newVertical { vertical = newVertical }
        guard let newHorizontal, newHorizontal != previous else { return }
        for index in hierarchy.nodes.indices where kind(of: Int32(index)) == .split {
            if newHorizontal == .compact { collapse(Int32(index)) } else { expand(Int32(index)) }
        }
    }

    // MARK: Controllers

    /// The kind of controller `handle`.
    func kind(of handle: Int32) -> ControllerKind { controllers.kind(of: handle) }

    /// The id of controller `handle`, for messages.
    func name(_ handle: Int32) -> String { "\"\(controllers[ControllerHandle(index: handle)].id)\"" }

    /// The controller in field `field`, registered and given a node; `use` records what it was used as.
    mutating func controller(_ body: StoredBody, _ field: FieldName, use: ControllerKind? = nil) -> Int32? {
        guard let value = body.field(field), !value.isNull, let reference = ControllerReference(value) else { return nil }
        return register(reference, use: use)
    }

    mutating func register(_ reference: ControllerReference, use: ControllerKind? = nil) -> Int32 {
        let handle = controllers.resolve(reference)
        if let use { controllers.noteUse(handle, as: use) }
        hierarchy.ensure(handle)
        if appearance.count <= Int(handle.index) {
            appearance.append(contentsOf: repeatElement(.disappeared, count: Int(handle.index) + 1 - appearance.count))
            appearedAtOperation.append(contentsOf: repeatElement(0, count: Int(handle.index) + 1 - appearedAtOperation.count))
        }
        return handle.index
    }

    /// The controllers of array field `field`, each once, leaving out any that would contain `container`.
    mutating func controllers(_ body: StoredBody, _ field: FieldName, placingUnder container: Int32) -> [Int32] {
        var handles: [Int32] = []
        body.field(field)?.forEachElement { value in
            guard let reference = ControllerReference(value) else { return }
            let handle = register(reference)
            if !handles.contains(handle) && !hierarchy.isAncestor(handle, of: container) { handles.append(handle) }
        }
        return handles
    }

    // MARK: Anomalies

    /// Records an anomaly at the current event.
    mutating func raise(_ code: AnomalyCode, rule: String?, _ handles: [Int32], _ message: String) {
        anomalies.append(
            Anomaly(code: code, rule: rule, event: current, controllers: handles.map { ControllerHandle(index: $0) }, message: message))
    }

    /// A16: an operation on a container that is not attached (it still applies).
    mutating func requireAttached(_ container: Int32, _ operation: StaticString) {
        guard !hierarchy.isAttached(container) else { return }
        raise(
            .unknownController, rule: "H2", [container],
            "\(operation) on \(name(container)), which is not attached to a window: events that attached it may be missing.")
    }

    /// The rule under which the intent with this `seq` was resolved, while it is among the
    /// recent intents remembered for `cause` (the last few): for a viewer that explains an
    /// intent, or the intent an operation's `cause` confirmed.
    public func rememberedIntentRule(sequence: UInt64) -> String? {
        intents.last { $0.sequence == sequence }?.rule
    }

    /// Remembers what an intent resolved into, so that operations citing it as `cause` confirm it.
    mutating func remember(_ resolution: Resolution, rule: String) -> Resolution {
        if let sequence = current.sequence {
            if intents.count == Self.rememberedIntents { intents.removeFirst() }
            intents.append(IntentRecord(sequence: sequence, resolution: resolution, rule: rule))
        }
        return resolution
    }
}

/// An intent seen recently and what it resolved into.
struct IntentRecord: Sendable, Equatable {
    var sequence: UInt64
    var resolution: Resolution
    var rule: String
}

/// A transition begun and not yet ended (R19).
struct OpenTransition: Sendable, Equatable {
    var id: String
    /// The hierarchy before an interactive transition began, restored if it is cancelled.
    var snapshot: Hierarchy?
    /// When it began (µs).
    var began: Int64 = 0
}

/// Where a controller is in its appearance callbacks (R20).
enum AppearanceState: UInt8, Sendable, Equatable {
    /// Not on screen (the initial state).
    case disappeared
    /// `viewWillAppear` seen, `viewDidAppear` not yet.
    case appearing
    /// On screen.
    case appeared
    /// `viewWillDisappear` seen, `viewDidDisappear` not yet.
    case disappearing
}

extension EventType {
    /// Events that may change the hierarchy (operations and intents).
    var changesHierarchy: Bool {
        switch self {
        case .sessionStart, .sessionEnd, .appForeground, .appBackground, .vcAppear, .vcDisappear, .transitionBegin, .mark: false
        default: true
        }
    }

    /// Operation events that may carry `cause` to confirm an intent's resolution.
    var isOperation: Bool {
        switch self {
        case .windowRoot, .navPush, .navPop, .navPopTo, .navPopToRoot, .navSet, .tabSet, .tabSelect, .splitSet, .present,
            .dismiss, .childAdd:
            true
        default: false
        }
    }
}
