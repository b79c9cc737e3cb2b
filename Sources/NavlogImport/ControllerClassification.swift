/// What a class name says about a controller, for sources that name every controller that
/// appears (Sentry): UIKit's containers and internals are never screens.
public enum ControllerClassification: Sendable, Equatable {
    /// A controller that may be a screen.
    case content
    /// A container (navigation, tab bar, split view, page view): its content is the screen.
    case container
    /// UIKit's own machinery (keyboards, input windows, system views): never a screen.
    case system

    /// UIKit containers by name, and the suffixes their subclasses conventionally carry.
    static let containerSuffixes = ["NavigationController", "TabBarController", "SplitViewController", "PageViewController"]

    /// UIKit internals seen in breadcrumbs (the keyboard's input windows and friends).
    static let systemNames: Set<String> = [
        "UIInputWindowController", "UICompatibilityInputViewController", "UISystemKeyboardDockController", "UIEditingOverlayViewController",
        "UIPredictionViewController", "UIKeyboardCandidateGridCollectionViewController", "UISystemInputAssistantViewController",
        "UIApplicationRotationFollowingController", "UIApplicationRotationFollowingControllerNoTouches", "UIMultiscriptCandidateViewController",
        "UIRemoteInputViewController", "UIInputViewController", "UIStatusBarViewController", "UIEmojiSearchInputViewController",
    ]

    /// The classification of `className` (module prefixes such as `MyApp.` are ignored).
    public init(className: String) {
        let name = className.split(separator: ".").last.map(String.init) ?? className
        if Self.systemNames.contains(name) || name.hasPrefix("_UI") || name.hasPrefix("UIKeyboard") || name.hasPrefix("UIInput")
            || name.hasPrefix("UIRemoteKeyboard") || name.hasPrefix("_")
        {
            self = .system
        } else if Self.containerSuffixes.contains(where: { name.hasSuffix($0) }) || name == "UIHostingSplitViewController" {
            self = .container
        } else {
            self = .content
        }
    }
}
