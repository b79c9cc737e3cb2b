import NavlogJSON

// The session's start (its app, device, window root and root containers) and its end, and
// going to the background.

extension SessionSimulator {
    /// Writes `session.start`, the window's root and the root tree's containers, and the
    /// first screens' appearance.
    mutating func start() {
        phase = .running
        writeSessionStart()
        visibleBefore.removeAll(keepingCapacity: true)
        switch shape {
        case .tabs: startTabs()
        case .split: startSplit()
        case .navigation: startNavigation()
        }
        appearance(animated: false)
    }

    /// `session.start`: the app and its release, the device, its idiom and size classes.
    private mutating func writeSessionStart() {
        let entry = tables.apps[app]
        let release = entry.releases[rng.chance(0.6) ? 0 : rng.below(entry.releases.count)]
        open("session.start", after: 0)
        out.raw(",\"app\":")
        out.raw(entry.name)
        out.raw(",\"version\":")
        out.raw(release.version)
        if rng.chance(0.95) {
            out.raw(",\"build\":")
            out.raw(release.build)
        }
        if isPad {
            field("os", plain: Self.padSystems[rng.below(Self.padSystems.count)])
            field("device", plain: Self.pads[rng.below(Self.pads.count)])
            out.raw(",\"idiom\":\"pad\",\"traits\":{\"h\":\"regular\",\"v\":\"regular\"}")
        } else {
            field("os", plain: Self.phoneSystems[rng.below(Self.phoneSystems.count)])
            field("device", plain: Self.phones[rng.below(Self.phones.count)])
            out.raw(",\"idiom\":\"phone\",\"traits\":{\"h\":\"compact\",\"v\":\"regular\"}")
        }
        out.raw(",\"v\":1")
        close()
    }

    /// A tab bar controller of navigation controllers, one per tab root (sometimes one fewer).
    private mutating func startTabs() {
        let tab = make(catalog.tabBar)
        rootController = tab
        let count = rng.chance(0.3) ? max(3, catalog.tabRoots.count - 1) : catalog.tabRoots.count
        for i in 0..<count {
            let nav = make(Vocabulary.navigation)
            let screen = make(catalog.tabRoots[i])
            navs.append(NavStack(nav: nav, stack: [screen]))
        }
        selectedTab = rng.chance(0.8) ? 0 : rng.below(count)
        windowRoot(tab)
        open("tab.set")
        field("tab", ref: tab)
        let tabs = navs.map(\.nav)
        field("vcs", refs: tabs)
        if selectedTab != 0 || rng.chance(0.5) {
            out.key("selected")
            out.integer(UInt64(selectedTab))
        }
        close()
        for i in 0..<count { setStack(i) }
    }

    /// A split view controller: a navigation controller with the list as its primary column,
    /// an empty detail screen as its secondary one.
    private mutating func startSplit() {
        let split = make(catalog.split)
        rootController = split
        let primary = make(Vocabulary.navigation)
        let list = make(catalog.splitPrimaryRoot)
        navs.append(NavStack(nav: primary, stack: [list]))
        secondary = make(catalog.emptyDetail)
        windowRoot(split)
        open("split.set")
        field("split", ref: split)
        field("primary", ref: primary)
        field("secondary", ref: secondary)
        close()
        setStack(0)
    }

    /// A navigation controller and its root screen.
    private mutating func startNavigation() {
        let nav = make(Vocabulary.navigation)
        rootController = nav
        let screen = make(catalog.navigationRoot)
        navs.append(NavStack(nav: nav, stack: [screen]))
        windowRoot(nav)
        setStack(0)
    }

    mutating func windowRoot(_ vc: Int32) {
        open("window.root")
        if rng.chance(0.8) { field("window", plain: "main") }
        field("vc", ref: vc)
        close()
    }

    /// `nav.set` of a root-tree stack as it is in the model.
    mutating func setStack(_ i: Int) {
        open("nav.set")
        field("nav", ref: navs[i].nav)
        let stack = navs[i].stack
        field("vcs", refs: stack)
        if rng.chance(0.5) { field("animated", bool: false) }
        close()
    }

    /// The session's last action: usually to the background, where it ends later; else it ends now.
    mutating func finish() {
        let r = rng.unit()
        if r < 0.72 {
            open("app.background", after: 0)
            close()
            phase = .background
            endInBackground = true
        } else {
            end(reason: rng.chance(0.95) ? (r < 0.9 ? "terminated" : "crash") : nil)
        }
    }

    /// Writes `session.end`, with `reason` when there is one, and ends the session.
    mutating func end(reason: StaticString?) {
        open("session.end", after: 0)
        if let reason {
            out.key("reason")
            out.string(reason)
        }
        close()
        phase = .ended
    }

    static let phones: [StaticString] = [
        "iPhone12,8", "iPhone14,5", "iPhone14,7", "iPhone15,2", "iPhone15,4", "iPhone16,1", "iPhone16,2", "iPhone17,1",
        "iPhone17,3",
    ]
    static let pads: [StaticString] = ["iPad12,1", "iPad13,18", "iPad14,3", "iPad14,8", "iPad16,3", "iPad16,5"]
    static let phoneSystems: [StaticString] = ["iOS 26.1", "iOS 26.0.1", "iOS 18.7.2", "iOS 18.6.2", "iOS 17.7.10"]
    static let padSystems: [StaticString] = ["iPadOS 26.1", "iPadOS 26.0.1", "iPadOS 18.7.2", "iPadOS 17.7.10"]

    mutating func background() {
        open("app.background")
        close()
        phase = .background
        endInBackground = rng.chance(0.05)
    }
}
