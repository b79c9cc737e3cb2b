/// One `.storyboard` file as a navigation graph: its scenes (view controllers), the initial
/// one, and the segues between them.
public struct Storyboard: Sendable, Hashable, Codable {
    /// The file's name without `.storyboard` (what `storyboardName` in references means).
    public var name: String
    /// The path it was read from.
    public var path: String
    /// The document's `version` attribute (`3.0`, `2.0`, `1.1`, …).
    public var documentVersion: String
    /// `targetRuntime`: `iOS.CocoaTouch`, `iOS.CocoaTouch.iPad`, `AppleTV`, …
    public var targetRuntime: String?
    /// The id of the initial view controller, when the storyboard has one.
    public var initialSceneID: String?
    /// Every view controller, in document order.
    public var scenes: [StoryboardScene]
    /// Every navigation segue, in document order (tie-breaker references and nested
    /// 3D-Touch commit/preview segues left out).
    public var segues: [StoryboardSegue]

    /// Creates a storyboard.
    public init(
        name: String, path: String, documentVersion: String, targetRuntime: String?, initialSceneID: String?, scenes: [StoryboardScene],
        segues: [StoryboardSegue]
    ) {
        self.name = name
        self.path = path
        self.documentVersion = documentVersion
        self.targetRuntime = targetRuntime
        self.initialSceneID = initialSceneID
        self.scenes = scenes
        self.segues = segues
    }

    /// The scene with XML id `id`.
    public func scene(_ id: String) -> StoryboardScene? { scenes.first { $0.id == id } }

    /// The segues that leave scene `id`.
    public func segues(from id: String) -> [StoryboardSegue] { segues.filter { $0.sourceID == id } }
}

/// A view controller of a storyboard.
public struct StoryboardScene: Sendable, Hashable, Codable {
    /// Its XML object id (unique within the file).
    public var id: String
    /// The element name: `viewController`, `tableViewController`, `navigationController`,
    /// `tabBarController`, `splitViewController`, `pageViewController`, `hostingController`,
    /// `viewControllerPlaceholder`, …
    public var element: String
    /// Its class: `customClass` when set, else the UIKit class the element stands for
    /// (`UINavigationController` for `navigationController`, `UIViewController` for `viewController`, …).
    public var className: String
    /// `customModule`, when set.
    public var module: String?
    /// `storyboardIdentifier`, when set.
    public var storyboardID: String?
    /// The title (of its navigation item, or its `title` attribute), when set.
    public var title: String?
    /// What kind of container UIKit makes of it.
    public var kind: Kind
    /// `definesPresentationContext` (R3b).
    public var definesContext: Bool
    /// Unwind actions its class implements, when the storyboard says (`<classes>` of version 2
    /// documents list a class's actions; actions named by unwind segues whose exit is this
    /// scene's are not enough to tell).
    public var unwindActions: [String]
    /// The ids of its container views (the slots of embed segues).
    public var containerViewIDs: [String]
    /// For a `viewControllerPlaceholder`: the storyboard and identifier it stands for
    /// (identifier nil: that storyboard's initial view controller; storyboard nil: this file).
    public var reference: Reference?
    /// Its own `modalPresentationStyle`, when set: what a presentation uses when the segue
    /// does not say (`formSheet`, `overCurrentContext`, …).
    public var presentationStyle: String?
    /// Its own `modalTransitionStyle`, when set (`crossDissolve`, `flipHorizontal`, …).
    public var transitionStyle: String?
    /// `restorationIdentifier` (or the storyboard id, when the storyboard says to use it).
    public var restorationID: String?

    /// A storyboard reference.
    public struct Reference: Sendable, Hashable, Codable {
        /// `storyboardName`, nil for the same file.
        public var storyboardName: String?
        /// `referencedIdentifier`, nil for the initial view controller.
        public var referencedIdentifier: String?
        /// `bundleIdentifier`, when the storyboard lives in another bundle (a framework's).
        public var bundleIdentifier: String?

        /// Creates a reference (to a storyboard of another bundle when `bundleIdentifier` is given).
        public init(storyboardName: String?, referencedIdentifier: String?, bundleIdentifier: String? = nil) {
            self.storyboardName = storyboardName
            self.referencedIdentifier = referencedIdentifier
            self.bundleIdentifier = bundleIdentifier
        }
    }

    /// The container kinds of events.md, plus the scene kinds only storyboards have.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        case navigation, tab, split, page, alert, plain
        /// A SwiftUI hosting controller: a leaf screen.
        case hosting
        /// A reference to a scene of another (or this) storyboard.
        case placeholder
    }

    /// Creates a scene.
    public init(
        id: String, element: String, className: String, module: String? = nil, storyboardID: String? = nil, title: String? = nil,
        kind: Kind, definesContext: Bool = false, unwindActions: [String] = [], containerViewIDs: [String] = [], reference: Reference? = nil,
        presentationStyle: String? = nil, transitionStyle: String? = nil, restorationID: String? = nil
    ) {
        self.id = id
        self.element = element
        self.className = className
        self.module = module
        self.storyboardID = storyboardID
        self.title = title
        self.kind = kind
        self.definesContext = definesContext
        self.unwindActions = unwindActions
        self.containerViewIDs = containerViewIDs
        self.reference = reference
        self.presentationStyle = presentationStyle
        self.transitionStyle = transitionStyle
        self.restorationID = restorationID
    }
}

/// A segue of a storyboard.
public struct StoryboardSegue: Sendable, Hashable, Codable {
    /// Its XML id.
    public var id: String
    /// The scene it starts from (the view controller whose subtree holds the segue element).
    public var sourceID: String
    /// The scene it leads to; for an unwind segue, nil (its destination is the scene's exit,
    /// found at run time by R17).
    public var destinationID: String?
    /// `kind`: show, showDetail, presentation, popoverPresentation, embed, unwind, custom,
    /// relationship, and the deprecated push, modal, replace, popover.
    public var kind: String
    /// `identifier`, when set (often missing or reused).
    public var identifier: String?
    /// `relationship` of a relationship segue: rootViewController, viewControllers,
    /// masterViewController, detailViewController, supplementaryViewController, compactViewController.
    public var relationship: String?
    /// `modalPresentationStyle`, when set (`formSheet`, `pageSheet`, `fullScreen`, …).
    public var presentationStyle: String?
    /// `modalTransitionStyle`, when set (`flipHorizontal`, `crossDissolve`, `partialCurl`, …).
    public var transitionStyle: String?
    /// `animates="NO"` makes it false.
    public var animates: Bool
    /// A popover's anchor: the id of a bar button item, when it is one.
    public var anchorBarButtonItemID: String?
    /// A popover's anchor: the id of a view, when it is one.
    public var anchorViewID: String?
    /// An unwind segue's action, such as `unwindToList:`.
    public var unwindAction: String?
    /// A custom segue's class (`customClass`).
    public var customClass: String?
    /// For an embed segue, the container view that holds it (the child's slot).
    public var containerViewID: String?
    /// For an unwind segue, the id of the exit object it is wired to (`destination` in the XML).
    public var exitID: String?
    /// The object whose event performs it: the element (`button`, `tableViewCell`,
    /// `barButtonItem`, `tapGestureRecognizer`, `containerView`, …) whose connections hold it;
    /// nil when it hangs on the controller itself (performed from code).
    public var senderElement: String?
    /// That object's id.
    public var senderID: String?
    /// `trigger`: `accessoryAction` for a table cell's accessory button instead of the cell.
    public var trigger: String?
    /// `destinationCreationSelector`: the `@IBSegueAction` that creates the destination in code.
    public var creationSelector: String?

    /// Creates a segue.
    public init(
        id: String, sourceID: String, destinationID: String?, kind: String, identifier: String? = nil, relationship: String? = nil,
        presentationStyle: String? = nil, transitionStyle: String? = nil, animates: Bool = true, anchorBarButtonItemID: String? = nil,
        anchorViewID: String? = nil, unwindAction: String? = nil, customClass: String? = nil, containerViewID: String? = nil,
        exitID: String? = nil, senderElement: String? = nil, senderID: String? = nil, trigger: String? = nil, creationSelector: String? = nil
    ) {
        self.id = id
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.kind = kind
        self.identifier = identifier
        self.relationship = relationship
        self.presentationStyle = presentationStyle
        self.transitionStyle = transitionStyle
        self.animates = animates
        self.anchorBarButtonItemID = anchorBarButtonItemID
        self.anchorViewID = anchorViewID
        self.unwindAction = unwindAction
        self.customClass = customClass
        self.containerViewID = containerViewID
        self.exitID = exitID
        self.senderElement = senderElement
        self.senderID = senderID
        self.trigger = trigger
        self.creationSelector = creationSelector
    }
}

/// A storyboard that could not be read: which file, where, and what was wrong.
public struct StoryboardError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is (a struct, so that kinds can be added without breaking users).
    public var code: Code
    /// The file.
    public var path: String
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?
    /// What was wrong, as a sentence.
    public var reason: String

    /// Creates an error.
    public init(path: String, line: Int?, column: Int?, reason: String) {
        self.init(code: .other, path: path, line: line, column: column, reason: reason)
    }

    /// Creates an error of kind `code`.
    public init(code: Code, path: String, line: Int?, column: Int?, reason: String) {
        self.code = code
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// The kinds of ``StoryboardError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case unreadable, notXML, malformedXML, truncated, notAStoryboard, invalidStoryboard, other
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The file could not be read (missing, a directory, no permission).
        public static let unreadable = Code(.unreadable)
        /// The file is empty or does not start with an XML element.
        public static let notXML = Code(.notXML)
        /// The XML breaks a rule of XML (a mismatched tag, a bad attribute, …).
        public static let malformedXML = Code(.malformedXML)
        /// The XML stops before its root element is closed.
        public static let truncated = Code(.truncated)
        /// Well-formed XML that is not a storyboard (another root element, a XIB).
        public static let notAStoryboard = Code(.notAStoryboard)
        /// A storyboard that Interface Builder would not have written (a controller without an id).
        public static let invalidStoryboard = Code(.invalidStoryboard)
        /// Anything else.
        public static let other = Code(.other)

        /// The kind's name, such as `truncated`.
        public var description: String { value.rawValue }
    }

    /// `path:line:column: reason`, the way compilers report a place in a file.
    public var description: String {
        var place = path
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return "\(place): \(reason)"
    }
}
