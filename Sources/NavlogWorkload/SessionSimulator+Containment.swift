import NavlogJSON

// Embedded children: added when their parent's view loads (embed segues, R12) and swapped by
// a segmented control (R10).

extension SessionSimulator {
    /// A screen's view loads: its storyboard embed segue (or code) adds the embedded child (R10, R12).
    mutating func loadEmbeds(_ parent: Int32) {
        let c = classOf(parent)
        guard !classes[c].embeds.isEmpty else { return }
        let childClass = classes[c].embeds[0]
        let child = make(childClass)
        ctlLoaded[Int(child)] = true
        var cause: UInt64 = 0
        if rng.chance(0.6) {
            cause = segue(
                kind: "embed", source: parent, identifier: classes[c].embedSegue, destination: child,
                phase: "perform", segueClass: rng.chance(0.1) ? "UIStoryboardEmbedSegue" : "")
        }
        add(child, to: parent, cause: cause, slotOnDidMove: 0.7)
    }

    /// A segmented control swaps the embedded child (R10: willMove(nil), removeFromParent, addChild, didMove).
    mutating func swapChild() {
        let parent = rootFocus
        let c = classOf(parent)
        let old = ctlChild[Int(parent)]
        let embeds = classes[c].embeds
        var newClass = embeds[rng.below(embeds.count)]
        if newClass == classOf(old) { newClass = embeds[(embeds.firstIndex(of: newClass)! + 1) % embeds.count] }
        open("child.willMove")
        field("vc", ref: old)
        if rng.chance(0.7) { out.raw(",\"parent\":null") }
        close()
        open("child.remove")
        field("vc", ref: old)
        if rng.chance(0.6) { field("parent", ref: parent) }
        if rng.chance(0.5) {
            out.key("slot")
            out.string(classes[c].slot)
        }
        close()
        let child = make(newClass)
        ctlLoaded[Int(child)] = true
        add(child, to: parent, cause: 0, slotOnDidMove: nil)
    }

    /// Writes `child.add` (with `cause`, an embed segue's seq, when not 0) and `child.didMove` of
    /// `child` into `parent`'s container view; `child.didMove` names the slot too with
    /// probability `slotOnDidMove` (never when nil).
    private mutating func add(_ child: Int32, to parent: Int32, cause: UInt64, slotOnDidMove: Double?) {
        let slot = classes[classOf(parent)].slot
        open("child.add")
        field("parent", ref: parent)
        field("vc", ref: child)
        out.key("slot")
        out.string(slot)
        close(cause: cause)
        open("child.didMove")
        field("vc", ref: child)
        field("parent", ref: parent)
        if let slotOnDidMove, rng.chance(slotOnDidMove) {
            out.key("slot")
            out.string(slot)
        }
        close()
        ctlChild[Int(parent)] = child
    }
}
