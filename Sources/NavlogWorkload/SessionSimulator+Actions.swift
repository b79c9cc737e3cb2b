// Choosing the user's next action from what the focused screen allows, with weights, and doing it.

extension SessionSimulator {
    /// A user (or app) action.
    enum Action {
        case push, pop, interactivePop, popToRoot, popTo, setStack, selectTab, present, presentAlert, dismiss
        case interactiveDismiss, unwind, mark, background, changeTraits, showDetail, swapChild
    }

    /// Writes one user action: the actions the session's state allows are offered with weights,
    /// one is drawn and done.
    mutating func act() {
        menu.removeAll(keepingCapacity: true)
        weights.removeAll(keepingCapacity: true)
        if let last = contexts.indices.last {
            offerInPresentation(contexts[last])
        } else {
            offerInRootTree()
        }
        let choice = drawAction()
        lastAction = choice
        perform(choice)
    }

    /// Puts `action` on the menu with `weight`.
    private mutating func offer(_ action: Action, _ weight: Int) {
        menu.append(action)
        weights.append(weight)
    }

    /// The actions on a presented screen: dismissing it (or swiping a sheet down), an unwind back
    /// to the root tree, pushes and pops in a presented navigation controller, presenting more.
    private mutating func offerInPresentation(_ context: Presentation) {
        let canUnwind =
            contexts.count == 1 && shape != .split && context.kind != .alert
            && classes[classOf(rootFocus)].unwindAction.utf8CodeUnitCount > 0
        switch context.kind {
        case .alert:
            offer(.dismiss, 100)
        case .plain:
            offer(.dismiss, 40)
            if context.style.isSheet { offer(.interactiveDismiss, 12) }
            if canUnwind { offer(.unwind, 14) }
            offer(.mark, 10)
            if contexts.count < 3 { offer(.presentAlert, 4) }
        case .navigation:
            let depth = context.nav.stack.count
            let topClass = classOf(context.nav.stack[depth - 1])
            if depth < 5 && catalog.presentables[context.presentable].pushes.contains(where: { $0 != topClass }) {
                offer(.push, 30)
            }
            if depth >= 2 {
                offer(.pop, 14)
                offer(.interactivePop, 5)
            }
            offer(.dismiss, 14)
            if context.style.isSheet { offer(.interactiveDismiss, 5) }
            if canUnwind { offer(.unwind, 10) }
            offer(.mark, 8)
            if contexts.count < 3 { offer(.presentAlert, 4) }
            if contexts.count < 2 { offer(.present, 1) }
        }
        offer(.background, 2)
        offer(.changeTraits, isPad ? (horizontalCompact ? 4 : 1) : 0)
    }

    /// The actions in the window's tree: its stack's pushes and pops (a collapsed split view's
    /// detail screens too), tabs, presentations, marks, size classes, swapping an embedded child.
    private mutating func offerInRootTree() {
        let depth = navs[shape == .tabs ? selectedTab : 0].stack.count
        if shape == .split && collapsed {
            offer(.showDetail, 10)
            if depth - secondaryStart >= 2 {
                offer(.pop, 14)
                offer(.interactivePop, 5)
            }
        } else {
            if depth < 8 { offer(.push, shape == .split ? 8 : 34) }
            if depth >= 2 {
                offer(.pop, 16)
                offer(.interactivePop, 6)
            }
            if depth >= 3 { offer(.popToRoot, 3) }
            if depth >= 4 { offer(.popTo, 3) }
            offer(.setStack, 1)
            if shape == .split { offer(.showDetail, 26) }
        }
        if shape == .tabs { offer(.selectTab, 13) }
        offer(.present, 9)
        offer(.presentAlert, 3)
        offer(.mark, 9)
        offer(.background, 2)
        // A compact iPad window (Slide Over, a narrow Split View) is usually made wide again soon.
        offer(.changeTraits, isPad ? (horizontalCompact ? 14 : 3) : 1)
        let focus = rootFocus
        if classes[classOf(focus)].embeds.count > 1 && ctlChild[Int(focus)] >= 0 { offer(.swapChild, 8) }
    }

    /// One action of the menu, drawn with the weights.
    private mutating func drawAction() -> Action {
        var total = 0
        for w in weights { total += w }
        var r = rng.below(total)
        for (i, w) in weights.enumerated() {
            if r < w { return menu[i] }
            r -= w
        }
        return menu[0]
    }

    /// Writes the events of `action` and changes the model.
    private mutating func perform(_ action: Action) {
        switch action {
        case .push: push()
        case .pop: pop(interactive: false)
        case .interactivePop: pop(interactive: true)
        case .popToRoot: popToRoot()
        case .popTo: popTo()
        case .setStack: replaceStack()
        case .selectTab: selectTab()
        case .present: present()
        case .presentAlert: presentAlert()
        case .dismiss: dismiss(interactive: false)
        case .interactiveDismiss: dismiss(interactive: true)
        case .unwind: unwind()
        case .mark: mark()
        case .background: background()
        case .changeTraits: changeTraits()
        case .showDetail: showDetail()
        case .swapChild: swapChild()
        }
    }
}
