import Foundation
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogStoryboard
import NavlogTesting
import NavlogWorkload
import Testing

@testable import NavlogSimulation

/// Every simulator action, from a known state of the project's demo app
/// (tools/demo-storyboards/Cookbook.storyboard), against a hierarchy written out by hand from
/// the rules, not taken from the engine: the events the action emits are stored in a real log
/// and replayed by a fresh engine, whose hierarchy must read as written here.
///
/// Notation of ``render(_:)``: `Class[a, b]` a navigation stack (bottom first); `Class{a, *b}`
/// tabs with the selected one starred; `Class(primary | secondary)` a split view's columns,
/// `collapsed` when it is; `Class<slot: child>` embedded children; `Class ⇑ style→effective Node`
/// a presentation; the focused screen is marked `◉`.
@Suite("Simulator actions against hierarchies written from the rules")
struct SimulatorActionOracleTests {
    static let demo = TestEnvironment.packageRoot.appendingPathComponent("tools/demo-storyboards/Cookbook.storyboard").path

    /// A simulated session of the demo app, its emitted lines, and a way to run one action.
    struct Driver {
        var session: SimulatedSession
        var tools = SimulationTools()
        var lines: [[UInt8]] = []

        init(idiom: String, seed: UInt64 = 7) throws {
            let app = try StoryboardApp([try Storyboard.load(path: SimulatorActionOracleTests.demo)])
            session = SimulatedSession(
                app: app, id: "oracle", idiom: idiom, seed: seed, random: SplitMix64(seed: seed), start: 1_763_700_000_000_000, actions: 100)
            session.start(&tools)
            lines += session.output
        }

        /// Performs `action`; false when the simulator refused it (it would have been a misuse).
        mutating func perform(_ action: SimulatedAction) -> Bool {
            var trial = session
            trial.output.removeAll()
            guard trial.perform(action, &tools) else { return false }
            session = trial
            lines += session.output
            return true
        }

        /// Performs `action`, which the simulator must accept.
        mutating func must(_ action: SimulatedAction, sourceLocation: SourceLocation = #_sourceLocation) throws {
            guard perform(action) else {
                Issue.record("the simulator refused \(action)", sourceLocation: sourceLocation)
                throw RefusedAction()
            }
        }

        struct RefusedAction: Error {}

        /// The storyboard segue with this identifier (or, for unwinds, this action), from scene `source` when given.
        func segue(_ name: String, from source: String? = nil) -> StoryboardSegue {
            let storyboard = session.app.storyboards[0]
            return storyboard.segues.first { ($0.identifier == name || $0.unwindAction == name) && (source == nil || $0.sourceID == source) }!
        }

        /// The last emitted line of type `type`, decoded.
        func last(_ type: String) -> [String: Any]? {
            for line in lines.reversed() {
                let object = try? JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any]
                if object?["type"] as? String == type { return object }
            }
            return nil
        }

        /// The hierarchy a fresh engine builds from the emitted lines, stored in a log and read back.
        func replayed() throws -> SessionReplayer {
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in lines.enumerated() {
                _ = try line.withUnsafeBytes { raw in
                    try parser.parse(
                        UnsafeRawBufferPointer(rebasing: raw.dropLast()), lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0),
                        into: &batch)
                }
            }
            var state = SessionReplayer()
            try TestEnvironment.withTemporaryDirectory { dir in
                let log = try EventLog(directory: dir.path)
                _ = try log.append(batch)
                try log.close()
                try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                    block.withBody(index) { body in
                        state.apply(
                            ReplayEvent(
                                type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body))
                    }
                    return true
                }
            }
            return state
        }

        func render() throws -> String { SimulatorActionOracleTests.render(try replayed()) }
    }

    /// The main window's tree in the notation of the suite's doc comment.
    static func render(_ state: SessionReplayer) -> String {
        guard let root = state.hierarchy.windows.first(where: { $0.name == "main" })?.root, root >= 0 else { return "(no root)" }
        let focus = state.focus?.index ?? -1
        let compact = state.horizontal == .compact
        func node(_ handle: Int32) -> String {
            let controller = state.controllers[ControllerHandle(index: handle)]
            let item = state.hierarchy[handle]
            var text = (handle == focus ? "◉" : "") + (controller.className ?? controller.id)
            switch controller.kind {
            case .navigation: text += "[" + item.items.map(node).joined(separator: ", ") + "]"
            case .tab:
                text += "{" + item.items.enumerated().map { ($0.offset == Int(item.selected) ? "*" : "") + node($0.element) }.joined(separator: ", ") + "}"
            case .split:
                let columns = [item.primary, item.secondary].map { $0 >= 0 ? node($0) : "-" }
                text += "(" + columns.joined(separator: " | ") + (item.collapsed ? ", collapsed" : "") + ")"
            default: break
            }
            if !item.children.isEmpty {
                text += "<" + item.children.map { node($0) }.joined(separator: ", ") + ">"
            }
            if item.presented >= 0 {
                let style = state.hierarchy[item.presented].requestedStyle
                text += " ⇑ \(style.name)→\(style.adapted(horizontallyCompact: compact).name) " + node(item.presented)
            }
            return text
        }
        return node(root)
    }

    // The demo app: a tab bar of Recipes (a navigation controller: RecipeList → show
    // RecipeDetail, which embeds Nutrition and shows CookingStep, which shows itself again and
    // unwinds to RecipeList; RecipeDetail presents a navigation controller holding Share), Pantry
    // (a split view: primary a navigation controller with PantryList, secondary PantryItem) and
    // Settings (a navigation controller: Settings presents About, custom segue to Theme).

    @Test("start: the initial hierarchy from relationship segues (R16), collapsed split on a phone (R14)")
    func start() throws {
        let driver = try Driver(idiom: "phone")
        // R16 builds the tabs in order, each navigation controller with its root; R14: on a
        // compact phone the split view is collapsed, its secondary pushed onto the primary stack.
        #expect(
            try driver.render()
                == "UITabBarController{*UINavigationController[◉RecipeListViewController], UISplitViewController(UINavigationController[PantryListViewController, PantryItemViewController] | -, collapsed), UINavigationController[SettingsViewController]}"
        )
    }

    @Test("show segues push (R1), an embed adds a child in its container view (R12), back pops (R9), unwind pops to its target (R17)")
    func stackActions() throws {
        var driver = try Driver(idiom: "phone")
        try driver.must(.segue(driver.segue("showRecipe")))
        // R1: the nearest navigation controller of RecipeList pushes RecipeDetail; R12: Nutrition
        // is its child when it loads.
        #expect(try driver.render().hasPrefix("UITabBarController{*UINavigationController[RecipeListViewController, ◉RecipeDetailViewController<NutritionViewController>]"))
        try driver.must(.segue(driver.segue("startCooking")))
        try driver.must(.segue(driver.segue("nextStep")))
        // R1 twice: a second CookingStep instance on top of the first.
        #expect(
            try driver.render().hasPrefix(
                "UITabBarController{*UINavigationController[RecipeListViewController, RecipeDetailViewController<NutritionViewController>, CookingStepViewController, ◉CookingStepViewController]"
            ))
        try driver.must(.back)
        // R9: pop removes the top only.
        #expect(
            try driver.render().hasPrefix(
                "UITabBarController{*UINavigationController[RecipeListViewController, RecipeDetailViewController<NutritionViewController>, ◉CookingStepViewController]"))
        try driver.must(.segue(driver.segue("unwindToRecipes:", from: "step")))
        // R17: RecipeList implements unwindToRecipes:; its navigation controller pops back to it.
        #expect(try driver.render().hasPrefix("UITabBarController{*UINavigationController[◉RecipeListViewController]"))
    }

    @Test("a presentation segue presents from the context root (R3b) with its style adapted (R4); dismiss removes it (R7)")
    func presentAndDismiss() throws {
        var driver = try Driver(idiom: "phone")
        try driver.must(.segue(driver.segue("showRecipe")))
        try driver.must(.segue(driver.segue("share")))
        let presented = try #require(driver.last("present") ?? driver.last("segue"))
        #expect(presented["type"] != nil)
        // R3b: the presenter is the context root of RecipeDetail, the tab bar controller; the
        // presented navigation controller holds Share (R16 rootViewController).
        let tree = try driver.render()
        #expect(tree.hasSuffix(" ⇑ formSheet→fullScreen UINavigationController[◉ShareViewController]"), "\(tree)")
        #expect(tree.hasPrefix("UITabBarController{*UINavigationController[RecipeListViewController, RecipeDetailViewController<NutritionViewController>]"))
        try driver.must(.dismiss)
        #expect(!(try driver.render().contains("⇑")))
        #expect(try driver.render().contains("◉RecipeDetailViewController"))
    }

    @Test("a tab switch selects the tab and keeps every stack (R13)")
    func selectTab() throws {
        var driver = try Driver(idiom: "phone")
        try driver.must(.segue(driver.segue("showRecipe")))
        try driver.must(.selectTab)
        let index = try #require(driver.last("tab.select")?["index"] as? Int)
        // R13: the Recipes stack stays as it was whichever tab is selected; a tap on the
        // selected tab's item pops its navigation controller to the root.
        let expected = [
            "UITabBarController{*UINavigationController[◉RecipeListViewController], UISplitViewController(UINavigationController[PantryListViewController, PantryItemViewController] | -, collapsed), UINavigationController[SettingsViewController]}",
            "UITabBarController{UINavigationController[RecipeListViewController, RecipeDetailViewController<NutritionViewController>], *UISplitViewController(UINavigationController[PantryListViewController, ◉PantryItemViewController] | -, collapsed), UINavigationController[SettingsViewController]}",
            "UITabBarController{UINavigationController[RecipeListViewController, RecipeDetailViewController<NutritionViewController>], UISplitViewController(UINavigationController[PantryListViewController, PantryItemViewController] | -, collapsed), *UINavigationController[◉SettingsViewController]}",
        ]
        #expect(try driver.render() == expected[index])
    }

    @Test("background leaves the hierarchy and moves the app out of the foreground (F4)")
    func background() throws {
        var driver = try Driver(idiom: "phone")
        let before = try driver.render()
        try driver.must(.background)
        let state = try driver.replayed()
        #expect(!state.foreground)
        #expect(Self.render(state) == before)
    }

    @Test("a size-class change on a pad collapses and expands the split view (R14)")
    func traits() throws {
        var driver = try Driver(idiom: "pad")
        // On a pad (regular) the split view starts expanded: PantryItem is the secondary column.
        #expect(
            try driver.render().contains(
                "UISplitViewController(UINavigationController[PantryListViewController] | PantryItemViewController)"))
        try driver.must(.traits)
        // R14: compact collapses it, pushing the secondary onto the primary stack.
        #expect(
            try driver.render().contains(
                "UISplitViewController(UINavigationController[PantryListViewController, PantryItemViewController] | -, collapsed)"))
        try driver.must(.traits)
        // R14: regular again pops it back into the secondary column.
        #expect(
            try driver.render().contains(
                "UISplitViewController(UINavigationController[PantryListViewController] | PantryItemViewController)"))
    }

    @Test("a custom segue resolves to nothing itself and its perform pushes (R18); a popover on a pad presents with its anchor (R6)")
    func customAndPopover() throws {
        var pad = try Driver(idiom: "pad")
        try pad.must(.segue(pad.segue("showFilter")))
        // R6: anchored (the storyboard's anchor), so it is presented; R4: regular keeps popover.
        #expect(try pad.render().contains("⇑ popover→popover ◉FilterViewController"))
        var phone = try Driver(idiom: "phone")
        // Reach Settings (the third tab) with as many tab switches as the random choice needs.
        var tries = 0
        while !(try phone.render().contains("◉SettingsViewController")), tries < 20 {
            _ = phone.perform(.selectTab)
            tries += 1
        }
        try #require(try phone.render().contains("◉SettingsViewController"))
        try phone.must(.segue(phone.segue("theme")))
        // R18: the custom segue itself changes nothing; this app's custom segues push in their
        // perform(), recorded as the nav.push that follows the segue event.
        #expect(phone.last("segue")?["kind"] as? String == "custom")
        #expect(phone.last("nav.push") != nil)
        #expect(try phone.render().hasSuffix("*UINavigationController[SettingsViewController, ◉ThemeViewController]}"))
    }
}
