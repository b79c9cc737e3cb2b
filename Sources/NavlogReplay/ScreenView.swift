public import NavlogEvents

/// A screen view that has ended (E3: a screen that held the focus, F1, for a positive time):
/// what analytics counts as one view of a screen, the one closed-view type every reader of the
/// focus shares (the replay index's focus journal records it, `screen_visits` rows carry it).
///
/// The view still in progress is engine state, ``SessionReplayer/FocusVisit`` (controller
/// handles and a dwell baseline, not names and a dwell); ``SessionReplayer/screenView(_:end:)``
/// turns one into this once it ends.
public struct ScreenView: Sendable, Hashable {
    /// The screen: its controller's class (its id when the class is unknown).
    public var screen: String
    /// The screen's storyboard id, when known.
    public var storyboardID: String?
    /// The controller's id in the session.
    public var controller: String
    /// When it became focused and when it stopped, µs since the epoch.
    public var start: Int64
    public var end: Int64
    /// Time focused while the app was in the foreground (F4), µs.
    public var dwell: Int64
    /// The event that began it, and for a segue its identifier (`#kind` without one, `#unwind`).
    public var cause: EventType
    public var detail: String?
    /// Its position among the session's views, from 0.
    public var index: Int
    /// The screen of the view before it: the transition into it came from there (nil for the
    /// session's first view).
    public var from: String?
    /// The `seq` of the event that began it.
    public var sequence: UInt64?

    /// Creates a view.
    public init(
        screen: String, storyboardID: String?, controller: String, start: Int64, end: Int64, dwell: Int64, cause: EventType, detail: String?, index: Int,
        from: String?, sequence: UInt64?
    ) {
        self.screen = screen
        self.storyboardID = storyboardID
        self.controller = controller
        self.start = start
        self.end = end
        self.dwell = dwell
        self.cause = cause
        self.detail = detail
        self.index = index
        self.from = from
        self.sequence = sequence
    }
}

extension SessionReplayer {
    /// `visit` (``closedView``, ``earlierClosedView``, or ``visit`` still open) as a view ending
    /// at `end`; nil when it had no screen.
    public func screenView(_ visit: FocusVisit, end: Int64) -> ScreenView? {
        guard visit.screen >= 0, Int(visit.screen) < controllers.count else { return nil }
        let handle = ControllerHandle(index: visit.screen)
        let controller = controllers[handle]
        // The screen's dwell now, less its dwell when the view began (the view's share of F4).
        // A closed view is read right after the event that closed it, when no dwell was added since.
        let total = Int(handle.index) < dwell.count ? dwell[Int(handle.index)] : 0
        let (difference, overflow) = total.subtractingReportingOverflow(visit.dwellBaseline)
        let viewDwell = overflow ? 0 : difference
        let from = visit.from >= 0 && Int(visit.from) < controllers.count ? controllers[ControllerHandle(index: visit.from)] : nil
        return ScreenView(
            screen: controller.className ?? controller.id, storyboardID: controller.storyboardID, controller: controller.id, start: visit.since,
            end: max(end, visit.since), dwell: max(0, viewDwell), cause: visit.cause, detail: visit.detail, index: visit.index,
            from: from.map { $0.className ?? $0.id }, sequence: visit.sequence)
    }
}
