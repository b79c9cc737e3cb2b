import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// XMLParser's delegate: turns the SAX callbacks of one `.storyboard` file into a
/// ``Storyboard``, keeping only the navigation graph.
///
/// SAX rather than a DOM because a storyboard is mostly views and constraints the graph does
/// not need: the reader keeps a stack of the open elements' names and ids and nothing else
/// of them. What it looks at:
///
/// - `<document>`: version, runtime, initial controller; any other root is not a storyboard.
/// - The controller of each `<scene>`: the element directly under `<objects>` with
///   `sceneMemberID="viewController"` (first responder, exit, gesture recognizers and other
///   top-level objects are its siblings, not scenes).
/// - `<segue>` anywhere in a scene: its source is the scene's controller, whether the segue
///   hangs on a button, a cell, a bar button item, a container view, the controller's own
///   connections, or a gesture recognizer beside the controller.
/// - `<classes>` (documents of version 2 and older): the actions classes declare, for the
///   unwind actions of scenes.
///
/// What is not navigation is skipped without failing: `<segue reference=…>` tie-breakers,
/// and segues nested in another segue (the 3D Touch `commit`/`preview` segues, which have a
/// `key` and no `kind`).
final class StoryboardXMLReader: NSObject, XMLParserDelegate {
    /// An element that has started and not yet ended.
    private struct OpenElement {
        var name: String
        var id: String?
    }

    /// A class described under `<classes>`: its superclass and its actions.
    private struct DeclaredClass {
        var superclassName: String?
        var actions: [(name: String, candidateClass: String?)] = []
    }

    /// The file, for the result and for errors.
    let path: String
    /// The bytes being parsed, to tell a truncated file from other damage.
    private let data: Data
    /// The first failure met; parsing stops there.
    private(set) var failure: StoryboardError?

    private var rootSeen = false
    private var documentVersion = ""
    private var targetRuntime: String?
    private var initialSceneID: String?
    private var scenes: [StoryboardScene] = []
    private var segues: [StoryboardSegue] = []
    private var declaredClasses: [String: DeclaredClass] = [:]
    private var declaredClassOrder: [String] = []

    /// The elements open now, outermost first.
    private var open: [OpenElement] = []
    /// The `<scene>` being read: its depth in `open`, its id, and the index in `scenes` of its
    /// (first) controller.
    private var sceneDepth: Int?
    private var sceneID: String?
    private var sceneController: Int?
    /// Segues of the scene met outside its controller (under a gesture recognizer beside it):
    /// their source is set when the scene ends.
    private var sceneOrphanSegues: [Int] = []
    /// The controller element being read: its depth in `open` and its index in `scenes`.
    private var controllerDepth: Int?
    private var controllerIndex: Int?
    /// The controller's `title` attribute and its navigation item's title; the navigation
    /// item's wins (it is what the bar shows).
    private var controllerTitle: String?
    private var navigationItemTitle: String?
    private var navigationItemDepth: Int?
    /// A `<string key="title">` being read (long titles are written as elements), and whose
    /// title it is.
    private var titleTextDepth: Int?
    private var titleTextIsNavigationItems = false
    private var titleText = ""
    /// The depth of the navigation segue being read: segues inside it are not navigation.
    private var segueDepth: Int?
    /// The `<class>` of `<classes>` being read.
    private var declaredClassName: String?

    /// Prepares to read `data`, the contents of the file at `path`.
    init(data: Data, path: String) {
        self.data = data
        self.path = path
    }

    /// The storyboard read, once parsing has finished without a failure.
    func storyboard() -> Storyboard {
        var scenes = scenes
        let unwindActionsByClass = unwindActionsOfDeclaredClasses()
        if !unwindActionsByClass.isEmpty {
            for index in scenes.indices {
                scenes[index].unwindActions = inheritedUnwindActions(of: scenes[index].className, in: unwindActionsByClass)
            }
        }
        return Storyboard(
            name: Storyboard.name(forPath: path), path: path, documentVersion: documentVersion, targetRuntime: targetRuntime,
            initialSceneID: initialSceneID, scenes: scenes, segues: segues)
    }

    /// Records the first failure, at the parser's position, and stops the parser.
    private func fail(_ parser: XMLParser, _ code: StoryboardError.Code, _ reason: String) {
        guard failure == nil else { return }
        failure = StoryboardError(
            code: code, path: path, line: parser.lineNumber > 0 ? parser.lineNumber : nil, column: parser.columnNumber > 0 ? parser.columnNumber : nil,
            reason: reason)
        parser.abortParsing()
    }

    // MARK: - Elements

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        // The new element's depth is `open.count`; it is pushed after it has been looked at.
        defer { open.append(OpenElement(name: name, id: attributes["id"])) }
        guard let parent = open.last?.name else {
            startDocument(parser, name, attributes)
            return
        }
        let depth = open.count
        switch name {
        case "scene" where parent == "scenes":
            sceneDepth = depth
            sceneID = attributes["sceneID"]
            sceneController = nil
            sceneOrphanSegues = []
        case "segue":
            startSegue(attributes)
        case "containerView":
            if let controllerIndex, let id = attributes["id"] { scenes[controllerIndex].containerViewIDs.append(id) }
        case "navigationItem" where depth == (controllerDepth ?? -1) + 1 && attributes["key"] == "navigationItem":
            navigationItemDepth = depth
            navigationItemTitle = attributes["title"]
        case "string" where attributes["key"] == "title" && (depth == (controllerDepth ?? -2) + 1 || depth == (navigationItemDepth ?? -2) + 1):
            titleTextDepth = depth
            titleTextIsNavigationItems = depth == (navigationItemDepth ?? -2) + 1
            titleText = ""
        case "class" where parent == "classes":
            if let className = attributes["className"] {
                declaredClassName = className
                if declaredClasses[className] == nil { declaredClassOrder.append(className) }
                declaredClasses[className] = DeclaredClass(superclassName: attributes["superclassName"])
            }
        case "relationship" where attributes["kind"] == "action":
            if let declaredClassName, let action = attributes["name"] {
                declaredClasses[declaredClassName]?.actions.append((action, attributes["candidateClass"]))
            }
        default:
            if parent == "objects", let sceneDepth, depth == sceneDepth + 2, isController(name, attributes) {
                startController(parser, name, attributes, depth: depth)
            }
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil, !open.isEmpty else { return }
        open.removeLast()
        let depth = open.count
        if depth == titleTextDepth {
            let text = titleText.trimmingCharacters(in: .whitespacesAndNewlines)
            if titleTextIsNavigationItems { navigationItemTitle = text } else { controllerTitle = text }
            titleTextDepth = nil
        } else if depth == navigationItemDepth {
            navigationItemDepth = nil
        } else if depth == segueDepth {
            segueDepth = nil
        } else if depth == controllerDepth, let controllerIndex {
            let title = navigationItemTitle ?? controllerTitle
            scenes[controllerIndex].title = title?.isEmpty == true ? nil : title
            controllerDepth = nil
            self.controllerIndex = nil
        } else if depth == sceneDepth {
            endScene()
        } else if name == "class" {
            declaredClassName = nil
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if titleTextDepth != nil { titleText += string }
    }

    /// Checks the root element and reads the document's attributes.
    private func startDocument(_ parser: XMLParser, _ name: String, _ attributes: [String: String]) {
        rootSeen = true
        guard name == "document" else {
            fail(parser, .notAStoryboard, "not a storyboard: the root element is <\(name)>, not <document>")
            return
        }
        // Storyboards say `…Storyboard.XIB` (iOS, tvOS, macOS); plain XIBs share the root element.
        if let type = attributes["type"], !type.contains("Storyboard") {
            fail(parser, .notAStoryboard, "not a storyboard: the document's type is \(type) (a XIB?)")
            return
        }
        documentVersion = attributes["version"] ?? ""
        targetRuntime = attributes["targetRuntime"]
        initialSceneID = attributes["initialViewController"]
    }

    /// Whether an element directly under a scene's `<objects>` is the scene's controller.
    ///
    /// Interface Builder marks it `sceneMemberID="viewController"`; a controller element
    /// without any `sceneMemberID` (hand-edited files) is taken too. Search display
    /// controllers are top-level objects of a scene, not its controller.
    private func isController(_ name: String, _ attributes: [String: String]) -> Bool {
        if let member = attributes["sceneMemberID"] { return member == "viewController" }
        return StoryboardScene.defaultClassNames[name] != nil
    }

    private func startController(_ parser: XMLParser, _ element: String, _ attributes: [String: String], depth: Int) {
        guard let id = attributes["id"] else {
            fail(parser, .invalidStoryboard, "the <\(element)> of scene \(sceneID ?? "(no sceneID)") has no id")
            return
        }
        let className = attributes["customClass"] ?? StoryboardScene.defaultClassName(forElement: element)
        var reference: StoryboardScene.Reference?
        if element == "viewControllerPlaceholder" {
            reference = StoryboardScene.Reference(
                storyboardName: attributes["storyboardName"], referencedIdentifier: attributes["referencedIdentifier"],
                bundleIdentifier: attributes["bundleIdentifier"])
        }
        let storyboardID = attributes["storyboardIdentifier"]
        let restorationID = attributes["useStoryboardIdentifierAsRestorationIdentifier"] == "YES" ? storyboardID : attributes["restorationIdentifier"]
        scenes.append(
            StoryboardScene(
                id: id, element: element, className: className, module: attributes["customModule"], storyboardID: storyboardID,
                kind: StoryboardScene.Kind(element: element, className: className),
                definesContext: attributes["definesPresentationContext"] == "YES", reference: reference,
                presentationStyle: attributes["modalPresentationStyle"], transitionStyle: attributes["modalTransitionStyle"], restorationID: restorationID))
        controllerDepth = depth
        controllerIndex = scenes.count - 1
        if sceneController == nil { sceneController = scenes.count - 1 }
        controllerTitle = attributes["title"]
        navigationItemTitle = nil
    }

    private func startSegue(_ attributes: [String: String]) {
        // Tie-breakers (`<segue reference=…>` under `inferredMetricsTieBreakers`) only point at
        // another segue; segues inside a segue are its 3D Touch commit/preview variants.
        guard attributes["reference"] == nil, segueDepth == nil, sceneDepth != nil, let kind = attributes["kind"] else { return }
        let depth = open.count
        segueDepth = depth
        // The object whose event performs it owns the `<connections>` the segue sits in.
        var sender: OpenElement?
        if open.last?.name == "connections", depth >= 2, depth - 2 != controllerDepth {
            sender = open[depth - 2]
        }
        let isUnwind = kind == "unwind"
        let segue = StoryboardSegue(
            id: attributes["id"] ?? "", sourceID: controllerIndex.map { scenes[$0].id } ?? "",
            destinationID: isUnwind ? nil : attributes["destination"], kind: kind, identifier: attributes["identifier"],
            relationship: attributes["relationship"], presentationStyle: attributes["modalPresentationStyle"],
            transitionStyle: attributes["modalTransitionStyle"], animates: attributes["animates"] != "NO",
            anchorBarButtonItemID: attributes["popoverAnchorBarButtonItem"], anchorViewID: attributes["popoverAnchorView"],
            unwindAction: attributes["unwindAction"], customClass: attributes["customClass"],
            containerViewID: kind == "embed" ? open.last(where: { $0.name == "containerView" })?.id : nil,
            exitID: isUnwind ? attributes["destination"] : nil, senderElement: sender?.name, senderID: sender?.id, trigger: attributes["trigger"],
            creationSelector: attributes["destinationCreationSelector"])
        if controllerIndex == nil { sceneOrphanSegues.append(segues.count) }
        segues.append(segue)
    }

    /// Gives the segues met beside the controller their source; drops them when the scene
    /// has no controller (nothing could perform them).
    private func endScene() {
        if let sceneController {
            for index in sceneOrphanSegues { segues[index].sourceID = scenes[sceneController].id }
        } else {
            for index in sceneOrphanSegues.reversed() { segues.remove(at: index) }
        }
        sceneOrphanSegues = []
        sceneDepth = nil
        sceneID = nil
        sceneController = nil
    }

    // MARK: - Unwind actions

    /// The unwind actions each declared class implements itself: actions whose sender class
    /// is `UIStoryboardSegue`, and actions some unwind segue of this file names (older files
    /// often leave out `candidateClass`).
    private func unwindActionsOfDeclaredClasses() -> [String: [String]] {
        guard !declaredClasses.isEmpty else { return [:] }
        let named = Set(segues.compactMap(\.unwindAction))
        var result: [String: [String]] = [:]
        for className in declaredClassOrder {
            let actions = declaredClasses[className]!.actions.filter { $0.candidateClass == "UIStoryboardSegue" || named.contains($0.name) }
            if !actions.isEmpty { result[className] = actions.map(\.name) }
        }
        return result
    }

    /// The unwind actions of `className` and of its superclasses (an action is inherited).
    private func inheritedUnwindActions(of className: String, in actionsByClass: [String: [String]]) -> [String] {
        var actions: [String] = []
        var visited: Set<String> = []
        var current: String? = className
        while let name = current, visited.insert(name).inserted {
            for action in actionsByClass[name] ?? [] where !actions.contains(action) { actions.append(action) }
            current = declaredClasses[name]?.superclassName
        }
        return actions
    }

    // MARK: - Errors

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        let code = (parseError as NSError).code
        // An empty file (white space only) is empty from its first line.
        let empty = !rootSeen && data.allSatisfy(Self.isWhiteSpace)
        let line = empty ? 1 : parser.lineNumber
        let column = empty ? 1 : parser.columnNumber
        let (kind, reason) = describeParseError(code: code, line: line)
        failure = StoryboardError(code: kind, path: path, line: line > 0 ? line : 1, column: column > 0 ? column : nil, reason: reason)
        parser.abortParsing()
    }

    /// Makes the check XMLParser does not make: a file with no element at all (for empty
    /// data it reports neither an error nor the end of a document).
    func finish() {
        guard failure == nil, !rootSeen else { return }
        let reason = data.allSatisfy(Self.isWhiteSpace) ? "not XML: the file is empty" : "not XML: the file holds no element"
        failure = StoryboardError(code: .notXML, path: path, line: 1, column: 1, reason: reason)
    }

    /// A sentence for an XMLParser error at `line`, from where the reader was in the document.
    private func describeParseError(code: Int, line: Int) -> (StoryboardError.Code, String) {
        guard rootSeen else {
            if data.allSatisfy(Self.isWhiteSpace) { return (.notXML, "not XML: the file is empty") }
            return (.notXML, "not XML: the file does not start with an XML element")
        }
        guard let innermost = open.last else {
            return (.malformedXML, "there is more after the end of the root element (XMLParser error \(code))")
        }
        let place = sceneID.map { ", in scene \($0)" } ?? ""
        if code == Self.tagNameMismatch {
            return (.malformedXML, "an end tag does not match the open element <\(innermost.name)>\(place)")
        }
        // libxml2 reports a file that stops early at its last line, whatever it was in the middle of.
        if line >= lastContentLine {
            return (.truncated, "the XML ends inside <\(innermost.name)>\(place) (truncated file?)")
        }
        let what = Self.parseErrorWords[code].map { ": \($0)" } ?? ""
        return (.malformedXML, "the XML is malformed inside <\(innermost.name)>\(place)\(what) (XMLParser error \(code))")
    }

    /// XML's white space: space, tab, line feed, carriage return.
    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The 1-based number of the last line that holds something other than white space.
    private var lastContentLine: Int {
        guard let last = data.lastIndex(where: { !Self.isWhiteSpace($0) }) else { return 1 }
        return data[...last].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
    }

    /// libxml2's `XML_ERR_TAG_NAME_MISMATCH`.
    ///
    /// XMLParser reports libxml2's error numbers (Apple's `NSXMLParserError` values are the
    /// same numbers); swift-corelibs-foundation's `XMLParser.ErrorCode` cases have shifted raw
    /// values (`.tagNameMismatchError` is 74 there), so the numbers are written out here.
    private static let tagNameMismatch = 76

    /// Words for the XMLParser errors hand-edited storyboards run into, by libxml2 number.
    private static let parseErrorWords: [Int: String] = [
        9: "a character XML does not allow",
        23: "an entity reference without its ;",
        26: "an undeclared entity",
        38: "a < inside an attribute value",
        39: "an attribute value without quotes",
        40: "an attribute value that is not closed",
        41: "an attribute without a value",
        42: "an attribute given twice",
        68: "a name is missing (a bare & ?)",
        73: "a tag not closed by >",
        77: "a tag that is not finished",
    ]
}
