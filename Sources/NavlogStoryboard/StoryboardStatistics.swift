/// Counts that describe a storyboard's navigation graph (or several storyboards' together):
/// what `navlog storyboard stats` prints.
public struct StoryboardStatistics: Sendable, Hashable, Codable {
    /// How many storyboards were counted.
    public var files: Int
    /// Every scene, placeholders included.
    public var scenes: Int
    /// Scenes by ``StoryboardScene/Kind`` raw value (`plain`, `navigation`, …); kinds with
    /// no scene are left out.
    public var scenesByKind: [String: Int]
    /// Every navigation segue.
    public var segues: Int
    /// Segues by `kind` (`show`, `relationship`, `push`, …).
    public var seguesByKind: [String: Int]
    /// Segues other than relationships that have no identifier: code cannot perform them
    /// and a recorded `segue` event cannot be matched to them by identifier. (Relationship
    /// segues never have one.)
    public var identifiersMissing: Int
    /// Identifiers that more than one segue of the same file carries, each counted once:
    /// matching a recorded segue to the storyboard needs its source too.
    public var identifiersReused: Int
    /// Storyboard references (`viewControllerPlaceholder` scenes).
    public var references: Int
    /// The storyboards references point to, sorted (the file's own name for a reference
    /// within the file).
    public var referencedStoryboards: [String]

    /// Counts `storyboard`.
    /// - Parameter storyboard: the storyboard.
    public init(_ storyboard: Storyboard) {
        files = 1
        scenes = storyboard.scenes.count
        scenesByKind = [:]
        for scene in storyboard.scenes { scenesByKind[scene.kind.rawValue, default: 0] += 1 }
        segues = storyboard.segues.count
        seguesByKind = [:]
        var identifierUses: [String: Int] = [:]
        identifiersMissing = 0
        for segue in storyboard.segues {
            seguesByKind[segue.kind, default: 0] += 1
            if let identifier = segue.identifier, !identifier.isEmpty {
                identifierUses[identifier, default: 0] += 1
            } else if segue.kind != "relationship" {
                identifiersMissing += 1
            }
        }
        identifiersReused = identifierUses.values.count { $0 > 1 }
        let placeholders = storyboard.scenes.compactMap(\.reference)
        references = placeholders.count
        referencedStoryboards = Set(placeholders.map { $0.storyboardName ?? storyboard.name }).sorted()
    }

    /// The sum of several storyboards' counts.
    /// - Parameter parts: per-file statistics.
    public init(total parts: [StoryboardStatistics]) {
        files = 0
        scenes = 0
        scenesByKind = [:]
        segues = 0
        seguesByKind = [:]
        identifiersMissing = 0
        identifiersReused = 0
        references = 0
        var referenced: Set<String> = []
        for part in parts {
            files += part.files
            scenes += part.scenes
            scenesByKind.merge(part.scenesByKind, uniquingKeysWith: +)
            segues += part.segues
            seguesByKind.merge(part.seguesByKind, uniquingKeysWith: +)
            identifiersMissing += part.identifiersMissing
            // Identifiers are per file (UIKit looks them up on one source controller), so
            // reuse adds up rather than being recomputed across files.
            identifiersReused += part.identifiersReused
            references += part.references
            referenced.formUnion(part.referencedStoryboards)
        }
        referencedStoryboards = referenced.sorted()
    }
}
