import NavlogJSON

// One simulated app launch: a UIKit view-controller hierarchy that a user walks through, and the
// JSON Lines an instrumented app would send about it.
//
// The model follows `uikit-navigation-rules.md`: pushes always use fresh controllers (R8), pops
// never pop a root (R9), dismissals only happen when something is presented (R7), presentations
// are made from the focused screen so the presenter is never already presenting (R3), popovers and
// iPad action sheets always carry an anchor (R6), a split view collapses and expands with the
// horizontal size class (R14), an intent (`segue` perform, `show`, `showDetail`) that an operation
// event carries out is named by that operation's `cause`, and appearance callbacks are derived from
// the set of visible screens before and after every change, so they always balance (R20).
//
// This model of UIKit is deliberately independent of the replayer (NavlogReplay): NavlogWorkload
// depends on no other navlog module but NavlogJSON (JSON bytes, nothing of navigation) and keeps
// its own hierarchy, written from the rules, so that the tests comparing what it labels (its
// screens and views) with what the replayer derives from its events are an oracle and not the
// engine checked against itself. Keep it so: take nothing
// from NavlogReplay here, and fix a disagreement on the side the rules say is wrong.

/// The simulation of one session; the generator interleaves many of them.
struct SessionSimulator {
    /// Where the session is in its life.
    enum Phase {
        /// Reset, `session.start` not yet written.
        case fresh
        /// In the foreground, taking user actions.
        case running
        /// In the background; the next step foregrounds it or ends the session.
        case background
        /// `session.end` written; the generator replaces the session once its events are taken.
        case ended
    }

    /// The app's root container.
    enum Shape { case tabs, split, navigation }

    /// What a presentation shows.
    enum ContextKind { case plain, navigation, alert }

    /// A navigation controller and its stack (bottom first).
    struct NavStack {
        var nav: Int32
        var stack: [Int32]
    }

    /// One live presentation (a context root above the window's tree).
    struct Presentation {
        var root: Int32
        var kind: ContextKind
        var nav: NavStack
        var style: PresentationStyle
        var presentable: Int
    }

    /// A navigation stack: one of the root tree's (`tab index`, or 0) or a presented one.
    enum NavLocation {
        case root(Int)
        case presented(Int)
    }

    /// A user (or app) action.
    enum Action {
        case push, pop, interactivePop, popToRoot, popTo, setStack, selectTab, present, presentAlert, dismiss
        case interactiveDismiss, unwind, mark, background, changeTraits, showDetail, swapChild
    }

    let tables: WorkloadTables
    let classes: [ControllerClass]

    // Identity and clock.
    var rng = Xoshiro256StarStar(seed: 0)
    var sessionID: [UInt8] = []
    var app = 0
    var catalog: Catalog
    var isPad = false
    var shape = Shape.tabs
    var clock: Int64 = 0
    var seq: UInt64 = 0
    /// What this session's app records; events it does not record are taken back at `close`.
    var style = RecordingStyle.full
    /// Where the open event starts in `out`, and whether it is a `will` appearance callback.
    var eventStart = 0
    var openType: StaticString = ""
    var openIsWill = false
    /// Controllers first described by the open event (taken back with it).
    var describedInEvent: [Int32] = []
    /// Gestures of this session begun and cancelled (``noteCancelledGesture()``).
    var cancelledGestures = 0
    var budget = 0
    var emitted = 0
    var phase = Phase.ended
    var endInBackground = false
    var horizontalCompact = true
    var verticalCompact = false
    var transitionCounter: UInt64 = 0
    /// The action the last ``act()`` took (tests compare the model after each).
    var lastAction: Action?

    // Events written and not yet taken by the generator.
    var out = JSONWriter(controlEscapes: .shortForms)
    var ends: [Int] = []
    var stamps: [Int64] = []
    var cursor = 0

    // Controllers, by handle (an index into these arrays).
    var ctlAddress: [UInt64] = []
    var ctlClass: [Int32] = []
    var ctlMentioned: [Bool] = []
    var ctlLoaded: [Bool] = []
    var ctlChild: [Int32] = []
    var ctlTitle: [StaticString] = []
    var nextAddress: UInt64 = 0

    // The hierarchy.
    var rootController: Int32 = -1
    var navs: [NavStack] = []
    var selectedTab = 0
    var secondary: Int32 = -1
    var collapsed = false
    var secondaryStart = 0
    var contexts: [Presentation] = []

    // Scratch buffers, kept to avoid allocations.
    var visibleBefore: [Int32] = []
    var visibleAfter: [Int32] = []
    var gone: [Int32] = []
    var came: [Int32] = []
    var menu: [Action] = []
    var weights: [Int] = []

    init(tables: WorkloadTables) {
        self.tables = tables
        classes = tables.vocabulary.classes
        catalog = tables.apps[0].catalog
    }

    // MARK: - The generator's side

    /// Whether every written event has been taken.
    var isDrained: Bool { cursor == ends.count }

    /// The device time of the next event to take.
    var nextTimestamp: Int64 { stamps[cursor] }

    /// Appends the next written event to `line`.
    mutating func take(into line: inout [UInt8]) {
        let start = cursor == 0 ? 0 : ends[cursor - 1]
        line.append(contentsOf: out.bytes[start..<ends[cursor]])
        cursor += 1
        if cursor == ends.count {
            out.bytes.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            stamps.removeAll(keepingCapacity: true)
            cursor = 0
        }
    }

    /// Starts a new session (written on the next ``step()``) at device time `start`.
    mutating func reset(seed: UInt64, start: Int64) {
        rng = Xoshiro256StarStar(seed: seed)
        sessionID.removeAll(keepingCapacity: true)
        let high = rng.next()
        let low = rng.next()
        let uuidHigh = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let uuidLow = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        for i in 0..<16 {
            if i == 4 || i == 6 || i == 8 || i == 10 { sessionID.append(UInt8(ascii: "-")) }
            let byte =
                i < 8
                ? UInt8(truncatingIfNeeded: uuidHigh >> UInt64(56 - 8 * i))
                : UInt8(truncatingIfNeeded: uuidLow >> UInt64(56 - 8 * (i - 8)))
            sessionID.append(JSONWriter.hexDigit(byte >> 4))
            sessionID.append(JSONWriter.hexDigit(byte & 0xF))
        }
        app = rng.below(tables.apps.count)
        catalog = tables.apps[app].catalog
        isPad = rng.chance(tables.padFraction)
        if tables.recordingStyles.count > 1 {
            let pick = rng.unit()
            style = tables.recordingStyles.first { pick < $0.upTo }?.style ?? tables.recordingStyles[tables.recordingStyles.count - 1].style
        } else {
            style = tables.recordingStyles[0].style
        }
        let s = rng.unit()
        if isPad {
            shape = s < 0.55 ? .split : (s < 0.9 ? .tabs : .navigation)
        } else {
            shape = s < 0.65 ? .tabs : .navigation
        }
        clock = start
        seq = 0
        emitted = 0
        let length = rng.exponential(mean: tables.meanEvents)
        budget = max(12, min(Int(length), Int(tables.meanEvents * 20)))
        phase = .fresh
        endInBackground = false
        horizontalCompact = !isPad
        verticalCompact = false
        transitionCounter = 0
        cancelledGestures = 0
        lastAction = nil
        ctlAddress.removeAll(keepingCapacity: true)
        ctlClass.removeAll(keepingCapacity: true)
        ctlMentioned.removeAll(keepingCapacity: true)
        ctlLoaded.removeAll(keepingCapacity: true)
        ctlChild.removeAll(keepingCapacity: true)
        ctlTitle.removeAll(keepingCapacity: true)
        nextAddress =
            rng.chance(0.6)
            ? 0x6000_0000_0000 + (UInt64(rng.below(0x0400_0000)) << 4)
            : 0x1_0000_0000 + (UInt64(rng.below(0x0800_0000)) << 4)
        rootController = -1
        navs.removeAll(keepingCapacity: true)
        selectedTab = 0
        secondary = -1
        collapsed = false
        secondaryStart = 0
        contexts.removeAll(keepingCapacity: true)
    }

    /// Writes the session's next action (one or more events).
    mutating func step() {
        switch phase {
        case .fresh:
            start()
        case .running:
            clock &+= thinkTime()
            if emitted >= budget {
                finish()
            } else {
                act()
            }
        case .background:
            clock &+= backgroundTime()
            if endInBackground {
                open("session.end", after: 0)
                let r = rng.unit()
                if r < 0.95 {
                    out.key("reason")
                    out.string(r < 0.5 ? "background-timeout" : (r < 0.8 ? "terminated" : "jetsam"))
                }
                close()
                phase = .ended
            } else {
                open("app.foreground", after: 0)
                close()
                phase = .running
            }
        case .ended:
            preconditionFailure("step() on an ended session")
        }
    }

    // MARK: - Time

    /// User think time before an action.
    mutating func thinkTime() -> Int64 {
        var seconds = tables.meanThinkTime * (0.12 + rng.exponential(mean: 0.88))
        if rng.chance(0.04) { seconds += rng.exponential(mean: tables.meanThinkTime * 6) }
        return Int64(min(seconds, 600_000_000))
    }

    /// How long the app stays in the background.
    mutating func backgroundTime() -> Int64 {
        Int64(min(15_000_000 + rng.exponential(mean: 240_000_000), 2_400_000_000))
    }

    /// The gap between two events of one action (tens of µs to a few ms).
    mutating func quick() -> Int64 { Int64(rng.between(40, 2_500)) }

    /// The gap between `will` and `did` appearance callbacks.
    mutating func appearanceGap(animated: Bool) -> Int64 {
        animated ? Int64(rng.between(240_000, 520_000)) : Int64(rng.between(900, 9_000))
    }

    // MARK: - Writing events

    /// Opens an event: `{"type":…,"session":…,"ts":…,"seq":…` at `clock + delay`.
    @inline(__always)
    mutating func open(_ type: StaticString, after delay: Int64) {
        clock &+= delay
        seq &+= 1
        eventStart = out.bytes.count
        openType = type
        openIsWill = false
        describedInEvent.removeAll(keepingCapacity: true)
        out.raw("{\"type\":\"")
        out.raw(type)
        out.raw("\",\"session\":\"")
        out.raw(sessionID)
        out.raw("\",\"ts\":")
        out.integer(clock)
        out.raw(",\"seq\":")
        out.integer(seq)
    }

    /// Opens an event a moment after the previous one.
    @inline(__always)
    mutating func open(_ type: StaticString) { open(type, after: quick()) }

    /// Closes the open event, with `cause` when it is not 0.
    @inline(__always)
    mutating func close(cause: UInt64 = 0) {
        // Not recorded by this app: the event never existed (its seq is the next one's). An
        // operation that confirms an intent (`cause`) is one a tracker without intents does not
        // see as separate: it records the intent (a segue, show) and navlog resolves it.
        if style != .full && (cause > 0 || !records(openType, will: openIsWill)) {
            out.bytes.removeSubrange(eventStart...)
            seq &-= 1
            for handle in describedInEvent { ctlMentioned[Int(handle)] = false }
            return
        }
        if cause > 0 && style == .full {
            out.key("cause")
            out.integer(cause)
        }
        out.byte(UInt8(ascii: "}"))
        ends.append(out.bytes.count)
        stamps.append(clock)
        emitted += 1
    }

    /// Counts a gesture the user started and let go of (a swipe back, a sheet swipe-down). UIKit
    /// calls `popViewController` / `dismiss` when the gesture begins, so every style records the
    /// call, a navigation-only tracker included (../shared/workload.md); only the callbacks
    /// after it, where recorded, show it was cancelled (E6). In a navigation-only session
    /// nothing does but what the user does next (E7), so where the user is afterwards cannot
    /// be told from its events: readers that compare screens leave such sessions out.
    mutating func noteCancelledGesture() {
        cancelledGestures += 1
    }

    /// Whether this session's style records an event of `type` (`will`: an appearance callback's will phase).
    func records(_ type: StaticString, will: Bool) -> Bool {
        // Compared as bytes: this runs for every event of such a session.
        let (appearance, transition) = type.withUTF8Buffer { name in
            (name.elementsEqual("vc.appear".utf8) || name.elementsEqual("vc.disappear".utf8), name.starts(with: "transition.".utf8))
        }
        switch style {
        case .full: return true
        case .didOnly: return !transition && !(appearance && will)
        case .willAndDid: return !transition
        case .navigationOnly: return !transition && !appearance
        }
    }

    /// Writes a controller reference: the full object at its first mention, the bare id after.
    mutating func ref(_ handle: Int32) {
        let i = Int(handle)
        if ctlMentioned[i] {
            out.pointer(ctlAddress[i])
            return
        }
        ctlMentioned[i] = true
        describedInEvent.append(handle)
        let c = Int(ctlClass[i])
        out.raw("{\"id\":")
        out.pointer(ctlAddress[i])
        out.raw(",\"class\":")
        out.string(classes[c].name)
        let kind = classes[c].kind
        if kind.utf8CodeUnitCount > 0 && (classes[c].kindRequired || rng.chance(0.8)) {
            out.key("kind")
            out.raw("\"")
            out.raw(kind)
            out.raw("\"")
        }
        let sbid = classes[c].sbid
        if sbid.utf8CodeUnitCount > 0 && rng.chance(0.75) {
            out.raw(",\"storyboard\":\"Main\",\"sbid\":")
            out.string(sbid)
        }
        let ownTitle = ctlTitle[i]
        if ownTitle.utf8CodeUnitCount > 0 {
            out.key("title")
            out.string(ownTitle)
        } else if classes[c].title.utf8CodeUnitCount > 0 && rng.chance(0.6) {
            out.key("title")
            out.string(classes[c].title)
        }
        if classes[c].unwindAction.utf8CodeUnitCount > 0 {
            out.raw(",\"unwindActions\":[")
            out.string(classes[c].unwindAction)
            out.raw("]")
        }
        if classes[c].definesContext {
            out.raw(",\"definesContext\":true")
        }
        if sbid.utf8CodeUnitCount > 0 && rng.chance(0.04) {
            out.key("restorationId")
            out.string(sbid)
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// Writes `,"key":<ref>`.
    @inline(__always)
    mutating func field(_ key: StaticString, ref handle: Int32) {
        out.key(key)
        ref(handle)
    }

    /// Writes `,"key":"value"` for a value that needs no escaping.
    @inline(__always)
    mutating func field(_ key: StaticString, plain value: StaticString) {
        out.key(key)
        out.byte(UInt8(ascii: "\""))
        out.raw(value)
        out.byte(UInt8(ascii: "\""))
    }

    /// Writes `,"key":true|false`.
    @inline(__always)
    mutating func field(_ key: StaticString, bool value: Bool) {
        out.key(key)
        out.bool(value)
    }

    /// Writes `,"animated":…` most of the time (a recorder does not always know).
    @inline(__always)
    mutating func animatedField(_ value: Bool) {
        if rng.chance(0.9) { field("animated", bool: value) }
    }

    /// Writes a transition id such as `"pop-3"`.
    mutating func transitionID(_ prefix: StaticString, _ number: UInt64) {
        out.key("id")
        out.byte(UInt8(ascii: "\""))
        out.raw(prefix)
        out.byte(UInt8(ascii: "-"))
        out.integer(number)
        out.byte(UInt8(ascii: "\""))
    }

    /// Writes an anchor object.
    mutating func anchor(_ spec: AnchorSpec) {
        out.key("anchor")
        switch spec {
        case .barButton(let name):
            out.raw("{\"barButtonItem\":")
            out.string(name)
            out.byte(UInt8(ascii: "}"))
        case .sourceView(let name):
            out.raw("{\"sourceView\":")
            out.string(name)
            out.raw(",\"sourceRect\":{\"x\":")
            if rng.chance(0.3) { out.decimal(tenths: rng.between(0, 3_400)) } else { out.integer(UInt64(rng.between(0, 340))) }
            out.raw(",\"y\":")
            out.integer(UInt64(rng.between(0, 900)))
            out.raw(",\"width\":")
            out.integer(UInt64(rng.chance(0.7) ? 44 : rng.between(20, 320)))
            out.raw(",\"height\":")
            if rng.chance(0.2) { out.decimal(tenths: rng.between(200, 600)) } else { out.integer(44) }
            out.raw("}}")
        case .none:
            out.raw("{\"barButtonItem\":\"moreButton\"}")
        }
    }

    /// Writes a complete `segue` event; returns its seq.
    @discardableResult
    mutating func segue(
        kind: StaticString, source: Int32, identifier: StaticString, destination: Int32, phase: StaticString,
        result: Bool? = nil, style: PresentationStyle? = nil, transition: StaticString = "",
        anchor anchorSpec: AnchorSpec? = nil, action: StaticString = "", animated: Bool? = nil,
        segueClass: StaticString = ""
    ) -> UInt64 {
        open("segue")
        field("kind", plain: kind)
        field("source", ref: source)
        if identifier.utf8CodeUnitCount > 0 {
            out.key("identifier")
            out.string(identifier)
        }
        if destination >= 0 { field("destination", ref: destination) }
        if let style { field("style", plain: style.name) }
        if transition.utf8CodeUnitCount > 0 { field("transition", plain: transition) }
        if let anchorSpec { anchor(anchorSpec) }
        if action.utf8CodeUnitCount > 0 {
            out.key("action")
            out.string(action)
        }
        if let animated { field("animated", bool: animated) }
        if segueClass.utf8CodeUnitCount > 0 { field("segueClass", plain: segueClass) }
        field("phase", plain: phase)
        if let result { field("result", bool: result) }
        close()
        return seq
    }

    // MARK: - Controllers and hierarchy

    /// A new controller of class `classIndex`.
    mutating func make(_ classIndex: Int, title: StaticString = "") -> Int32 {
        nextAddress &+= UInt64(rng.between(1, 320)) &* 16
        ctlAddress.append(nextAddress)
        ctlClass.append(Int32(classIndex))
        ctlMentioned.append(false)
        ctlLoaded.append(false)
        ctlChild.append(-1)
        ctlTitle.append(title)
        return Int32(ctlAddress.count - 1)
    }

    /// The class of a controller.
    @inline(__always)
    func classOf(_ handle: Int32) -> Int { Int(ctlClass[Int(handle)]) }

    /// The navigation stack at `location`.
    func nav(_ location: NavLocation) -> NavStack {
        switch location {
        case .root(let i): navs[i]
        case .presented(let i): contexts[i].nav
        }
    }

    /// Changes the stack at `location`.
    mutating func modifyStack(_ location: NavLocation, _ body: (inout [Int32]) -> Void) {
        switch location {
        case .root(let i): body(&navs[i].stack)
        case .presented(let i): body(&contexts[i].nav.stack)
        }
    }

    /// The stack the user is in: the top presentation's, or the root tree's.
    var activeNav: NavLocation? {
        if let last = contexts.indices.last {
            return contexts[last].kind == .navigation ? .presented(last) : nil
        }
        return .root(shape == .tabs ? selectedTab : 0)
    }

    /// The screen a presentation shows.
    func contentTop(_ i: Int) -> Int32 {
        contexts[i].kind == .navigation ? contexts[i].nav.stack[contexts[i].nav.stack.count - 1] : contexts[i].root
    }

    /// The focused screen of the window's tree (F1, ignoring presentations).
    var rootFocus: Int32 {
        switch shape {
        case .tabs: navs[selectedTab].stack[navs[selectedTab].stack.count - 1]
        case .navigation: navs[0].stack[navs[0].stack.count - 1]
        case .split: collapsed ? navs[0].stack[navs[0].stack.count - 1] : secondary
        }
    }

    /// The focused screen (F1).
    var focusedScreen: Int32 {
        if let last = contexts.indices.last { return contentTop(last) }
        return rootFocus
    }

    /// The screens that have appeared and not disappeared, in the order UIKit would call them.
    func collectVisible(into visible: inout [Int32]) {
        visible.removeAll(keepingCapacity: true)
        var i = contexts.count - 1
        while i >= 0 {
            visible.append(contentTop(i))
            if contexts[i].kind != .alert && contexts[i].style.hidesPresenter { return }
            i -= 1
        }
        switch shape {
        case .tabs:
            visible.append(navs[selectedTab].stack[navs[selectedTab].stack.count - 1])
        case .navigation:
            visible.append(navs[0].stack[navs[0].stack.count - 1])
        case .split:
            visible.append(navs[0].stack[navs[0].stack.count - 1])
            if !collapsed { visible.append(secondary) }
        }
    }

    // MARK: - Appearance

    /// Records what is visible before a change.
    mutating func snapshot() {
        var v: [Int32] = []
        swap(&v, &visibleBefore)
        collectVisible(into: &v)
        swap(&v, &visibleBefore)
    }

    /// After a change: loads newly shown screens (their embed segues) and writes the `will` callbacks.
    mutating func beginAppearance(animated: Bool) {
        var after: [Int32] = []
        swap(&after, &visibleAfter)
        collectVisible(into: &after)
        var g: [Int32] = []
        swap(&g, &gone)
        var c: [Int32] = []
        swap(&c, &came)
        g.removeAll(keepingCapacity: true)
        c.removeAll(keepingCapacity: true)
        for x in visibleBefore where !after.contains(x) { g.append(x) }
        for x in after where !visibleBefore.contains(x) { c.append(x) }
        for x in c where !ctlLoaded[Int(x)] {
            ctlLoaded[Int(x)] = true
            loadEmbeds(x)
        }
        for x in g { appearance("vc.disappear", x, will: true, animated: animated, delay: quick()) }
        for x in c { appearance("vc.appear", x, will: true, animated: animated, delay: quick()) }
        swap(&after, &visibleAfter)
        swap(&g, &gone)
        swap(&c, &came)
    }

    /// Writes the `did` callbacks matching the last ``beginAppearance(animated:)``.
    mutating func endAppearance(animated: Bool) {
        var delay = appearanceGap(animated: animated)
        var g: [Int32] = []
        swap(&g, &gone)
        var c: [Int32] = []
        swap(&c, &came)
        for x in g {
            appearance("vc.disappear", x, will: false, animated: animated, delay: delay)
            delay = quick()
        }
        for x in c {
            appearance("vc.appear", x, will: false, animated: animated, delay: delay)
            delay = quick()
        }
        g.removeAll(keepingCapacity: true)
        c.removeAll(keepingCapacity: true)
        swap(&g, &gone)
        swap(&c, &came)
    }

    /// Both halves, for changes that are not interactive.
    mutating func appearance(animated: Bool) {
        beginAppearance(animated: animated)
        endAppearance(animated: animated)
    }

    mutating func appearance(_ type: StaticString, _ vc: Int32, will: Bool, animated: Bool, delay: Int64) {
        open(type, after: delay)
        openIsWill = will
        field("vc", ref: vc)
        field("phase", plain: will ? "will" : "did")
        animatedField(animated)
        close()
    }

    /// A screen's view loads: its storyboard embed segue (or code) adds the embedded child (R10, R12).
    mutating func loadEmbeds(_ parent: Int32) {
        let c = classOf(parent)
        guard !classes[c].embeds.isEmpty else { return }
        let childClass = classes[c].embeds[0]
        let child = make(childClass)
        ctlLoaded[Int(child)] = true
        var cause: UInt64 = 0
        if rng.chance(0.6) {
            cause = segue(
                kind: "embed", source: parent, identifier: classes[c].embedSegue, destination: child,
                phase: "perform", segueClass: rng.chance(0.1) ? "UIStoryboardEmbedSegue" : "")
        }
        open("child.add")
        field("parent", ref: parent)
        field("vc", ref: child)
        out.key("slot")
        out.string(classes[c].slot)
        close(cause: cause)
        open("child.didMove")
        field("vc", ref: child)
        field("parent", ref: parent)
        if rng.chance(0.7) {
            out.key("slot")
            out.string(classes[c].slot)
        }
        close()
        ctlChild[Int(parent)] = child
    }

    // MARK: - Session start and end

    mutating func start() {
        phase = .running
        let entry = tables.apps[app]
        let release = entry.releases[rng.chance(0.6) ? 0 : rng.below(entry.releases.count)]
        open("session.start", after: 0)
        out.raw(",\"app\":")
        out.raw(entry.name)
        out.raw(",\"version\":")
        out.raw(release.version)
        if rng.chance(0.95) {
            out.raw(",\"build\":")
            out.raw(release.build)
        }
        if isPad {
            field("os", plain: Self.padSystems[rng.below(Self.padSystems.count)])
            field("device", plain: Self.pads[rng.below(Self.pads.count)])
            out.raw(",\"idiom\":\"pad\",\"traits\":{\"h\":\"regular\",\"v\":\"regular\"}")
        } else {
            field("os", plain: Self.phoneSystems[rng.below(Self.phoneSystems.count)])
            field("device", plain: Self.phones[rng.below(Self.phones.count)])
            out.raw(",\"idiom\":\"phone\",\"traits\":{\"h\":\"compact\",\"v\":\"regular\"}")
        }
        out.raw(",\"v\":1")
        close()

        visibleBefore.removeAll(keepingCapacity: true)
        switch shape {
        case .tabs:
            let tab = make(catalog.tabBar)
            rootController = tab
            let count = rng.chance(0.3) ? max(3, catalog.tabRoots.count - 1) : catalog.tabRoots.count
            for i in 0..<count {
                let nav = make(Vocabulary.navigation)
                let screen = make(catalog.tabRoots[i])
                navs.append(NavStack(nav: nav, stack: [screen]))
            }
            selectedTab = rng.chance(0.8) ? 0 : rng.below(count)
            windowRoot(tab)
            open("tab.set")
            field("tab", ref: tab)
            out.raw(",\"vcs\":[")
            for i in 0..<count {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                ref(navs[i].nav)
            }
            out.byte(UInt8(ascii: "]"))
            if selectedTab != 0 || rng.chance(0.5) {
                out.key("selected")
                out.integer(UInt64(selectedTab))
            }
            close()
            for i in 0..<count { setStack(i) }
        case .split:
            let split = make(catalog.split)
            rootController = split
            let primary = make(Vocabulary.navigation)
            let list = make(catalog.splitPrimaryRoot)
            navs.append(NavStack(nav: primary, stack: [list]))
            secondary = make(catalog.emptyDetail)
            windowRoot(split)
            open("split.set")
            field("split", ref: split)
            field("primary", ref: primary)
            field("secondary", ref: secondary)
            close()
            setStack(0)
        case .navigation:
            let nav = make(Vocabulary.navigation)
            rootController = nav
            let screen = make(catalog.navigationRoot)
            navs.append(NavStack(nav: nav, stack: [screen]))
            windowRoot(nav)
            setStack(0)
        }
        appearance(animated: false)
    }

    mutating func windowRoot(_ vc: Int32) {
        open("window.root")
        if rng.chance(0.8) { field("window", plain: "main") }
        field("vc", ref: vc)
        close()
    }

    /// `nav.set` of a root-tree stack as it is in the model.
    mutating func setStack(_ i: Int) {
        open("nav.set")
        field("nav", ref: navs[i].nav)
        out.raw(",\"vcs\":[")
        for (n, vc) in navs[i].stack.enumerated() {
            if n > 0 { out.byte(UInt8(ascii: ",")) }
            ref(vc)
        }
        out.byte(UInt8(ascii: "]"))
        if rng.chance(0.5) { field("animated", bool: false) }
        close()
    }

    mutating func finish() {
        let r = rng.unit()
        if r < 0.72 {
            open("app.background", after: 0)
            close()
            phase = .background
            endInBackground = true
        } else {
            open("session.end", after: 0)
            if rng.chance(0.95) {
                out.key("reason")
                out.string(r < 0.9 ? "terminated" : "crash")
            }
            close()
            phase = .ended
        }
    }

    static let phones: [StaticString] = [
        "iPhone12,8", "iPhone14,5", "iPhone14,7", "iPhone15,2", "iPhone15,4", "iPhone16,1", "iPhone16,2", "iPhone17,1",
        "iPhone17,3",
    ]
    static let pads: [StaticString] = ["iPad12,1", "iPad13,18", "iPad14,3", "iPad14,8", "iPad16,3", "iPad16,5"]
    static let phoneSystems: [StaticString] = ["iOS 26.1", "iOS 26.0.1", "iOS 18.7.2", "iOS 18.6.2", "iOS 17.7.10"]
    static let padSystems: [StaticString] = ["iPadOS 26.1", "iPadOS 26.0.1", "iPadOS 18.7.2", "iPadOS 17.7.10"]

    // MARK: - Choosing an action

    mutating func act() {
        menu.removeAll(keepingCapacity: true)
        weights.removeAll(keepingCapacity: true)
        func offer(_ action: Action, _ weight: Int) {
            menu.append(action)
            weights.append(weight)
        }
        if let last = contexts.indices.last {
            let context = contexts[last]
            let canUnwind =
                contexts.count == 1 && shape != .split && context.kind != .alert
                && classes[classOf(rootFocus)].unwindAction.utf8CodeUnitCount > 0
            switch context.kind {
            case .alert:
                offer(.dismiss, 100)
            case .plain:
                offer(.dismiss, 40)
                if context.style.isSheet { offer(.interactiveDismiss, 12) }
                if canUnwind { offer(.unwind, 14) }
                offer(.mark, 10)
                if contexts.count < 3 { offer(.presentAlert, 4) }
            case .navigation:
                let depth = context.nav.stack.count
                let topClass = classOf(context.nav.stack[depth - 1])
                if depth < 5 && catalog.presentables[context.presentable].pushes.contains(where: { $0 != topClass }) {
                    offer(.push, 30)
                }
                if depth >= 2 {
                    offer(.pop, 14)
                    offer(.interactivePop, 5)
                }
                offer(.dismiss, 14)
                if context.style.isSheet { offer(.interactiveDismiss, 5) }
                if canUnwind { offer(.unwind, 10) }
                offer(.mark, 8)
                if contexts.count < 3 { offer(.presentAlert, 4) }
                if contexts.count < 2 { offer(.present, 1) }
            }
            offer(.background, 2)
            offer(.changeTraits, isPad ? (horizontalCompact ? 4 : 1) : 0)
        } else {
            let depth = navs[shape == .tabs ? selectedTab : 0].stack.count
            if shape == .split && collapsed {
                offer(.showDetail, 10)
                if depth - secondaryStart >= 2 {
                    offer(.pop, 14)
                    offer(.interactivePop, 5)
                }
            } else {
                if depth < 8 { offer(.push, shape == .split ? 8 : 34) }
                if depth >= 2 {
                    offer(.pop, 16)
                    offer(.interactivePop, 6)
                }
                if depth >= 3 { offer(.popToRoot, 3) }
                if depth >= 4 { offer(.popTo, 3) }
                offer(.setStack, 1)
                if shape == .split { offer(.showDetail, 26) }
            }
            if shape == .tabs { offer(.selectTab, 13) }
            offer(.present, 9)
            offer(.presentAlert, 3)
            offer(.mark, 9)
            offer(.background, 2)
            // A compact iPad window (Slide Over, a narrow Split View) is usually made wide again soon.
            offer(.changeTraits, isPad ? (horizontalCompact ? 14 : 3) : 1)
            let focus = rootFocus
            if classes[classOf(focus)].embeds.count > 1 && ctlChild[Int(focus)] >= 0 { offer(.swapChild, 8) }
        }
        var total = 0
        for w in weights { total += w }
        var r = rng.below(total)
        var choice = menu[0]
        for (i, w) in weights.enumerated() {
            if r < w {
                choice = menu[i]
                break
            }
            r -= w
        }
        lastAction = choice
        switch choice {
        case .push: push()
        case .pop: pop(interactive: false)
        case .interactivePop: pop(interactive: true)
        case .popToRoot: popToRoot()
        case .popTo: popTo()
        case .setStack: replaceStack()
        case .selectTab: selectTab()
        case .present: present()
        case .presentAlert: presentAlert()
        case .dismiss: dismiss(interactive: false)
        case .interactiveDismiss: dismiss(interactive: true)
        case .unwind: unwind()
        case .mark: mark()
        case .background: background()
        case .changeTraits: changeTraits()
        case .showDetail: showDetail()
        case .swapChild: swapChild()
        }
    }

    // MARK: - Navigation stacks

    /// The class the user opens next from `source`.
    mutating func nextClass(from source: Int32, location: NavLocation) -> Int {
        let sourceClass = classOf(source)
        if case .presented(let i) = location {
            let pool = catalog.presentables[contexts[i].presentable].pushes
            let pick = pool[rng.below(pool.count)]
            return pick == sourceClass ? pool[(pool.firstIndex(of: pick)! + 1) % pool.count] : pick
        }
        let next = classes[sourceClass].next
        if !next.isEmpty && rng.chance(0.85) { return next[rng.below(next.count)] }
        var pick = catalog.pushes[rng.below(catalog.pushes.count)]
        if pick == sourceClass { pick = catalog.pushes[rng.below(catalog.pushes.count)] }
        return pick
    }

    mutating func push() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let source = stack.stack[stack.stack.count - 1]
        let vcClass = nextClass(from: source, location: location)
        let vc = make(vcClass)
        snapshot()
        var cause: UInt64 = 0
        let identifier = classes[vcClass].segue
        let animated = rng.chance(0.96)
        let r = rng.unit()
        if r < 0.5 && identifier.utf8CodeUnitCount > 0 {
            let legacy = rng.chance(0.04)
            let kind: StaticString = legacy ? "push" : "show"
            let segueClass: StaticString = rng.chance(0.1) ? (legacy ? "UIStoryboardPushSegue" : "UIStoryboardShowSegue") : ""
            if rng.chance(0.35) {
                let ok = !rng.chance(0.06)
                segue(kind: kind, source: source, identifier: identifier, destination: vc, phase: "should", result: ok)
                if !ok { return }
            }
            if rng.chance(0.8) {
                segue(kind: kind, source: source, identifier: identifier, destination: vc, phase: "prepare")
            }
            cause = segue(
                kind: kind, source: source, identifier: identifier, destination: vc, phase: "perform",
                animated: rng.chance(0.5) ? animated : nil, segueClass: segueClass)
        } else if r < 0.62 {
            open("show")
            field("from", ref: source)
            field("vc", ref: vc)
            close()
            cause = seq
        }
        open("nav.push")
        field("nav", ref: stack.nav)
        field("vc", ref: vc)
        animatedField(animated)
        close(cause: cause)
        modifyStack(location) { $0.append(vc) }
        appearance(animated: animated)
    }

    mutating func pop(interactive: Bool) {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let top = stack.stack[stack.stack.count - 1]
        snapshot()
        if interactive {
            transitionCounter += 1
            let number = transitionCounter
            open("transition.begin")
            transitionID("pop", number)
            field("interactive", bool: true)
            close()
            open("nav.pop")
            field("nav", ref: stack.nav)
            if rng.chance(0.6) { field("vc", ref: top) }
            field("animated", bool: true)
            close()
            if rng.chance(0.22) {
                // The user lets go early: UIKit rolls the pop back (R19), with the reversed
                // callbacks: the revealed screen's will-appear then will- and did-disappear, the
                // covered one's will-disappear then will- and did-appear (E5, E6).
                noteCancelledGesture()
                let below = stack.stack[stack.stack.count - 2]
                appearance("vc.disappear", top, will: true, animated: true, delay: quick())
                appearance("vc.appear", below, will: true, animated: true, delay: quick())
                open("transition.end", after: Int64(rng.between(120_000, 700_000)))
                transitionID("pop", number)
                field("interactive", bool: true)
                field("completed", bool: false)
                close()
                appearance("vc.disappear", below, will: true, animated: true, delay: quick())
                appearance("vc.disappear", below, will: false, animated: true, delay: quick())
                appearance("vc.appear", top, will: true, animated: true, delay: quick())
                appearance("vc.appear", top, will: false, animated: true, delay: quick())
                return
            }
            modifyStack(location) { $0.removeLast() }
            beginAppearance(animated: true)
            open("transition.end", after: Int64(rng.between(150_000, 900_000)))
            transitionID("pop", number)
            field("interactive", bool: true)
            field("completed", bool: true)
            close()
            endAppearance(animated: false)
        } else {
            let animated = rng.chance(0.95)
            open("nav.pop")
            field("nav", ref: stack.nav)
            if rng.chance(0.5) { field("vc", ref: top) }
            animatedField(animated)
            close()
            modifyStack(location) { $0.removeLast() }
            appearance(animated: animated)
        }
    }

    mutating func popToRoot() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        snapshot()
        let animated = rng.chance(0.9)
        open("nav.popToRoot")
        field("nav", ref: stack.nav)
        animatedField(animated)
        close()
        modifyStack(location) { $0.removeSubrange(1...) }
        appearance(animated: animated)
    }

    mutating func popTo() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let keep = rng.between(1, stack.stack.count - 2)  // index of the target, never the top
        snapshot()
        let animated = rng.chance(0.9)
        open("nav.popTo")
        field("nav", ref: stack.nav)
        field("vc", ref: stack.stack[keep])
        animatedField(animated)
        close()
        modifyStack(location) { $0.removeSubrange((keep + 1)...) }
        appearance(animated: animated)
    }

    /// `setViewControllers`: the app replaces the stack with its root and one fresh screen.
    mutating func replaceStack() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let vc = make(catalog.pushes[rng.below(catalog.pushes.count)])
        snapshot()
        let animated = rng.chance(0.7)
        open("nav.set")
        field("nav", ref: stack.nav)
        out.raw(",\"vcs\":[")
        ref(stack.stack[0])
        out.byte(UInt8(ascii: ","))
        ref(vc)
        out.byte(UInt8(ascii: "]"))
        animatedField(animated)
        close()
        modifyStack(location) {
            $0.removeSubrange(1...)
            $0.append(vc)
        }
        appearance(animated: animated)
    }

    // MARK: - Tabs and split views

    mutating func selectTab() {
        let count = navs.count
        let index = rng.chance(0.1) ? selectedTab : (selectedTab + 1 + rng.below(count - 1)) % count
        let byUser = rng.chance(0.93)
        snapshot()
        open("tab.select")
        field("tab", ref: rootController)
        let form = rng.unit()
        if form < 0.9 {
            out.key("index")
            out.integer(UInt64(index))
        }
        if form >= 0.7 { field("vc", ref: navs[index].nav) }
        field("byUser", bool: byUser)
        close()
        let animated: Bool
        if index == selectedTab {
            // Tapping the selected tab's item pops its stack to the root (R13).
            animated = true
            if byUser { navs[index].stack.removeSubrange(1...) }
        } else {
            animated = false
            selectedTab = index
        }
        appearance(animated: animated)
    }

    mutating func showDetail() {
        let source = navs[0].stack[navs[0].stack.count - 1]
        let vcClass = catalog.details[rng.below(catalog.details.count)]
        let vc = make(vcClass)
        snapshot()
        var cause: UInt64
        if rng.chance(0.45) {
            let legacy = rng.chance(0.05)
            let kind: StaticString = legacy ? "replace" : "showDetail"
            let identifier: StaticString = rng.chance(0.5) ? "showDetail" : classes[vcClass].segue
            if rng.chance(0.25) {
                let ok = !rng.chance(0.05)
                segue(kind: kind, source: source, identifier: identifier, destination: vc, phase: "should", result: ok)
                if !ok { return }
            }
            if rng.chance(0.75) {
                segue(kind: kind, source: source, identifier: identifier, destination: vc, phase: "prepare")
            }
            cause = segue(
                kind: kind, source: source, identifier: identifier, destination: vc, phase: "perform",
                segueClass: rng.chance(0.1) ? (legacy ? "UIStoryboardReplaceSegue" : "UIStoryboardShowDetailSegue") : "")
        } else {
            open("showDetail")
            field("from", ref: source)
            field("vc", ref: vc)
            close()
            cause = seq
        }
        if collapsed {
            // R2 while collapsed: a push onto the primary navigation controller, which says so.
            open("nav.push")
            field("nav", ref: navs[0].nav)
            field("vc", ref: vc)
            field("animated", bool: true)
            close(cause: cause)
            navs[0].stack.append(vc)
            appearance(animated: true)
        } else {
            // Expanded: the intent alone replaces the secondary column.
            secondary = vc
            appearance(animated: false)
        }
    }

    mutating func changeTraits() {
        if isPad { horizontalCompact.toggle() } else { verticalCompact.toggle() }
        snapshot()
        open("traits.change")
        field("h", plain: horizontalCompact ? "compact" : "regular")
        field("v", plain: verticalCompact ? "compact" : "regular")
        close()
        guard shape == .split else { return }
        if horizontalCompact && !collapsed {
            // R14: the secondary column goes onto the primary stack.
            navs[0].stack.append(secondary)
            secondaryStart = navs[0].stack.count - 1
            secondary = -1
            collapsed = true
            open("split.collapse")
            field("split", ref: rootController)
            close()
            appearance(animated: false)
        } else if !horizontalCompact && collapsed {
            // R14: what came from the secondary column leaves the stack; its first is the column again.
            secondary = navs[0].stack[secondaryStart]
            navs[0].stack.removeSubrange(secondaryStart...)
            collapsed = false
            open("split.expand")
            field("split", ref: rootController)
            close()
            appearance(animated: false)
        }
    }

    // MARK: - Presentations

    mutating func present() {
        let from: Int32
        if contexts.isEmpty && shape == .split && !collapsed && rng.chance(0.3) {
            from = navs[0].stack[navs[0].stack.count - 1]
        } else {
            from = focusedScreen
        }
        let which = rng.below(catalog.presentables.count)
        let p = catalog.presentables[which]
        var style = isPad ? p.padStyle : p.phoneStyle
        if style == .pageSheet && rng.chance(0.1) { style = .automatic }
        let root: Int32
        var content: Int32 = -1
        if p.inNavigation {
            root = make(Vocabulary.navigation)
            content = make(p.content)
        } else {
            root = make(p.content)
        }
        let anchorSpec: AnchorSpec? = style == .popover ? p.anchor : nil
        var transition = p.transition
        if transition.utf8CodeUnitCount == 0 && style != .popover && rng.chance(0.1) { transition = "coverVertical" }
        let animated = rng.chance(0.95)
        snapshot()
        var cause: UInt64 = 0
        if p.segue.utf8CodeUnitCount > 0 && rng.chance(0.55) {
            let legacy = rng.chance(0.06)
            let kind: StaticString =
                style == .popover
                ? (legacy ? "popover" : "popoverPresentation") : (legacy ? "modal" : "presentation")
            if rng.chance(0.25) {
                let ok = !rng.chance(0.08)
                segue(kind: kind, source: from, identifier: p.segue, destination: root, phase: "should", result: ok)
                if !ok { return }
            }
            if rng.chance(0.6) {
                segue(kind: kind, source: from, identifier: p.segue, destination: root, phase: "prepare")
            }
            cause = segue(
                kind: kind, source: from, identifier: p.segue, destination: root, phase: "perform",
                style: rng.chance(0.7) ? style : nil, transition: transition, anchor: anchorSpec, animated: animated)
        }
        open("present")
        field("from", ref: from)
        field("vc", ref: root)
        field("style", plain: style.name)
        if transition.utf8CodeUnitCount > 0 { field("transition", plain: transition) }
        animatedField(animated)
        if let anchorSpec { anchor(anchorSpec) }
        close(cause: cause)
        contexts.append(
            Presentation(
                root: root, kind: p.inNavigation ? .navigation : .plain, nav: NavStack(nav: root, stack: []),
                style: style, presentable: which))
        if p.inNavigation {
            open("nav.set")
            field("nav", ref: root)
            out.raw(",\"vcs\":[")
            ref(content)
            out.byte(UInt8(ascii: "]"))
            field("animated", bool: false)
            close()
            contexts[contexts.count - 1].nav.stack.append(content)
        }
        appearance(animated: animated)
    }

    mutating func presentAlert() {
        let from = focusedScreen
        let sheet = rng.chance(0.3)
        let title =
            sheet
            ? catalog.sheetTitles[rng.below(catalog.sheetTitles.count)]
            : catalog.alertTitles[rng.below(catalog.alertTitles.count)]
        let alert = make(Vocabulary.alert, title: title)
        snapshot()
        open("present")
        field("from", ref: from)
        field("vc", ref: alert)
        if rng.chance(0.2) { field("style", plain: sheet && isPad ? "popover" : "automatic") }
        field("animated", bool: true)
        field("alertStyle", plain: sheet ? "actionSheet" : "alert")
        if sheet && (isPad || rng.chance(0.2)) {
            anchor(rng.chance(0.5) ? .barButton("actionButton") : .sourceView("moreButton"))
        }
        close()
        contexts.append(
            Presentation(
                root: alert, kind: .alert, nav: NavStack(nav: -1, stack: []), style: .automatic, presentable: -1))
        appearance(animated: true)
    }

    mutating func dismiss(interactive: Bool) {
        let i = contexts.count - 1
        let context = contexts[i]
        snapshot()
        if interactive {
            transitionCounter += 1
            let number = transitionCounter
            open("transition.begin")
            transitionID("dismiss", number)
            field("interactive", bool: true)
            close()
            open("dismiss")
            field("vc", ref: context.root)
            field("animated", bool: true)
            close()
            if rng.chance(0.3) {
                // The sheet springs back: the dismissal is rolled back (R19); the presented
                // screen's will-disappear is reversed by its will- and did-appear (E5, E6).
                noteCancelledGesture()
                let shown = contentTop(i)
                appearance("vc.disappear", shown, will: true, animated: true, delay: quick())
                open("transition.end", after: Int64(rng.between(150_000, 900_000)))
                transitionID("dismiss", number)
                field("interactive", bool: true)
                field("completed", bool: false)
                close()
                appearance("vc.appear", shown, will: true, animated: true, delay: quick())
                appearance("vc.appear", shown, will: false, animated: true, delay: quick())
                return
            }
            contexts.removeLast()
            beginAppearance(animated: true)
            open("transition.end", after: Int64(rng.between(150_000, 900_000)))
            transitionID("dismiss", number)
            field("interactive", bool: true)
            field("completed", bool: true)
            close()
            endAppearance(animated: false)
        } else {
            // The receiver: the presented controller itself, or a screen inside it (R7 walks up).
            let receiver = context.kind == .navigation && rng.chance(0.35) ? contentTop(i) : context.root
            let animated = rng.chance(0.95)
            open("dismiss")
            field("vc", ref: receiver)
            animatedField(animated)
            close()
            contexts.removeLast()
            appearance(animated: animated)
        }
    }

    /// An unwind segue from the presented screen back to the screen that presented it (R17).
    mutating func unwind() {
        let source = contentTop(contexts.count - 1)
        let target = rootFocus
        let targetClass = classOf(target)
        let action = classes[targetClass].unwindAction
        snapshot()
        if rng.chance(0.7) {
            segue(
                kind: "unwind", source: source, identifier: classes[targetClass].unwindSegue, destination: target,
                phase: "prepare", action: action)
        }
        open("unwind")
        field("source", ref: source)
        out.key("action")
        out.string(action)
        if rng.chance(0.6) { field("target", ref: target) }
        close()
        contexts.removeAll(keepingCapacity: true)
        appearance(animated: true)
    }

    // MARK: - Containment

    /// A segmented control swaps the embedded child (R10: willMove(nil), removeFromParent, addChild, didMove).
    mutating func swapChild() {
        let parent = rootFocus
        let c = classOf(parent)
        let old = ctlChild[Int(parent)]
        let embeds = classes[c].embeds
        var newClass = embeds[rng.below(embeds.count)]
        if newClass == classOf(old) { newClass = embeds[(embeds.firstIndex(of: newClass)! + 1) % embeds.count] }
        open("child.willMove")
        field("vc", ref: old)
        if rng.chance(0.7) { out.raw(",\"parent\":null") }
        close()
        open("child.remove")
        field("vc", ref: old)
        if rng.chance(0.6) { field("parent", ref: parent) }
        if rng.chance(0.5) {
            out.key("slot")
            out.string(classes[c].slot)
        }
        close()
        let child = make(newClass)
        ctlLoaded[Int(child)] = true
        open("child.add")
        field("parent", ref: parent)
        field("vc", ref: child)
        out.key("slot")
        out.string(classes[c].slot)
        close()
        open("child.didMove")
        field("vc", ref: child)
        field("parent", ref: parent)
        close()
        ctlChild[Int(parent)] = child
    }

    // MARK: - App state and analytics

    mutating func background() {
        open("app.background")
        close()
        phase = .background
        endInBackground = rng.chance(0.05)
    }

    mutating func mark() {
        let template = catalog.marks[rng.below(catalog.marks.count)]
        open("mark")
        out.key("name")
        out.string(template.name)
        if rng.chance(0.96) {
            out.raw(",\"props\":{")
            var first = true
            for (key, value) in template.props {
                if !first && rng.chance(0.1) { continue }
                if !first { out.byte(UInt8(ascii: ",")) }
                first = false
                out.string(key)
                out.byte(UInt8(ascii: ":"))
                switch value {
                case .strings(let choices):
                    out.string(choices[rng.below(choices.count)])
                case .integer(let low, let high):
                    out.integer(UInt64(rng.between(low, high)))
                case .money(let low, let high):
                    out.decimal(hundredths: rng.between(low, high))
                case .tenths(let low, let high):
                    out.decimal(tenths: rng.between(low, high))
                case .flag(let p):
                    out.bool(rng.chance(p))
                case .identifier(let prefix, let digits):
                    var low = 1
                    for _ in 1..<digits { low *= 10 }
                    out.byte(UInt8(ascii: "\""))
                    out.raw(prefix)
                    out.integer(UInt64(rng.between(low, low * 10 - 1)))
                    out.byte(UInt8(ascii: "\""))
                }
            }
            out.byte(UInt8(ascii: "}"))
        }
        close()
    }
}
