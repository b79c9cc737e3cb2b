/// Several storyboards of one app, so that storyboard references
/// (`viewControllerPlaceholder` scenes) can be followed from one file to another.
///
/// Storyboards are found by ``Storyboard/name``, the way UIKit finds them
/// (`UIStoryboard(name:bundle:)`); when two loaded files share a name (localized copies such
/// as `Base.lproj/Main` and `de.lproj/Main`), the first one added answers.
public struct StoryboardSet: Sendable {
    /// The storyboards, in the order they were added.
    public private(set) var storyboards: [Storyboard] = []
    /// The index in `storyboards` of the first storyboard of each name.
    private var indexByName: [String: Int] = [:]

    /// Creates a set of `storyboards`.
    /// - Parameter storyboards: the storyboards, the first of each name taking precedence.
    public init(_ storyboards: [Storyboard] = []) {
        for storyboard in storyboards { add(storyboard) }
    }

    /// Loads the storyboards at `paths`.
    /// - Parameter paths: `.storyboard` files.
    /// - Returns: a set of them, in the order given.
    /// - Throws: the ``StoryboardError`` of the first file that cannot be loaded.
    public static func load(paths: [String]) throws(StoryboardError) -> StoryboardSet {
        var set = StoryboardSet()
        for path in paths { set.add(try Storyboard.load(path: path)) }
        return set
    }

    /// Adds a storyboard (it does not replace a loaded one of the same name for lookups).
    /// - Parameter storyboard: the storyboard.
    public mutating func add(_ storyboard: Storyboard) {
        if indexByName[storyboard.name] == nil { indexByName[storyboard.name] = storyboards.count }
        storyboards.append(storyboard)
    }

    /// The storyboard named `name`, if it was loaded.
    /// - Parameter name: a storyboard name, such as `Main`.
    /// - Returns: the first storyboard added with that name.
    public func storyboard(named name: String) -> Storyboard? {
        indexByName[name].map { storyboards[$0] }
    }

    /// The scene a storyboard reference stands for.
    ///
    /// A reference without `storyboardName` points into `storyboard` itself; one without
    /// `referencedIdentifier` points at its storyboard's initial controller; otherwise at the
    /// scene whose storyboard id is `referencedIdentifier` (a real controller rather than
    /// another reference when both carry the id). When the target is itself a reference, it
    /// is followed in turn, so the answer is always a real controller.
    /// - Parameters:
    ///   - placeholder: a scene of kind ``StoryboardScene/Kind/placeholder``.
    ///   - storyboard: the storyboard `placeholder` belongs to.
    /// - Returns: the storyboard and scene it leads to; nil when `placeholder` is not a
    ///   reference, its storyboard is not in the set, no scene has the identifier (or the
    ///   storyboard has no initial controller), or references lead in a circle.
    public func resolve(_ placeholder: StoryboardScene, in storyboard: Storyboard) -> (Storyboard, StoryboardScene)? {
        guard placeholder.reference != nil else { return nil }
        var current = (storyboard, placeholder)
        var visited: Set<String> = []
        while let reference = current.1.reference {
            // A circle of references (A → B → A) has no controller at its end.
            guard visited.insert(current.0.name + "\u{0}" + current.1.id).inserted else { return nil }
            let target: Storyboard?
            if let name = reference.storyboardName, name != current.0.name {
                target = self.storyboard(named: name)
            } else {
                target = current.0
            }
            guard let target, let scene = Self.scene(of: target, referencedBy: reference) else { return nil }
            current = (target, scene)
        }
        return current
    }

    /// A storyboard reference of the set and what it resolves to.
    public struct ResolvedReference: Sendable, Hashable, Codable {
        /// The index in ``StoryboardSet/storyboards`` of the storyboard holding the placeholder.
        public var storyboardIndex: Int
        /// The placeholder scene's id.
        public var placeholderID: String
        /// The index in ``StoryboardSet/storyboards`` of the storyboard it leads to.
        public var targetStoryboardIndex: Int
        /// The id of the scene it leads to.
        public var targetSceneID: String

        /// Creates a resolved reference.
        public init(storyboardIndex: Int, placeholderID: String, targetStoryboardIndex: Int, targetSceneID: String) {
            self.storyboardIndex = storyboardIndex
            self.placeholderID = placeholderID
            self.targetStoryboardIndex = targetStoryboardIndex
            self.targetSceneID = targetSceneID
        }
    }

    /// Every reference of the set's storyboards that leads to a scene of the set, in order.
    /// - Returns: placeholders and their targets, as indexes into ``storyboards``.
    public func resolvedReferences() -> [ResolvedReference] {
        var result: [ResolvedReference] = []
        for (index, storyboard) in storyboards.enumerated() {
            for placeholder in storyboard.scenes where placeholder.reference != nil {
                guard let (target, scene) = resolve(placeholder, in: storyboard),
                    let targetIndex = target.path == storyboard.path ? index : storyboards.firstIndex(where: { $0.path == target.path })
                else { continue }
                result.append(
                    ResolvedReference(storyboardIndex: index, placeholderID: placeholder.id, targetStoryboardIndex: targetIndex, targetSceneID: scene.id))
            }
        }
        return result
    }

    /// The scene of `storyboard` that `reference` names.
    private static func scene(of storyboard: Storyboard, referencedBy reference: StoryboardScene.Reference) -> StoryboardScene? {
        guard let identifier = reference.referencedIdentifier else {
            return storyboard.initialSceneID.flatMap(storyboard.scene)
        }
        let matches = storyboard.scenes.filter { $0.storyboardID == identifier }
        return matches.first { $0.reference == nil } ?? matches.first
    }
}
