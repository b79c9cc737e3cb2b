public import NavlogStoryboard

/// The storyboards of one simulated app, indexed for the walk: scenes by id, segues by source,
/// relationship and embed segues apart, placeholders resolved across files.
public struct StoryboardApp: Sendable {
    /// The storyboards, the one with the app's initial view controller first.
    public let storyboards: [Storyboard]
    /// For each storyboard: scene id → scene.
    let scenes: [[String: StoryboardScene]]
    /// For each storyboard: scene id → the segues that leave it.
    let segues: [[String: [StoryboardSegue]]]
    /// Every unwind action some unwind segue names, per storyboard.
    let unwindActions: [Set<String>]
    /// Scenes that are the destination of a relationship segue (stack roots, tabs, columns):
    /// where the simulated app implements the unwind actions its storyboards name.
    let relationshipDestinations: [Set<String>]

    /// Indexes `storyboards`.
    /// - Throws: ``SimulationError`` when none has an initial view controller.
    public init(_ storyboards: [Storyboard]) throws(SimulationError) {
        guard let main = storyboards.firstIndex(where: { $0.initialSceneID.flatMap($0.scene) != nil }) else {
            throw SimulationError(
                reason: "none of the storyboards has an initial view controller (Is Initial View Controller in Interface Builder); the simulated app needs one to start from")
        }
        var ordered = storyboards
        ordered.swapAt(0, main)
        self.storyboards = ordered
        scenes = ordered.map { Dictionary($0.scenes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        segues = ordered.map { Dictionary(grouping: $0.segues, by: \.sourceID) }
        unwindActions = ordered.map { Set($0.segues.compactMap(\.unwindAction)) }
        relationshipDestinations = ordered.map { Set($0.segues.filter { $0.kind == "relationship" }.compactMap(\.destinationID)) }
    }

    /// The app's initial scene.
    var initialScene: (storyboard: Int, scene: StoryboardScene) {
        (0, scenes[0][storyboards[0].initialSceneID!]!)
    }

    /// The scene a placeholder stands for, or the scene itself; nil when the referenced
    /// storyboard is not loaded or has no such scene.
    func resolve(_ storyboard: Int, _ scene: StoryboardScene) -> (storyboard: Int, scene: StoryboardScene)? {
        guard scene.kind == .placeholder else { return (storyboard, scene) }
        guard let reference = scene.reference else { return nil }
        let target = reference.storyboardName.flatMap { name in storyboards.firstIndex { $0.name == name } } ?? storyboard
        if let identifier = reference.referencedIdentifier {
            guard let found = storyboards[target].scenes.first(where: { $0.storyboardID == identifier && $0.kind != .placeholder }) else { return nil }
            return (target, found)
        }
        guard let initial = storyboards[target].initialSceneID, let found = scenes[target][initial], found.kind != .placeholder else { return nil }
        return (target, found)
    }

    /// The segues leaving `scene` of `storyboard`.
    func segues(from storyboard: Int, _ scene: String) -> [StoryboardSegue] { segues[storyboard][scene] ?? [] }
}

/// A simulation that cannot run: what is wrong, as a sentence.
public struct SimulationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var reason: String
    public var description: String { reason }
}
