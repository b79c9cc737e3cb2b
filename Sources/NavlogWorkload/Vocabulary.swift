// The screens, containers, presentations, alerts and analytics marks the simulated apps use.

/// A presentation style, as named in `present` and `segue`.
enum PresentationStyle: Sendable {
    case fullScreen, pageSheet, formSheet, currentContext, overFullScreen, overCurrentContext, popover, automatic

    /// The wire name.
    var name: StaticString {
        switch self {
        case .fullScreen: "fullScreen"
        case .pageSheet: "pageSheet"
        case .formSheet: "formSheet"
        case .currentContext: "currentContext"
        case .overFullScreen: "overFullScreen"
        case .overCurrentContext: "overCurrentContext"
        case .popover: "popover"
        case .automatic: "automatic"
        }
    }

    /// Whether UIKit removes the presenter's views (and so sends it `viewWillDisappear`).
    var hidesPresenter: Bool { self == .fullScreen || self == .currentContext }

    /// Whether the user can swipe the presentation down (an interactive dismissal).
    var isSheet: Bool { self == .pageSheet || self == .formSheet || self == .automatic }
}

/// Where a popover (or an iPad action sheet) points.
enum AnchorSpec: Sendable {
    case none
    case barButton(StaticString)
    case sourceView(StaticString)
}

/// A controller class and what the simulated app does with it.
struct ControllerClass: Sendable {
    /// The class name.
    var name: StaticString
    /// The ref `kind` for containers and alerts, or empty.
    var kind: StaticString = ""
    /// True for app subclasses of UIKit containers, whose kind a reader cannot infer from the name.
    var kindRequired = false
    /// The storyboard identifier, or empty.
    var sbid: StaticString = ""
    /// The navigation title, or empty.
    var title: StaticString = ""
    /// The unwind action it implements (`unwindToX:`), or empty.
    var unwindAction: StaticString = ""
    /// The identifier of the unwind segue that targets it, or empty.
    var unwindSegue: StaticString = ""
    /// The identifier of the storyboard segue that shows it, or empty.
    var segue: StaticString = ""
    /// The classes embedded in its container view (more than one: the screen swaps between them).
    var embeds: [Int] = []
    /// The container view (slot) of the embedded child.
    var slot: StaticString = ""
    /// The identifier of its embed segue.
    var embedSegue: StaticString = ""
    /// Whether its first mention says `definesContext: true`.
    var definesContext = false
    /// The classes its screen usually pushes next (empty: any of the catalog's pushes).
    var next: [Int] = []
}

/// Something an app presents modally.
struct Presentable: Sendable {
    /// The presented content class.
    var content: Int
    /// Whether it is wrapped in a `UINavigationController`.
    var inNavigation: Bool
    /// The style on an iPhone.
    var phoneStyle: PresentationStyle
    /// The style on an iPad.
    var padStyle: PresentationStyle
    /// The transition style, or empty for the default.
    var transition: StaticString = ""
    /// The popover anchor.
    var anchor: AnchorSpec = .none
    /// The segue identifier when it comes from the storyboard.
    var segue: StaticString
    /// What the presented navigation controller can push.
    var pushes: [Int] = []
}

extension Presentable {
    /// A presentable as the catalogs write it: its classes by name.
    init(
        content: String, inNavigation: Bool, phoneStyle: PresentationStyle, padStyle: PresentationStyle, transition: StaticString = "",
        anchor: AnchorSpec = .none, segue: StaticString, pushes: [String] = []
    ) {
        self.init(
            content: Vocabulary.classIndex(content), inNavigation: inNavigation, phoneStyle: phoneStyle, padStyle: padStyle,
            transition: transition, anchor: anchor, segue: segue, pushes: pushes.map(Vocabulary.classIndex))
    }
}

/// One analytics property generator.
enum PropValue: Sendable {
    case strings([StaticString])
    case integer(Int, Int)
    case money(Int, Int)
    case tenths(Int, Int)
    case flag(Double)
    case identifier(StaticString, Int)
}

/// An analytics `mark` and its properties.
struct MarkTemplate: Sendable {
    /// The mark name.
    var name: StaticString
    /// Its properties, in order.
    var props: [(key: StaticString, value: PropValue)]
}

/// The vocabulary of one kind of app.
struct Catalog: Sendable {
    var tabBar: Int
    var split: Int
    var tabRoots: [Int]
    var navigationRoot: Int
    var splitPrimaryRoot: Int
    var emptyDetail: Int
    var details: [Int]
    var pushes: [Int]
    var presentables: [Presentable]
    var alertTitles: [StaticString]
    var sheetTitles: [StaticString]
    var marks: [MarkTemplate]
}

extension Catalog {
    /// A catalog as the catalogs write it: its classes by name.
    init(
        tabBar: String, split: String, tabRoots: [String], navigationRoot: String, splitPrimaryRoot: String,
        emptyDetail: String = "EmptyDetailViewController", details: [String], pushes: [String], presentables: [Presentable],
        alertTitles: [StaticString], sheetTitles: [StaticString], marks: [MarkTemplate]
    ) {
        self.init(
            tabBar: Vocabulary.classIndex(tabBar), split: Vocabulary.classIndex(split), tabRoots: tabRoots.map(Vocabulary.classIndex),
            navigationRoot: Vocabulary.classIndex(navigationRoot), splitPrimaryRoot: Vocabulary.classIndex(splitPrimaryRoot),
            emptyDetail: Vocabulary.classIndex(emptyDetail), details: details.map(Vocabulary.classIndex),
            pushes: pushes.map(Vocabulary.classIndex), presentables: presentables, alertTitles: alertTitles, sheetTitles: sheetTitles,
            marks: marks)
    }
}

/// All classes and catalogs, built once.
final class Vocabulary: Sendable {
    /// Well-known class indices.
    static let navigation = 0, tabBar = 1, split = 2, page = 3, alert = 4

    let classes: [ControllerClass]
    let catalogs: [Catalog]  // indexed like WorkloadApp.Catalog.allCases

    /// The catalog of an app kind.
    func catalog(_ kind: WorkloadApp.Catalog) -> Catalog {
        switch kind {
        case .recipes: catalogs[0]
        case .shopping: catalogs[1]
        case .mail: catalogs[2]
        case .fitness: catalogs[3]
        }
    }

    /// The shared vocabulary.
    static let shared = Vocabulary()

    private init() {
        classes = Self.classTable.map { row in
            var controllerClass = row.controllerClass
            controllerClass.embeds = row.embeds.map(Self.classIndex)
            controllerClass.next = row.next.map(Self.classIndex)
            return controllerClass
        }
        catalogs = [Self.recipes, Self.shopping, Self.mail, Self.fitness]
    }

    /// The index in ``classTable`` of the class named `name` (the catalogs and the table name
    /// classes; the sessions use indices).
    static func classIndex(_ name: String) -> Int {
        guard let position = classIndices[name] else { preconditionFailure("unknown class \(name)") }
        return position
    }

    /// Each class's index in ``classTable``, by name.
    private static let classIndices: [String: Int] = {
        var index: [String: Int] = [:]
        for (position, row) in classTable.enumerated() { index[row.controllerClass.name.description] = position }
        return index
    }()
}
