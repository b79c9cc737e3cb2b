public import NavlogReplay
public import NavlogStoryboard

/// Which scenes and segues of an app's storyboards recorded sessions exercised, which never,
/// and which recorded transitions the storyboards do not allow.
///
/// Controllers are matched to scenes by class and storyboard identifier. A forward transition
/// (the focus moves to a controller that was not on screen before) is matched to a segue from
/// the scene of the previously focused screen (or a container around it) to the scene of the
/// new one (or a container around it, such as the navigation controller a form sheet presents).
public struct StoryboardCoverage {
    /// How much a scene was used.
    public struct SceneUse: Sendable {
        /// The storyboard (index into the app's list) and the scene.
        public var storyboard: Int
        public var scene: StoryboardScene
        /// How many times it became the focused screen, and in how many sessions.
        public var visits = 0
        public var sessions = 0
    }

    /// How much a segue was used.
    public struct SegueUse: Sendable {
        /// The storyboard and the segue.
        public var storyboard: Int
        public var segue: StoryboardSegue
        /// How many recorded transitions it explains.
        public var uses = 0
    }

    /// A recorded transition no segue explains.
    public struct Unexpected: Sendable, Hashable {
        /// The classes (and storyboard ids) of the screen left and the screen reached.
        public var from: String
        public var to: String
        /// The event that made it (`nav.push`, `present`, `segue show`, …).
        public var how: String
        /// How many times, and the first (session, seq).
        public var count = 0
        public var example: (session: String, sequence: UInt64?) = ("", nil)

        public static func == (a: Unexpected, b: Unexpected) -> Bool { (a.from, a.to, a.how) == (b.from, b.to, b.how) }
        public func hash(into hasher: inout Hasher) { hasher.combine(from); hasher.combine(to); hasher.combine(how) }
    }

    /// The app.
    public let app: StoryboardApp
    /// Every scene with its use, in storyboard order.
    public private(set) var scenes: [SceneUse] = []
    /// Every segue with its use, in storyboard order.
    public private(set) var segues: [SegueUse] = []
    /// Transitions no segue explains, most frequent first when read through ``unexpectedTransitions``.
    private var unexpected: [String: Unexpected] = [:]
    /// Events read and forward transitions seen.
    public private(set) var eventsRead = 0
    public private(set) var transitions = 0

    private var scenesByClass: [String: [Int]] = [:]
    private var scenesByStoryboardID: [String: [Int]] = [:]
    private var sceneIndex: [String: Int] = [:]  // "storyboard/scene id" → index in scenes
    private var seguesBetween: [Int: [Int: [Int]]] = [:]  // source scene → destination scene → segue indexes
    private var unwindSegues: [Int: [String: [Int]]] = [:]  // source scene → action → segue indexes
    private var sessionsSeen: [Int: Set<String>] = [:]  // scene → the sessions that had it on screen

    /// Coverage of `app`'s storyboards, nothing observed yet.
    public init(app: StoryboardApp) {
        self.app = app
        for (number, storyboard) in app.storyboards.enumerated() {
            for scene in storyboard.scenes {
                sceneIndex["\(number)/\(scene.id)"] = scenes.count
                if scene.kind != .placeholder {
                    scenesByClass[scene.className, default: []].append(scenes.count)
                    if let id = scene.storyboardID { scenesByStoryboardID[id, default: []].append(scenes.count) }
                }
                scenes.append(SceneUse(storyboard: number, scene: scene))
            }
        }
        for (number, storyboard) in app.storyboards.enumerated() {
            for segue in storyboard.segues {
                guard let source = sceneIndex["\(number)/\(segue.sourceID)"] else { continue }
                let index = segues.count
                segues.append(SegueUse(storyboard: number, segue: segue))
                if let action = segue.unwindAction, segue.kind == "unwind" {
                    unwindSegues[source, default: [:]][action, default: []].append(index)
                }
                guard let destinationID = segue.destinationID, let scene = storyboard.scene(destinationID) else { continue }
                // A segue to a reference leads to the scene referenced.
                let resolved = app.resolve(number, scene).flatMap { sceneIndex["\($0.storyboard)/\($0.scene.id)"] }
                for destination in Set([sceneIndex["\(number)/\(destinationID)"], resolved].compactMap { $0 }) {
                    seguesBetween[source, default: [:]][destination, default: []].append(index)
                }
            }
        }
    }

    /// The scenes a controller may be (by storyboard identifier, else by class).
    func candidates(_ controller: ControllerTable.Controller) -> [Int] {
        if let id = controller.storyboardID, let found = scenesByStoryboardID[id] {
            let sameClass = found.filter { scenes[$0].scene.className == controller.className }
            return sameClass.isEmpty ? found : sameClass
        }
        return controller.className.flatMap { scenesByClass[$0] } ?? []
    }

    /// The scenes a controller of a session may be: a container class shared by several scenes
    /// (every UINavigationController) is told apart by the relationship segue to its first child.
    func candidates(_ handle: ControllerHandle, in state: SessionReplayer) -> [Int] {
        let found = candidates(state.controllers[handle])
        guard found.count > 1 else { return found }
        let node = state.hierarchy[handle.index]
        let firstChild = node.items.first ?? (node.primary >= 0 ? node.primary : node.children.first ?? -1)
        guard firstChild >= 0 else { return found }
        let childScenes = Set(candidates(state.controllers[ControllerHandle(index: firstChild)]))
        let narrowed = found.filter { scene in
            (seguesBetween[scene] ?? [:]).contains { childScenes.contains($0.key) && $0.value.contains { segues[$0].segue.kind == "relationship" } }
        }
        return narrowed.isEmpty ? found : narrowed
    }

    func describe(_ controller: ControllerTable.Controller) -> String {
        (controller.className ?? "?") + (controller.storyboardID.map { " (\($0))" } ?? "")
    }

    /// What a session looked like just before an event: the focused screen and the
    /// controllers around it (containment only), as ``StoryboardCoverage/before(_:)`` takes them.
    public struct Before {
        var focusID: String?
        var around: [ControllerTable.Controller]
        /// The ids of what was on screen (F3).
        var onScreen: Set<String>
    }

    /// The part of `state` that ``observe(session:sequence:event:forward:unwindAction:before:after:)``
    /// compares with the state after the event.
    public static func before(_ state: SessionReplayer) -> Before {
        guard let focus = state.focus else { return Before(focusID: nil, around: [], onScreen: []) }
        var around: [ControllerTable.Controller] = []
        state.hierarchy.forEachAncestor(of: focus.index) { around.append(state.controllers[ControllerHandle(index: $0)]) }
        return Before(focusID: state.id(of: focus), around: around, onScreen: Set(state.visible.map { state.id(of: $0) }))
    }

    /// Takes in one event of `session`: `event` names it (`nav.push`, `segue show`, …),
    /// `forward` says whether it adds a screen (push, present, show, a segue other than unwind,
    /// a new root) rather than going back (pop, dismiss, tab switch, unwind).
    public mutating func observe(
        session: String, sequence: UInt64?, event: String, forward: Bool, unwindAction: String?, before: Before, after: SessionReplayer
    ) {
        eventsRead += 1
        guard let focus = after.focus, after.id(of: focus) != before.focusID else { return }
        let focused = after.controllers[focus]
        for scene in candidates(focused) { scenes[scene].visits += 1 }
        // Exercised: on screen (visible, F3), containers and embedded children included.
        for handle in after.visible {
            for scene in candidates(handle, in: after) where sessionsSeen[scene, default: []].insert(session).inserted {
                scenes[scene].sessions += 1
            }
        }
        guard let left = before.around.first else { return }
        guard forward else {
            if let unwindAction {
                for scene in candidates(left) {
                    for index in unwindSegues[scene]?[unwindAction] ?? [] { segues[index].uses += 1 }
                }
            }
            return
        }
        transitions += 1
        // Sources: the screen left and the containers around it; destinations: the new screen
        // and the containers around it up to its context root (a presented navigation
        // controller, say).
        let sources = before.around.flatMap(candidates)
        var destinations: [Int] = []
        after.hierarchy.forEachAncestor(of: focus.index) { (handle: Int32) -> Bool in
            let controller = ControllerHandle(index: handle)
            guard !before.onScreen.contains(after.id(of: controller)) else { return false }
            destinations.append(contentsOf: candidates(controller, in: after))
            return true
        }
        var explained = false
        for source in sources where !explained {
            for destination in destinations {
                for index in seguesBetween[source]?[destination] ?? []
                where segues[index].segue.kind != "relationship" && segues[index].segue.kind != "embed" {
                    segues[index].uses += 1
                    explained = true
                }
            }
        }
        guard !explained else { return }
        let key = Unexpected(from: describe(left), to: describe(focused), how: event)
        let name = key.from + "→" + key.to + "|" + key.how
        var entry = unexpected[name] ?? key
        if entry.count == 0 { entry.example = (session, sequence) }
        entry.count += 1
        unexpected[name] = entry
    }

    /// Marks the relationship and embed segues that built containers: `child` was placed in
    /// `container` (a stack root, a tab, a column, a contained child).
    public mutating func observeContainment(container: ControllerTable.Controller, child: ControllerTable.Controller) {
        for source in candidates(container) {
            for destination in candidates(child) {
                for index in seguesBetween[source]?[destination] ?? []
                where segues[index].segue.kind == "relationship" || segues[index].segue.kind == "embed" {
                    segues[index].uses += 1
                }
            }
        }
    }

    /// Transitions no segue explains, most frequent first (then by from, to and how, so that
    /// equal counts come in the same order in every run).
    public var unexpectedTransitions: [Unexpected] {
        unexpected.values.sorted { ($1.count, $0.from, $0.to, $0.how) < ($0.count, $1.from, $1.to, $1.how) }
    }
}

extension Hierarchy {
    /// Calls `body` with `handle` and each controller up its parent chain (containment only)
    /// while it returns true.
    public func forEachAncestor(of handle: Int32, _ body: (Int32) -> Bool) {
        var current = handle
        var steps = 0
        while current >= 0, steps <= nodes.count {
            guard body(current) else { return }
            current = nodes[Int(current)].parent
            steps += 1
        }
    }

    /// Calls `body` with `handle` and each controller up its parent chain.
    public func forEachAncestor(of handle: Int32, _ body: (Int32) -> Void) {
        forEachAncestor(of: handle) { (handle: Int32) -> Bool in
            body(handle)
            return true
        }
    }
}
