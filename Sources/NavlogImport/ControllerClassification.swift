#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        // Called for every crumb: an ASCII name is compared as bytes, without splitting it.
        var className = className
        self = className.withUTF8 { Self.classify(ascii: $0) } ?? Self.classify(unicode: className)
    }

    /// The classification of the text of a string node (a boolean's `true`/`false` names no
    /// UIKit class: content), or `nil` for any other kind; no string is made for an ASCII name.
    init?(_ document: JSONDocument, _ node: JSONDocument.Node) {
        let entry = document.entries[Int(node.index)]
        switch entry.kind {
        case .bool: self = .content
        case .string where !entry.escaped:
            let fast = document.bytes.withUnsafeBufferPointer { Self.classify(ascii: UnsafeBufferPointer(rebasing: $0[Int(entry.start)..<Int(entry.end)])) }
            self = fast ?? Self(className: document.decodeString(entry))
        case .string: self = Self(className: document.decodeString(entry))
        default: return nil
        }
    }

    /// The classification of an ASCII name, or `nil` when it is not all ASCII.
    private static func classify(ascii whole: UnsafeBufferPointer<UInt8>) -> ControllerClassification? {
        guard !whole.contains(where: { $0 >= 0x80 }) else { return nil }
        // The last non-empty part between dots (the whole name when it is only dots).
        var end = whole.count
        while end > 0, whole[end - 1] == UInt8(ascii: ".") { end -= 1 }
        var start = end
        while start > 0, whole[start - 1] != UInt8(ascii: ".") { start -= 1 }
        return classify(end == 0 ? whole : UnsafeBufferPointer(rebasing: whole[start..<end]))
    }

    /// The classification of a name that is not all ASCII, compared as characters.
    private static func classify(unicode className: String) -> ControllerClassification {
        let name = className.split(separator: ".").last.map(String.init) ?? className
        if systemNames.contains(name) || name.hasPrefix("_UI") || name.hasPrefix("UIKeyboard") || name.hasPrefix("UIInput") || name.hasPrefix("UIRemoteKeyboard")
            || name.hasPrefix("_")
        {
            return .system
        }
        if containerSuffixes.contains(where: { name.hasSuffix($0) }) || name == "UIHostingSplitViewController" { return .container }
        return .content
    }

    /// The classification of a class name without its module prefix, as UTF-8.
    private static func classify(_ name: UnsafeBufferPointer<UInt8>) -> ControllerClassification {
        func has(prefix: StaticString) -> Bool {
            name.count >= prefix.utf8CodeUnitCount && memcmp(name.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        }
        func has(suffix: StaticString) -> Bool {
            name.count >= suffix.utf8CodeUnitCount
                && memcmp(name.baseAddress! + (name.count - suffix.utf8CodeUnitCount), suffix.utf8Start, suffix.utf8CodeUnitCount) == 0
        }
        guard !name.isEmpty else { return .content }
        if name[0] == UInt8(ascii: "_") || has(prefix: "UIKeyboard") || has(prefix: "UIInput") || has(prefix: "UIRemoteKeyboard") { return .system }
        // No system name ends as a container's does, so containers (UIKit's own among the most
        // frequent names) are told first, without the set.
        if has(suffix: "NavigationController") || has(suffix: "TabBarController") || has(suffix: "SplitViewController") || has(suffix: "PageViewController") {
            return .container
        }
        // Every system name begins with "UI": only those are looked up in the set.
        if has(prefix: "UI"), systemNames.contains(String(decoding: name, as: UTF8.self)) { return .system }
        return .content
    }
}
