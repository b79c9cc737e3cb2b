/// The storyboards of one app, indexed for walking them (the simulator) and matching recorded
/// screens to them (storyboard coverage): scenes by id, segues by source, relationship and embed
/// segues apart, placeholders resolved across files.
public struct StoryboardApp: Sendable {
    /// The storyboards, the one with the app's initial view controller first.
    public let storyboards: [Storyboard]
    /// For each storyboard: scene id → scene.
    package let scenes: [[String: StoryboardScene]]
    /// For each storyboard: scene id → the segues that leave it.
    package let segues: [[String: [StoryboardSegue]]]
    /// Every unwind action some unwind segue names, per storyboard.
    package let unwindActions: [Set<String>]
    /// Scenes that are the destination of a relationship segue (stack roots, tabs, columns):
    /// where the simulated app implements the unwind actions its storyboards name.
    package let relationshipDestinations: [Set<String>]

    /// The scene the app starts from.
    package let start: (storyboard: Int, sceneID: String)
    /// Whether the start was guessed (no storyboard names an initial view controller).
    public let startIsGuessed: Bool

    /// Indexes `storyboards`. The app starts at `startingAt` (a storyboard identifier) when
    /// given, else at the first initial view controller; apps that make their first screen in
    /// code have none, and then the first scene no segue leads to is used.
    /// - Throws: ``SimulationError`` when there is no scene, or no scene has that identifier.
    public init(_ storyboards: [Storyboard], startingAt storyboardID: String? = nil) throws(SimulationError) {
        var ordered = storyboards
        if let main = storyboards.firstIndex(where: { $0.initialSceneID.flatMap($0.scene) != nil }) { ordered.swapAt(0, main) }
        self.storyboards = ordered
        scenes = ordered.map { Dictionary($0.scenes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        segues = ordered.map { Dictionary(grouping: $0.segues, by: \.sourceID) }
        unwindActions = ordered.map { Set($0.segues.compactMap(\.unwindAction)) }
        relationshipDestinations = ordered.map { Set($0.segues.filter { $0.kind == "relationship" }.compactMap(\.destinationID)) }
        if let storyboardID {
            guard let found = ordered.indices.lazy.compactMap({ index in ordered[index].scenes.first { $0.storyboardID == storyboardID }.map { (index, $0.id) } }).first
            else {
                throw SimulationError(reason: "no scene of the storyboards has the storyboard identifier \(storyboardID); check --start")
            }
            start = found
            startIsGuessed = false
        } else if let initial = ordered.first?.initialSceneID, ordered[0].scene(initial) != nil {
            start = (0, initial)
            startIsGuessed = false
        } else {
            let targets = Set(ordered[0].segues.compactMap(\.destinationID))
            let usable = ordered.first?.scenes.filter { $0.kind != .placeholder } ?? []
            guard let root = usable.first(where: { !targets.contains($0.id) }) ?? usable.first else {
                throw SimulationError(reason: "the storyboards have no view controller to start from")
            }
            start = (0, root.id)
            startIsGuessed = true
        }
    }

    /// The app's initial scene.
    package var initialScene: (storyboard: Int, scene: StoryboardScene) {
        (start.storyboard, scenes[start.storyboard][start.sceneID]!)
    }

    /// The scene a placeholder stands for, or the scene itself; nil when the referenced
    /// storyboard is not loaded or has no such scene.
    package func resolve(_ storyboard: Int, _ scene: StoryboardScene) -> (storyboard: Int, scene: StoryboardScene)? {
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
    package func segues(from storyboard: Int, _ scene: String) -> [StoryboardSegue] { segues[storyboard][scene] ?? [] }
}

/// A simulation that cannot run: what is wrong, as a sentence.
public struct SimulationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var reason: String
    public var description: String { reason }
}
