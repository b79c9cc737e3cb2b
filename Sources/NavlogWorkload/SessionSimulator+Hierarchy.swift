// The session's model of the view-controller hierarchy: controllers by handle, the root
// tree's navigation stacks, tabs and split view, the presentations above it, and what of it
// is visible and focused (F1).

extension SessionSimulator {
    /// The app's root container.
    enum Shape { case tabs, split, navigation }

    /// What a presentation shows.
    enum ContextKind { case plain, navigation, alert }

    /// A navigation controller and its stack (bottom first).
    struct NavStack {
        var nav: Int32
        var stack: [Int32]
    }

    /// One live presentation (a context root above the window's tree).
    struct Presentation {
        var root: Int32
        var kind: ContextKind
        var nav: NavStack
        var style: PresentationStyle
        var presentable: Int
    }

    /// A navigation stack: one of the root tree's (`tab index`, or 0) or a presented one.
    enum NavLocation {
        case root(Int)
        case presented(Int)
    }

    /// A new controller of class `classIndex`.
    mutating func make(_ classIndex: Int, title: StaticString = "") -> Int32 {
        nextAddress &+= UInt64(rng.between(1, 320)) &* 16
        ctlAddress.append(nextAddress)
        ctlClass.append(Int32(classIndex))
        ctlMentioned.append(false)
        ctlLoaded.append(false)
        ctlChild.append(-1)
        ctlTitle.append(title)
        return Int32(ctlAddress.count - 1)
    }

    /// The class of a controller.
    @inline(__always)
    func classOf(_ handle: Int32) -> Int { Int(ctlClass[Int(handle)]) }

    /// The navigation stack at `location`.
    func nav(_ location: NavLocation) -> NavStack {
        switch location {
        case .root(let i): navs[i]
        case .presented(let i): contexts[i].nav
        }
    }

    /// Changes the stack at `location`.
    mutating func modifyStack(_ location: NavLocation, _ body: (inout [Int32]) -> Void) {
        switch location {
        case .root(let i): body(&navs[i].stack)
        case .presented(let i): body(&contexts[i].nav.stack)
        }
    }

    /// The stack the user is in: the top presentation's, or the root tree's.
    var activeNav: NavLocation? {
        if let last = contexts.indices.last {
            return contexts[last].kind == .navigation ? .presented(last) : nil
        }
        return .root(shape == .tabs ? selectedTab : 0)
    }

    /// The screen a presentation shows.
    func contentTop(_ i: Int) -> Int32 {
        contexts[i].kind == .navigation ? contexts[i].nav.stack[contexts[i].nav.stack.count - 1] : contexts[i].root
    }

    /// The focused screen of the window's tree (F1, ignoring presentations).
    var rootFocus: Int32 {
        switch shape {
        case .tabs: navs[selectedTab].stack[navs[selectedTab].stack.count - 1]
        case .navigation: navs[0].stack[navs[0].stack.count - 1]
        case .split: collapsed ? navs[0].stack[navs[0].stack.count - 1] : secondary
        }
    }

    /// The focused screen (F1).
    var focusedScreen: Int32 {
        if let last = contexts.indices.last { return contentTop(last) }
        return rootFocus
    }

    /// The screens that have appeared and not disappeared, in the order UIKit would call them.
    func collectVisible(into visible: inout [Int32]) {
        visible.removeAll(keepingCapacity: true)
        var i = contexts.count - 1
        while i >= 0 {
            visible.append(contentTop(i))
            if contexts[i].kind != .alert && contexts[i].style.hidesPresenter { return }
            i -= 1
        }
        switch shape {
        case .tabs:
            visible.append(navs[selectedTab].stack[navs[selectedTab].stack.count - 1])
        case .navigation:
            visible.append(navs[0].stack[navs[0].stack.count - 1])
        case .split:
            visible.append(navs[0].stack[navs[0].stack.count - 1])
            if !collapsed { visible.append(secondary) }
        }
    }
}
