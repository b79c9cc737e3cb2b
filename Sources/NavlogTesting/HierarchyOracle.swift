public import NavlogReplay

/// An independent check of a hierarchy's links, written apart from the engine's own
/// (`Hierarchy.isConsistent`, which checkpoint decoding uses): the fuzz target and the tests
/// hold decoded checkpoints to it.
public enum HierarchyOracle {
    /// Whether every link of `hierarchy` has its counterpart (H3: one place per controller,
    /// named from both ends) and no parent or presenter chain loops.
    public static func isConsistent(_ hierarchy: Hierarchy) -> Bool {
        let nodes = hierarchy.nodes
        func valid(_ handle: Int32) -> Bool { handle >= 0 && Int(handle) < nodes.count }
        for (index, node) in nodes.enumerated() {
            let handle = Int32(index)
            switch node.placement {
            case .none:
                break
            case .windowRoot:
                guard node.window >= 0, Int(node.window) < hierarchy.windows.count, hierarchy.windows[Int(node.window)].root == handle else { return false }
            case .stack, .tab:
                guard valid(node.parent), nodes[Int(node.parent)].items.filter({ $0 == handle }).count == 1 else { return false }
            case .primary:
                guard valid(node.parent), nodes[Int(node.parent)].primary == handle else { return false }
            case .secondary:
                guard valid(node.parent), nodes[Int(node.parent)].secondary == handle else { return false }
            case .supplementary:
                guard valid(node.parent), nodes[Int(node.parent)].supplementary == handle else { return false }
            case .child:
                guard valid(node.parent), nodes[Int(node.parent)].children.filter({ $0 == handle }).count == 1 else { return false }
            case .presented:
                guard valid(node.presenter), nodes[Int(node.presenter)].presented == handle else { return false }
            }
            for item in node.items {
                guard valid(item), nodes[Int(item)].parent == handle, [.stack, .tab].contains(nodes[Int(item)].placement) else { return false }
            }
            for child in node.children {
                guard valid(child), nodes[Int(child)].parent == handle, nodes[Int(child)].placement == .child else { return false }
            }
            for (column, placement) in [(node.primary, Hierarchy.Placement.primary), (node.secondary, .secondary), (node.supplementary, .supplementary)] where column >= 0 {
                guard valid(column), nodes[Int(column)].parent == handle, nodes[Int(column)].placement == placement else { return false }
            }
            if node.presented >= 0 {
                guard valid(node.presented), nodes[Int(node.presented)].presenter == handle, nodes[Int(node.presented)].placement == .presented else { return false }
            }
            var current = handle
            var steps = 0
            while current >= 0 {
                guard valid(current), steps <= nodes.count else { return false }
                current = nodes[Int(current)].parent >= 0 ? nodes[Int(current)].parent : nodes[Int(current)].presenter
                steps += 1
            }
        }
        for (index, window) in hierarchy.windows.enumerated() where window.root >= 0 {
            guard valid(window.root), nodes[Int(window.root)].placement == .windowRoot, nodes[Int(window.root)].window == Int32(index) else { return false }
        }
        return true
    }
}
