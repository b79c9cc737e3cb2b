import NavlogJSON

// Tab bars and split views: selecting a tab, `showDetail`, size-class changes that collapse
// and expand a split view (R14).

extension SessionSimulator {
    mutating func selectTab() {
        let count = navs.count
        let index = rng.chance(0.1) ? selectedTab : (selectedTab + 1 + rng.below(count - 1)) % count
        let byUser = rng.chance(0.93)
        snapshot()
        open("tab.select")
        field("tab", ref: rootController)
        let form = rng.unit()
        if form < 0.9 {
            out.key("index")
            out.integer(UInt64(index))
        }
        if form >= 0.7 { field("vc", ref: navs[index].nav) }
        field("byUser", bool: byUser)
        close()
        let animated: Bool
        if index == selectedTab {
            // Tapping the selected tab's item pops its stack to the root (R13).
            animated = true
            if byUser { navs[index].stack.removeSubrange(1...) }
        } else {
            animated = false
            selectedTab = index
        }
        appearance(animated: animated)
    }

    mutating func showDetail() {
        let source = navs[0].stack[navs[0].stack.count - 1]
        let vcClass = catalog.details[rng.below(catalog.details.count)]
        let vc = make(vcClass)
        snapshot()
        var cause: UInt64
        if rng.chance(0.45) {
            let legacy = rng.chance(0.05)
            let kind: StaticString = legacy ? "replace" : "showDetail"
            let identifier: StaticString = rng.chance(0.5) ? "showDetail" : classes[vcClass].segue
            guard
                segueShouldAndPrepare(
                    kind: kind, source: source, identifier: identifier, destination: vc, asked: 0.25, refused: 0.05, prepared: 0.75)
            else { return }
            cause = segue(
                kind: kind, source: source, identifier: identifier, destination: vc, phase: "perform",
                segueClass: rng.chance(0.1) ? (legacy ? "UIStoryboardReplaceSegue" : "UIStoryboardShowDetailSegue") : "")
        } else {
            cause = intent("showDetail", from: source, vc: vc)
        }
        if collapsed {
            // R2 while collapsed: a push onto the primary navigation controller, which says so.
            open("nav.push")
            field("nav", ref: navs[0].nav)
            field("vc", ref: vc)
            field("animated", bool: true)
            close(cause: cause)
            navs[0].stack.append(vc)
            appearance(animated: true)
        } else {
            // Expanded: the intent alone replaces the secondary column.
            secondary = vc
            appearance(animated: false)
        }
    }

    mutating func changeTraits() {
        if isPad { horizontalCompact.toggle() } else { verticalCompact.toggle() }
        snapshot()
        open("traits.change")
        field("h", plain: horizontalCompact ? "compact" : "regular")
        field("v", plain: verticalCompact ? "compact" : "regular")
        close()
        guard shape == .split else { return }
        if horizontalCompact && !collapsed {
            // R14: the secondary column goes onto the primary stack.
            navs[0].stack.append(secondary)
            secondaryStart = navs[0].stack.count - 1
            secondary = -1
            collapsed = true
            open("split.collapse")
            field("split", ref: rootController)
            close()
            appearance(animated: false)
        } else if !horizontalCompact && collapsed {
            // R14: what came from the secondary column leaves the stack; its first is the column again.
            secondary = navs[0].stack[secondaryStart]
            navs[0].stack.removeSubrange(secondaryStart...)
            collapsed = false
            open("split.expand")
            field("split", ref: rootController)
            close()
            appearance(animated: false)
        }
    }
}
