extension StoryboardScene {
    /// The UIKit (or AVKit, GLKit, SwiftUI) class a storyboard element makes when it has no
    /// `customClass`: `UINavigationController` for `navigationController`, `UIViewController`
    /// for `viewController`, and so on.
    ///
    /// A storyboard reference (`viewControllerPlaceholder`) makes whatever its target makes;
    /// until it is resolved the only thing known is that it is a `UIViewController`. An
    /// element not in the table (a newer Interface Builder's) is named the way Interface
    /// Builder names the others: `fooController` → `UIFooController`.
    /// - Parameter element: the element's name, such as `tableViewController`.
    /// - Returns: the class name.
    public static func defaultClassName(forElement element: String) -> String {
        if let known = defaultClassNames[element] { return known }
        guard let first = element.first else { return "UIViewController" }
        return "UI" + first.uppercased() + element.dropFirst()
    }

    /// Interface Builder's controller elements and the classes they stand for.
    static let defaultClassNames: [String: String] = [
        "viewController": "UIViewController",
        "tableViewController": "UITableViewController",
        "collectionViewController": "UICollectionViewController",
        "navigationController": "UINavigationController",
        "tabBarController": "UITabBarController",
        "splitViewController": "UISplitViewController",
        "pageViewController": "UIPageViewController",
        "avPlayerViewController": "AVPlayerViewController",
        "glkViewController": "GLKViewController",
        "hostingController": "UIHostingController",
        "viewControllerPlaceholder": "UIViewController",
        "searchContainerViewController": "UISearchContainerViewController",
        "activityViewController": "UIActivityViewController",
    ]
}

extension StoryboardScene.Kind {
    /// The kind of a scene, from its element first (a `customClass` subclassing
    /// `UINavigationController` still sits in a `navigationController` element), then from
    /// UIKit's class names the way events.md infers `kind` (`UIAlertController` → alert).
    /// - Parameters:
    ///   - element: the element's name, such as `navigationController`.
    ///   - className: the scene's class (its `customClass`, else the element's default class).
    public init(element: String, className: String) {
        if let kind = Self.kindsOfElements[element] ?? Self.kindsOfClasses[className] {
            self = kind
        } else {
            self = className.hasPrefix("UIHostingController") ? .hosting : .plain
        }
    }

    /// The elements whose kind their name says, whatever their class.
    static let kindsOfElements: [String: Self] = [
        "navigationController": .navigation,
        "tabBarController": .tab,
        "splitViewController": .split,
        "pageViewController": .page,
        "hostingController": .hosting,
        "viewControllerPlaceholder": .placeholder,
    ]

    /// UIKit's container (and alert) classes and their kinds.
    static let kindsOfClasses: [String: Self] = [
        "UINavigationController": .navigation,
        "UITabBarController": .tab,
        "UISplitViewController": .split,
        "UIPageViewController": .page,
        "UIAlertController": .alert,
    ]
}
