import NavlogJSON

/// A view controller as a source names it: navlog needs an id and a class.
public struct ImportedController: Sendable, Hashable {
    /// The id navlog stores (the sources export no object identity, so it is derived: see docs/IMPORT.md).
    public var id: String
    /// The class name (or the source's screen name when it has no class).
    public var className: String
    /// A title, when the source has one.
    public var title: String?

    /// The longest id, class or title kept, in bytes (longer ones are cut at a character boundary).
    public static let maximumFieldBytes = 512

    /// A controller; overlong strings are cut to ``maximumFieldBytes``.
    public init(id: String, className: String, title: String? = nil) {
        self.id = Self.cut(id)
        self.className = Self.cut(className)
        self.title = title.map { Self.cut($0) }
    }

    /// `text` cut to at most ``maximumFieldBytes`` bytes of UTF-8, at a character boundary.
    static func cut(_ text: String) -> String {
        guard text.utf8.count > maximumFieldBytes else { return text }
        var result = ""
        var count = 0
        for character in text {
            let length = character.utf8.count
            if count + length > maximumFieldBytes { break }
            result.append(character)
            count += length
        }
        return result
    }
}

/// One thing a source recorded about a session, in navlog's terms, before it is written.
public struct ImportedObservation: Sendable {
    /// What was observed.
    public enum Kind: Sendable {
        /// A controller's viewDidAppear, and what the source proves about where it is.
        case appear(ImportedController, Placement)
        /// A controller's viewDidDisappear.
        case disappear(ImportedController)
        /// The app went to the background.
        case background
        /// The app came to the foreground.
        case foreground
    }

    /// Where an appearing controller is, as far as the source proves it.
    public enum Placement: Sendable, Equatable {
        /// A screen in the window's own context (not presented): it replaces the screen shown.
        case screen
        /// A controller being presented over the screen shown (Sentry's `beingPresented`).
        case presented
        /// A screen inside the presented context on top (Sentry: it has a `presentingViewController`).
        case insidePresentation
        /// A child embedded in a parent that is no container: part of the parent's screen (F1).
        case child
    }

    /// When (µs since the epoch).
    public var timestamp: Int64
    /// What.
    public var kind: Kind
    /// Tie-break for equal timestamps: the order the source gave.
    public var order: Int
}
