/// The UIKit misuses and transport problems the replayer reports (events.md "Anomaly codes").
public enum AnomalyCode: UInt8, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// A1: `present` from a controller that is not attached (R3a).
    case presentDetached = 1
    /// A2: `present` on a presenter that is already presenting (R3c).
    case presentWhilePresenting
    /// A3: presenting or pushing a controller that is already attached elsewhere (R3d, R8).
    case presentAttached
    /// A4: a popover in a regular environment without an anchor (R6). Fatal.
    case popoverWithoutAnchor
    /// A5: `dismiss` with nothing to dismiss (R7).
    case dismissNothing
    /// A6: pushing a controller already in the stack (R8). Fatal.
    case pushDuplicate
    /// A7: pushing a navigation controller (R8). Fatal.
    case pushNavigationController
    /// A8: a push while an animated transition of the same navigation controller is unfinished (R8).
    case nestedTransition
    /// A9: a pop on a stack of one (R9).
    case popRoot
    /// A10: `popTo` a controller not in the stack (R9). Fatal.
    case popToMissing
    /// A11: containment callbacks out of order (R11).
    case containmentOrder
    /// A12: an unwind that no controller implements (R17).
    case unwindNoTarget
    /// A13: an appearance of a controller outside the hierarchy (R18, R20).
    case detachedAppearance
    /// A14: appearance callbacks that do not balance (R20).
    case unbalancedAppearance
    /// A15: an operation whose `cause` names an intent it disagrees with.
    case resolutionMismatch
    /// A16: an operation on a container that is not attached (H2).
    case unknownController
    /// A17: a gap in a session's `seq` (events were lost).
    case seqGap
    /// A18: a `seq` not greater than the previous one (the event is not applied).
    case seqDuplicate

    /// `A1` … `A18`.
    public var code: String { "A\(rawValue)" }

    /// The name events.md gives the code, such as `present-detached`.
    public var name: String { Self.names[Int(rawValue) - 1] }

    /// Whether UIKit raises an exception for this misuse (the app would have crashed; the
    /// replayer leaves the hierarchy unchanged and goes on).
    public var isFatal: Bool {
        switch self {
        case .popoverWithoutAnchor, .pushDuplicate, .pushNavigationController, .popToMissing: true
        default: false
        }
    }

    public var description: String { "\(code) \(name)" }

    /// The code named `A4` or `popover-without-anchor`.
    public init?(_ text: String) {
        if let index = Self.names.firstIndex(of: text) {
            self.init(rawValue: UInt8(index + 1))
        } else if text.first == "A", let number = UInt8(text.dropFirst()) {
            self.init(rawValue: number)
        } else {
            return nil
        }
    }

    private static let names = [
        "present-detached", "present-while-presenting", "present-attached", "popover-without-anchor",
        "dismiss-nothing", "push-duplicate", "push-navigation-controller", "nested-transition", "pop-root",
        "pop-to-missing", "containment-order", "unwind-no-target", "detached-appearance",
        "unbalanced-appearance", "resolution-mismatch", "unknown-controller", "seq-gap", "seq-duplicate",
    ]
}

/// Which event of a session something happened at.
public struct EventPosition: Sendable, Hashable {
    /// The event's `seq`, when it had one.
    public var sequence: UInt64?
    /// The event's time (µs since the epoch).
    public var timestamp: Int64
    /// The event's log sequence number, when it was read from a log.
    public var lsn: UInt64?
    /// The event's 0-based position in the session.
    public var index: Int
}

/// One anomaly: what went wrong, by which rule, at which event, with which controllers.
public struct Anomaly: Sendable, Hashable {
    /// The code (A1 … A18).
    public var code: AnomalyCode
    /// The rule of uikit-navigation-rules.md it violates (`R3a`, `R8`, …), nil for transport anomalies.
    public var rule: String?
    /// The event that raised it.
    public var event: EventPosition
    /// The controllers involved, by handle.
    public var controllers: [ControllerHandle]
    /// A sentence saying what happened.
    public var message: String

    /// Whether UIKit would have raised an exception.
    public var isFatal: Bool { code.isFatal }

    /// Creates an anomaly.
    public init(code: AnomalyCode, rule: String?, event: EventPosition, controllers: [ControllerHandle], message: String) {
        self.code = code
        self.rule = rule
        self.event = event
        self.controllers = controllers
        self.message = message
    }
}
