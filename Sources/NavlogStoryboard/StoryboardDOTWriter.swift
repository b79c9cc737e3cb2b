/// Renders storyboards as a Graphviz `digraph` (what `navlog storyboard graph` prints).
///
/// Each storyboard is a cluster; its scenes are boxes labelled with their class and
/// storyboard id (placeholders dashed, labelled with what they reference); the initial scene
/// has a double border and an arrow from a dot. Edges:
///
/// - segues that present or show: solid, labelled with kind and identifier;
/// - relationship segues (a container's children): bold blue, labelled with the relationship;
/// - embed segues: dashed green, labelled `embed` and the identifier;
/// - unwind segues: dotted, to a note naming the unwind action (their destination is found
///   at run time);
/// - references: dotted grey, from a placeholder to the scene it stands for, when that
///   scene's storyboard is in the set.
public enum StoryboardDOTWriter {
    /// The `digraph` of `set`.
    /// - Parameter set: the storyboards to draw; references are drawn between them.
    /// - Returns: DOT text ending in a newline.
    public static func render(_ set: StoryboardSet) -> String {
        var lines = [
            "digraph storyboards {",
            "    rankdir=LR;",
            "    node [shape=box, fontname=\"Helvetica\", fontsize=11];",
            "    edge [fontname=\"Helvetica\", fontsize=9];",
        ]
        for (index, storyboard) in set.storyboards.enumerated() {
            lines.append("    subgraph \(quoted("cluster_\(index)")) {")
            lines.append("        label=\(quoted("\(storyboard.name).storyboard"));")
            for scene in storyboard.scenes { lines.append("        " + node(scene, of: storyboard, at: index)) }
            if let initial = storyboard.initialSceneID, storyboard.scene(initial) != nil {
                let start = quoted("\(index):initial")
                lines.append("        \(start) [shape=point, label=\"\"];")
                lines.append("        \(start) -> \(nodeID(index, initial));")
            }
            var unwindNodes: Set<String> = []
            for segue in storyboard.segues {
                guard storyboard.scene(segue.sourceID) != nil else { continue }
                if segue.kind == "unwind" {
                    let action = segue.unwindAction ?? "(no action)"
                    let target = quoted("\(index):unwind:\(action)")
                    if unwindNodes.insert(action).inserted {
                        lines.append("        \(target) [shape=note, style=dotted, label=\(quoted("unwind " + action))];")
                    }
                    lines.append("        \(nodeID(index, segue.sourceID)) -> \(target) [style=dotted, label=\(quoted(label(segue)))];")
                } else if let destination = segue.destinationID {
                    lines.append("        \(nodeID(index, segue.sourceID)) -> \(nodeID(index, destination)) [\(attributes(segue))];")
                }
            }
            lines.append("    }")
        }
        for reference in set.resolvedReferences() {
            lines.append(
                "    \(nodeID(reference.storyboardIndex, reference.placeholderID)) -> \(nodeID(reference.targetStoryboardIndex, reference.targetSceneID)) [style=dotted, color=gray40, label=\"reference\"];"
            )
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A scene's node statement.
    private static func node(_ scene: StoryboardScene, of storyboard: Storyboard, at index: Int) -> String {
        var label = [scene.className]
        if let reference = scene.reference {
            let target = reference.storyboardName ?? storyboard.name
            label = ["→ \(target)." + (reference.referencedIdentifier ?? "(initial)")]
        }
        if let storyboardID = scene.storyboardID { label.append("id: \(storyboardID)") }
        if scene.kind != .plain && scene.kind != .placeholder { label.append("[\(scene.kind.rawValue)]") }
        var attributes = ["label=\(quoted(label.joined(separator: "\n")))"]
        if scene.reference != nil { attributes.append("style=dashed") }
        if scene.id == storyboard.initialSceneID { attributes.append("peripheries=2") }
        return "\(nodeID(index, scene.id)) [\(attributes.joined(separator: ", "))];"
    }

    /// The edge attributes of a segue that has a destination.
    private static func attributes(_ segue: StoryboardSegue) -> String {
        let label = "label=\(quoted(label(segue)))"
        switch segue.kind {
        case "relationship": return "\(label), style=bold, color=blue"
        case "embed": return "\(label), style=dashed, color=darkgreen"
        default: return label
        }
    }

    /// Kind (or relationship) and identifier, one per line.
    private static func label(_ segue: StoryboardSegue) -> String {
        var parts = [segue.kind == "relationship" ? (segue.relationship ?? "relationship") : segue.kind]
        if let identifier = segue.identifier { parts.append(identifier) }
        return parts.joined(separator: "\n")
    }

    /// A node's id: scene ids are unique only within a file.
    private static func nodeID(_ storyboardIndex: Int, _ sceneID: String) -> String {
        quoted("\(storyboardIndex):\(sceneID)")
    }

    /// A DOT quoted string (`"` and `\` escaped, newlines as `\n`).
    static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result + "\""
    }
}
