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
// screens and views) with what the replayer derives from its events (WorkloadModelAgreementTests)
// are an oracle and not the engine checked against itself. Keep it so: take nothing from
// NavlogReplay here (tools/package-graph.py --check fails if the module comes to depend on it),
// and fix a disagreement on the side the rules say is wrong.
//
// The session's parts, one file each: its events (SessionSimulator+Events), its model of the
// hierarchy (+Hierarchy), appearance callbacks and interactive transitions (+Appearance), start
// and end (+Lifecycle), the choice of an action (+Actions), and the actions by what they change:
// navigation stacks (+Stacks), tab bars and split views (+Containers), presentations
// (+Presentations), embedded children (+Containment), analytics marks (+Marks).

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
        drawSessionID()
        drawAppAndDevice()
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
        clearHierarchy()
    }

    /// A random (version 4) UUID as the session id, in its text form.
    private mutating func drawSessionID() {
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
    }

    /// The session's app, device (phone or pad), recording style and root container.
    private mutating func drawAppAndDevice() {
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
    }

    /// No controllers and no hierarchy yet; controller addresses start from a new random base.
    private mutating func clearHierarchy() {
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
                let r = rng.unit()
                end(reason: r < 0.95 ? (r < 0.5 ? "background-timeout" : (r < 0.8 ? "terminated" : "jetsam")) : nil)
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
}
