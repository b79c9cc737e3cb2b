/// `UIModalPresentationStyle` as events name it (R4).
public enum PresentationStyle: UInt8, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    case fullScreen, pageSheet, formSheet, currentContext, overFullScreen, overCurrentContext, popover, custom, automatic

    /// The name used in events and output.
    public var name: String { Self.names[Int(rawValue)] }

    public var description: String { name }

    /// The style named `bytes`, if any.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard let index = Self.utf8Names.firstIndex(where: { $0.elementsEqual(bytes) }) else { return nil }
        self.init(rawValue: UInt8(index))
    }

    /// The style after adaptation to the horizontal size class (R4): `automatic` is `pageSheet`;
    /// in a compact width `pageSheet`, `formSheet` and `currentContext` become `fullScreen`,
    /// `popover` and `overCurrentContext` become `overFullScreen`; `custom` is kept.
    public func adapted(horizontallyCompact: Bool) -> PresentationStyle {
        let style = self == .automatic ? .pageSheet : self
        guard horizontallyCompact else { return style }
        switch style {
        case .pageSheet, .formSheet, .currentContext: return .fullScreen
        case .popover, .overCurrentContext: return .overFullScreen
        default: return style
        }
    }

    /// Whether a user can dismiss a presentation of this requested style with a swipe down
    /// (a sheet: `automatic`, `pageSheet`, `formSheet`), which makes UIKit call `dismiss` when
    /// the gesture begins (E7).
    public var canBeSwipedDown: Bool { self == .automatic || self == .pageSheet || self == .formSheet }

    /// What an effective style leaves visible beneath it (R5).
    public var coverage: Coverage {
        switch self {
        case .fullScreen: .everything
        case .currentContext: .presenterContent
        default: .nothing
        }
    }

    /// What a presentation hides (R5).
    public enum Coverage: Sendable {
        /// Everything beneath it (`fullScreen`).
        case everything
        /// The presenter's subtree only (`currentContext`).
        case presenterContent
        /// Nothing: what lies beneath stays visible, dimmed, but not focused.
        case nothing
    }

    /// Whether the style presents over the current context (R3b picks the presenter differently).
    var usesCurrentContext: Bool { self == .currentContext || self == .overCurrentContext }

    private static let names = [
        "fullScreen", "pageSheet", "formSheet", "currentContext", "overFullScreen", "overCurrentContext", "popover", "custom",
        "automatic",
    ]
    private static let utf8Names = names.map { Array($0.utf8) }
}

/// A UIKit size class.
public enum SizeClass: UInt8, Sendable, Hashable, CustomStringConvertible {
    case compact, regular

    public var description: String { self == .compact ? "compact" : "regular" }

    /// The size class named `bytes`, if any.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        if bytes.elementsEqual("compact".utf8) {
            self = .compact
        } else if bytes.elementsEqual("regular".utf8) {
            self = .regular
        } else {
            return nil
        }
    }
}

/// The device family a session runs on (`session.start` `idiom`).
public enum Idiom: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case unknown, phone, pad, mac, tv, vision

    public var description: String { Self.names[Int(rawValue)] }

    /// The idiom named `bytes`, or `.unknown`.
    public init(_ bytes: UnsafeRawBufferPointer) {
        self = Self.allCases.first { $0 != .unknown && Self.names[Int($0.rawValue)].utf8.elementsEqual(bytes) } ?? .unknown
    }

    private static let names = ["unknown", "phone", "pad", "mac", "tv", "vision"]
}
