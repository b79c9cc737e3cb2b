import NavlogEvents

/// Which kinds of callbacks a session has recorded so far (rules E1–E5): apps and RUM SDKs
/// record different subsets of UIKit's calls, and a misuse is reported only when the events
/// that would prove it are of a kind the session records.
///
/// Learned from the session's own events as they are applied, so a judgement made at event
/// N uses only events up to N (the same answer whether a replay stops there or goes on).
public struct RecordingEvidence: OptionSet, Sendable, Hashable {
    public var rawValue: UInt16

    /// Creates a set from its bits (checkpoints).
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// `vc.appear` with phase `will` (viewWillAppear).
    public static let willAppear = RecordingEvidence(rawValue: 1 << 0)
    /// `vc.appear` with phase `did` (viewDidAppear).
    public static let didAppear = RecordingEvidence(rawValue: 1 << 1)
    /// `vc.disappear` with phase `will` (viewWillDisappear).
    public static let willDisappear = RecordingEvidence(rawValue: 1 << 2)
    /// `vc.disappear` with phase `did` (viewDidDisappear).
    public static let didDisappear = RecordingEvidence(rawValue: 1 << 3)
    /// `transition.begin` (transitions are recorded: E2, E5).
    public static let transitions = RecordingEvidence(rawValue: 1 << 4)
    /// `child.add` (addChild is recorded: R11's didMove check needs it).
    public static let childAdd = RecordingEvidence(rawValue: 1 << 5)
    /// `child.willMove` (R11's removeFromParent check needs it).
    public static let childWillMove = RecordingEvidence(rawValue: 1 << 6)
    /// `child.didMove` or `child.remove`.
    public static let childOther = RecordingEvidence(rawValue: 1 << 7)
    /// An operation that carried `cause`.
    public static let cause = RecordingEvidence(rawValue: 1 << 8)

    /// Any containment call (a controller that appears outside the hierarchy could otherwise
    /// be an embedded child whose `addChild` was not recorded).
    public static let containment: RecordingEvidence = [.childAdd, .childWillMove, .childOther]
    /// Any disappear callback.
    public static let disappear: RecordingEvidence = [.willDisappear, .didDisappear]

    /// What `type` (with its `phase` for appearance events) shows the session records.
    static func of(_ type: EventType, will: Bool) -> RecordingEvidence {
        switch type {
        case .vcAppear: will ? .willAppear : .didAppear
        case .vcDisappear: will ? .willDisappear : .didDisappear
        case .transitionBegin: .transitions
        case .childAdd: .childAdd
        case .childWillMove: .childWillMove
        case .childDidMove, .childRemove: .childOther
        default: []
        }
    }

    /// Names of the kinds recorded, for `navlog replay`'s output and reports.
    public var names: [String] {
        let all: [(RecordingEvidence, String)] = [
            (.willAppear, "willAppear"), (.didAppear, "didAppear"), (.willDisappear, "willDisappear"), (.didDisappear, "didDisappear"),
            (.transitions, "transitions"), (.childAdd, "childAdd"), (.childWillMove, "childWillMove"), (.childOther, "childDidMove"), (.cause, "cause"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}
