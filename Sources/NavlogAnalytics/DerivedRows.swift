public import NavlogEvents
public import NavlogReplay

/// The derived tables analytics, SQL and exports work on, one row type per table. Every row
/// carries the session's app, version and idiom so that each table stands alone in an export.
///
/// Screens, dwell and transitions come from the replay engine's focus (F1, F4), not from raw
/// appearance events.

/// Who a session was: the app, its version, the device.
public struct SessionTags: Sendable, Hashable {
    public var app = ""
    public var version = ""
    public var idiom = ""
    public var device = ""
}

/// `events`: one row per stored event.
public struct EventRow: Sendable, Hashable {
    public var lsn: UInt64
    public var session: String
    public var tags: SessionTags
    public var sequence: UInt64?
    /// µs since the epoch (device time).
    public var timestamp: Int64
    public var receivedAt: Int64
    public var type: String
    /// The key a trusted relay said sent the event (`navlog cat`'s `_key`), nil for an event
    /// not relayed.
    public var key: String? = nil
}

/// `screen_visits`: one row per screen view, a screen focused (F1) for a positive time (E3):
/// the replayer's view (``ScreenView``, the one type every reader of the focus shares) and
/// whose it was.
public struct ScreenVisit: Sendable, Hashable {
    public var session: String
    /// The session as a small number, the same in every row of one scan (cheap to count).
    public var sessionNumber = 0
    public var tags: SessionTags
    /// The view: its screen, controller, times, dwell (F4), cause and position.
    public var view: ScreenView

    /// A row of `view` of `session`.
    public init(session: String, sessionNumber: Int = 0, tags: SessionTags, view: ScreenView) {
        self.session = session
        self.sessionNumber = sessionNumber
        self.tags = tags
        self.view = view
    }
}

extension ScreenView {
    /// How the view began, as `screen_visits` and `transitions` rows say it: push, pop,
    /// present, dismiss, tab, show, showDetail, segue:IDENTIFIER (or segue:KIND without one),
    /// unwind, root, split, adapt (size class), cancel (R19 rollback), or the event type for
    /// anything else.
    public var how: String {
        switch cause {
        case .navPush: return "push"
        case .navPop, .navPopTo, .navPopToRoot: return "pop"
        case .present: return "present"
        case .dismiss: return "dismiss"
        case .tabSelect, .tabSet: return "tab"
        case .show: return "show"
        case .showDetail: return "showDetail"
        case .unwind: return "unwind"
        case .windowRoot: return "root"
        case .splitSet, .splitCollapse, .splitExpand: return "split"
        case .traitsChange: return "adapt"
        case .transitionEnd: return "cancel"
        case .segue:
            guard let detail else { return "segue:?" }
            if detail == "#unwind" { return "unwind" }
            return "segue:" + (detail.hasPrefix("#") ? String(detail.dropFirst()) : detail)
        default: return cause.name
        }
    }
}

/// `transitions`: one row per screen view, the transition into it from the view before (E3).
public struct TransitionRow: Sendable, Hashable {
    public var session: String
    /// The session as a small number, the same in every row of one scan (cheap to count).
    public var sessionNumber = 0
    public var tags: SessionTags
    public var timestamp: Int64
    public var sequence: UInt64?
    /// The screen left (nil for the session's first screen) and the screen reached.
    public var from: String?
    public var to: String
    /// How: as the view reached says it (``ScreenView/how``).
    public var how: String
}

/// `sessions`: one row per session.
public struct SessionRow: Sendable, Hashable {
    public var session: String
    /// The session as a small number, the same in every row of one scan (cheap to count).
    public var sessionNumber = 0
    public var tags: SessionTags
    public var first: Int64
    public var last: Int64
    public var events: Int
    /// Screen visits, distinct screens, anomalies.
    public var visits: Int
    public var screens: Int
    public var anomalies: Int
    /// The deepest navigation stack and presentation chain seen.
    public var maxStackDepth: Int
    public var maxPresentationDepth: Int
    /// The screen focused when the session ended (or its last event).
    public var exitScreen: String?
    /// Whether `session.end` was seen.
    public var ended: Bool
}

/// `anomalies`: one row per anomaly the engine reported.
public struct AnomalyRow: Sendable, Hashable {
    public var session: String
    /// The session as a small number, the same in every row of one scan (cheap to count).
    public var sessionNumber = 0
    public var tags: SessionTags
    public var timestamp: Int64
    public var sequence: UInt64?
    public var lsn: UInt64?
    public var code: String
    public var name: String
    public var rule: String?
    public var fatal: Bool
    /// The controllers involved, by id, space-separated.
    public var controllers: String
    public var message: String
}

/// `exits`: the screen focused when the app went to the background or the session ended.
public struct ExitRow: Sendable, Hashable {
    public var session: String
    /// The session as a small number, the same in every row of one scan (cheap to count).
    public var sessionNumber = 0
    public var tags: SessionTags
    public var timestamp: Int64
    public var screen: String
    /// `background` or `end`.
    public var reason: String
}

/// Receives derived rows as a scan produces them (per session, in time order within a session).
public protocol DerivedTableSink {
    mutating func event(_ row: EventRow)
    mutating func visit(_ row: ScreenVisit)
    mutating func transition(_ row: TransitionRow)
    mutating func session(_ row: SessionRow)
    mutating func anomaly(_ row: AnomalyRow)
    mutating func exit(_ row: ExitRow)
    /// Whether the sink reads ``event(_:)`` rows (making them costs a String per event).
    var wantsEvents: Bool { get }
    /// Whether the sink wants the `events` rows as a source to read when it likes
    /// (``events(_:)``) instead of ``event(_:)`` calls during the scan.
    var takesEventSource: Bool { get }
    /// Given once, after the other rows, by a scan whose sink ``wantsEvents`` or
    /// ``takesEventSource``: the `events` rows. By default, each goes to ``event(_:)``.
    mutating func events(_ source: EventRowSource) throws
    /// Whether the sink reads ``visit(_:)``, ``transition(_:)`` and ``session(_:)`` rows (true
    /// by default): a report of one table says false for the others, and the scan then does
    /// not make them (a session row's distinct screens cost a set insertion per view).
    var wantsVisits: Bool { get }
    var wantsTransitions: Bool { get }
    var wantsSessions: Bool { get }
    /// Whether the sink reads a visit's ``ScreenView/controller`` (true by default): a scan of
    /// the journals otherwise leaves it empty (writing an address out is a string per visit).
    var wantsControllerIDs: Bool { get }
}

/// A sink that a scan may fill in parts side by side, each part over sessions of its own (a
/// report that adds rows up): each part starts as ``emptyPart()`` and is merged back in with
/// ``merge(_:)``. The session numbers of rows are unique across the parts.
public protocol MergeableTableSink: DerivedTableSink {
    /// A sink with no rows, made as this one was (the same options).
    func emptyPart() -> Self
    /// Adds what `part` took, over sessions this sink took none of.
    mutating func merge(_ part: Self)
}

extension DerivedTableSink {
    public mutating func event(_ row: EventRow) {}
    public mutating func visit(_ row: ScreenVisit) {}
    public mutating func transition(_ row: TransitionRow) {}
    public mutating func session(_ row: SessionRow) {}
    public mutating func anomaly(_ row: AnomalyRow) {}
    public mutating func exit(_ row: ExitRow) {}
    public var wantsEvents: Bool { false }
    public var takesEventSource: Bool { false }
    public var wantsVisits: Bool { true }
    public var wantsTransitions: Bool { true }
    public var wantsSessions: Bool { true }
    public var wantsControllerIDs: Bool { true }
    public mutating func events(_ source: EventRowSource) throws {
        try source.forEach { event($0) }
    }
}

/// Which sessions and times a scan covers (`navlog query` filters).
public struct AnalyticsFilter: Sendable, Hashable {
    public var since: Int64?
    public var until: Int64?
    public var app: String?
    public var version: String?
    public var idiom: String?
    public var session: String?

    public init(since: Int64? = nil, until: Int64? = nil, app: String? = nil, version: String? = nil, idiom: String? = nil, session: String? = nil) {
        self.since = since
        self.until = until
        self.app = app
        self.version = version
        self.idiom = idiom
        self.session = session
    }

    /// Whether `time` lies in the window (`since`…`until`, either open).
    public func contains(_ time: Int64) -> Bool {
        (since.map { time >= $0 } ?? true) && (until.map { time <= $0 } ?? true)
    }
}
