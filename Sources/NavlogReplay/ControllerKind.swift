/// What kind of container (if any) a controller is (events.md "Controller references").
public enum ControllerKind: String, Sendable, CaseIterable {
    /// A navigation controller: an ordered stack (R8, R9).
    case navigation
    /// A tab bar controller: tabs and a selected index (R13).
    case tab
    /// A split view controller: columns, collapsed or expanded (R14).
    case split
    /// A page view controller.
    case page
    /// An alert controller.
    case alert
    /// Any other controller (a screen, or a custom container with children).
    case plain

    /// The kind UIKit's class names imply, when `kind` was not given: `UINavigationController`
    /// → navigation, `UITabBarController` → tab, `UISplitViewController` → split,
    /// `UIPageViewController` → page, `UIAlertController` → alert; anything else is plain
    /// (use, such as receiving `nav.push` as `nav`, may still make it a navigation controller).
    public init(inferredFromClass className: UnsafeRawBufferPointer) {
        func named(_ text: StaticString) -> Bool {
            className.count == text.utf8CodeUnitCount
                && className.elementsEqual(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        if named("UINavigationController") {
            self = .navigation
        } else if named("UITabBarController") {
            self = .tab
        } else if named("UISplitViewController") {
            self = .split
        } else if named("UIPageViewController") {
            self = .page
        } else if named("UIAlertController") {
            self = .alert
        } else {
            self = .plain
        }
    }
}
