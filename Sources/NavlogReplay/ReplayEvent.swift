public import NavlogEvents

/// One event as the replayer reads it: the envelope and a view of the stored body.
///
/// - Important: `body` views memory owned by a decoded block or batch; use the event only
///   inside the closure that provided it.
public struct ReplayEvent {
    /// The event's type.
    public var type: EventType
    /// Its `seq`, when it had one.
    public var sequence: UInt64?
    /// Its time (µs since the epoch).
    public var timestamp: Int64
    /// Its log sequence number, when read from a log.
    public var lsn: UInt64?
    /// Its fields.
    public var body: StoredBody

    /// Creates an event view.
    public init(type: EventType, sequence: UInt64?, timestamp: Int64, lsn: UInt64?, body: StoredBody) {
        self.type = type
        self.sequence = sequence
        self.timestamp = timestamp
        self.lsn = lsn
        self.body = body
    }
}

/// What the replayer made of an intent (`show`, `showDetail`, `segue`, `unwind`): the
/// operation the rules resolve it into (R1, R2, R3, R15–R18).
public enum Resolution: Sendable, Hashable {
    /// Pushed `vc` onto navigation controller `container` (R1, R2 collapsed, R8).
    case push(container: ControllerHandle, vc: ControllerHandle)
    /// Presented `vc` from `presenter` (the actual presenter of R3b) with a style (R3, R4).
    case present(presenter: ControllerHandle, vc: ControllerHandle, style: PresentationStyle, effectiveStyle: PresentationStyle)
    /// `vc` replaced the secondary column of split view `container` (R2 expanded).
    case setSecondary(container: ControllerHandle, vc: ControllerHandle)
    /// `vc` became a contained child of `container` (R12 embed).
    case addChild(container: ControllerHandle, vc: ControllerHandle, slot: String?)
    /// `vc` became the root of navigation controller `container` (R16 rootViewController).
    case setRoot(container: ControllerHandle, vc: ControllerHandle)
    /// `vc` became the last tab of `container` (R16 viewControllers).
    case appendTab(container: ControllerHandle, vc: ControllerHandle)
    /// `vc` became a column of split view `container` (R16).
    case setColumn(container: ControllerHandle, column: Hierarchy.Placement, vc: ControllerHandle)
    /// Unwound to `destination` (R17).
    case unwind(destination: ControllerHandle)
    /// A custom segue: whatever its `perform()` did; no change to the hierarchy (R18).
    case custom
    /// `shouldPerformSegue` returned false (R15).
    case cancelled
    /// Nothing happens at this phase (`should` returning true, `prepare`).
    case none
    /// An anomaly prevented it.
    case ignored

    /// The action name used in output (`push`, `present`, `setSecondary`, …).
    public var action: String {
        switch self {
        case .push: "push"
        case .present: "present"
        case .setSecondary: "setSecondary"
        case .addChild: "addChild"
        case .setRoot: "setRoot"
        case .appendTab: "appendTab"
        case .setColumn: "setColumn"
        case .unwind: "unwind"
        case .custom: "custom"
        case .cancelled: "cancelled"
        case .none: "none"
        case .ignored: "ignored"
        }
    }
}
