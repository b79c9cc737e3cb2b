import NavlogJSON

// Presentations: modal styles, popovers and alerts, dismissals (some interactive, some
// cancelled) and unwind segues (R17).

extension SessionSimulator {
    mutating func present() {
        let from: Int32
        if contexts.isEmpty && shape == .split && !collapsed && rng.chance(0.3) {
            from = navs[0].stack[navs[0].stack.count - 1]
        } else {
            from = focusedScreen
        }
        let which = rng.below(catalog.presentables.count)
        let p = catalog.presentables[which]
        var style = isPad ? p.padStyle : p.phoneStyle
        if style == .pageSheet && rng.chance(0.1) { style = .automatic }
        let root: Int32
        var content: Int32 = -1
        if p.inNavigation {
            root = make(Vocabulary.navigation)
            content = make(p.content)
        } else {
            root = make(p.content)
        }
        let anchorSpec: AnchorSpec? = style == .popover ? p.anchor : nil
        var transition = p.transition
        if transition.utf8CodeUnitCount == 0 && style != .popover && rng.chance(0.1) { transition = "coverVertical" }
        let animated = rng.chance(0.95)
        snapshot()
        var cause: UInt64 = 0
        if p.segue.utf8CodeUnitCount > 0 && rng.chance(0.55) {
            let legacy = rng.chance(0.06)
            let kind: StaticString =
                style == .popover
                ? (legacy ? "popover" : "popoverPresentation") : (legacy ? "modal" : "presentation")
            guard
                segueShouldAndPrepare(
                    kind: kind, source: from, identifier: p.segue, destination: root, asked: 0.25, refused: 0.08, prepared: 0.6)
            else { return }
            cause = segue(
                kind: kind, source: from, identifier: p.segue, destination: root, phase: "perform",
                style: rng.chance(0.7) ? style : nil, transition: transition, anchor: anchorSpec, animated: animated)
        }
        open("present")
        field("from", ref: from)
        field("vc", ref: root)
        field("style", plain: style.name)
        if transition.utf8CodeUnitCount > 0 { field("transition", plain: transition) }
        animatedField(animated)
        if let anchorSpec { anchor(anchorSpec) }
        close(cause: cause)
        contexts.append(
            Presentation(
                root: root, kind: p.inNavigation ? .navigation : .plain, nav: NavStack(nav: root, stack: []),
                style: style, presentable: which))
        if p.inNavigation {
            open("nav.set")
            field("nav", ref: root)
            field("vcs", refs: CollectionOfOne(content))
            field("animated", bool: false)
            close()
            contexts[contexts.count - 1].nav.stack.append(content)
        }
        appearance(animated: animated)
    }

    mutating func presentAlert() {
        let from = focusedScreen
        let sheet = rng.chance(0.3)
        let title =
            sheet
            ? catalog.sheetTitles[rng.below(catalog.sheetTitles.count)]
            : catalog.alertTitles[rng.below(catalog.alertTitles.count)]
        let alert = make(Vocabulary.alert, title: title)
        snapshot()
        open("present")
        field("from", ref: from)
        field("vc", ref: alert)
        if rng.chance(0.2) { field("style", plain: sheet && isPad ? "popover" : "automatic") }
        field("animated", bool: true)
        field("alertStyle", plain: sheet ? "actionSheet" : "alert")
        if sheet && (isPad || rng.chance(0.2)) {
            anchor(rng.chance(0.5) ? .barButton("actionButton") : .sourceView("moreButton"))
        }
        close()
        contexts.append(
            Presentation(
                root: alert, kind: .alert, nav: NavStack(nav: -1, stack: []), style: .automatic, presentable: -1))
        appearance(animated: true)
    }

    mutating func dismiss(interactive: Bool) {
        let i = contexts.count - 1
        let context = contexts[i]
        snapshot()
        if interactive {
            interactiveDismiss(i)
            return
        }
        // The receiver: the presented controller itself, or a screen inside it (R7 walks up).
        let receiver = context.kind == .navigation && rng.chance(0.35) ? contentTop(i) : context.root
        let animated = rng.chance(0.95)
        open("dismiss")
        field("vc", ref: receiver)
        animatedField(animated)
        close()
        contexts.removeLast()
        appearance(animated: animated)
    }

    /// A sheet swiped down: the dismissal of presentation `i` is an interactive transition,
    /// which the user sometimes cancels.
    private mutating func interactiveDismiss(_ i: Int) {
        let number = beginInteractiveTransition("dismiss")
        open("dismiss")
        field("vc", ref: contexts[i].root)
        field("animated", bool: true)
        close()
        if rng.chance(0.3) {
            // The sheet springs back: the dismissal is rolled back (R19); the presented
            // screen's will-disappear is reversed by its will- and did-appear (E5, E6).
            noteCancelledGesture()
            let shown = contentTop(i)
            appearance("vc.disappear", shown, will: true, animated: true, delay: quick())
            endInteractiveTransition("dismiss", number, completed: false, after: Int64(rng.between(150_000, 900_000)))
            appearance("vc.appear", shown, will: true, animated: true, delay: quick())
            appearance("vc.appear", shown, will: false, animated: true, delay: quick())
            return
        }
        contexts.removeLast()
        completeInteractiveTransition("dismiss", number)
    }

    /// An unwind segue from the presented screen back to the screen that presented it (R17).
    mutating func unwind() {
        let source = contentTop(contexts.count - 1)
        let target = rootFocus
        let targetClass = classOf(target)
        let action = classes[targetClass].unwindAction
        snapshot()
        if rng.chance(0.7) {
            segue(
                kind: "unwind", source: source, identifier: classes[targetClass].unwindSegue, destination: target,
                phase: "prepare", action: action)
        }
        open("unwind")
        field("source", ref: source)
        out.key("action")
        out.string(action)
        if rng.chance(0.6) { field("target", ref: target) }
        close()
        contexts.removeAll(keepingCapacity: true)
        appearance(animated: true)
    }
}
