import NavlogJSON

// Navigation stacks: pushes (after a segue or a `show` intent), pops (some interactive, some
// cancelled), popping to a screen or the root, replacing the stack.

extension SessionSimulator {
    /// The class the user opens next from `source`.
    mutating func nextClass(from source: Int32, location: NavLocation) -> Int {
        let sourceClass = classOf(source)
        if case .presented(let i) = location {
            let pool = catalog.presentables[contexts[i].presentable].pushes
            let pick = pool[rng.below(pool.count)]
            return pick == sourceClass ? pool[(pool.firstIndex(of: pick)! + 1) % pool.count] : pick
        }
        let next = classes[sourceClass].next
        if !next.isEmpty && rng.chance(0.85) { return next[rng.below(next.count)] }
        var pick = catalog.pushes[rng.below(catalog.pushes.count)]
        if pick == sourceClass { pick = catalog.pushes[rng.below(catalog.pushes.count)] }
        return pick
    }

    mutating func push() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let source = stack.stack[stack.stack.count - 1]
        let vcClass = nextClass(from: source, location: location)
        let vc = make(vcClass)
        snapshot()
        var cause: UInt64 = 0
        let identifier = classes[vcClass].segue
        let animated = rng.chance(0.96)
        let r = rng.unit()
        if r < 0.5 && identifier.utf8CodeUnitCount > 0 {
            let legacy = rng.chance(0.04)
            let kind: StaticString = legacy ? "push" : "show"
            let segueClass: StaticString = rng.chance(0.1) ? (legacy ? "UIStoryboardPushSegue" : "UIStoryboardShowSegue") : ""
            guard
                segueShouldAndPrepare(
                    kind: kind, source: source, identifier: identifier, destination: vc, asked: 0.35, refused: 0.06, prepared: 0.8)
            else { return }
            cause = segue(
                kind: kind, source: source, identifier: identifier, destination: vc, phase: "perform",
                animated: rng.chance(0.5) ? animated : nil, segueClass: segueClass)
        } else if r < 0.62 {
            cause = intent("show", from: source, vc: vc)
        }
        open("nav.push")
        field("nav", ref: stack.nav)
        field("vc", ref: vc)
        animatedField(animated)
        close(cause: cause)
        modifyStack(location) { $0.append(vc) }
        appearance(animated: animated)
    }

    mutating func pop(interactive: Bool) {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let top = stack.stack[stack.stack.count - 1]
        snapshot()
        if interactive {
            interactivePop(location, stack)
            return
        }
        let animated = rng.chance(0.95)
        open("nav.pop")
        field("nav", ref: stack.nav)
        if rng.chance(0.5) { field("vc", ref: top) }
        animatedField(animated)
        close()
        modifyStack(location) { $0.removeLast() }
        appearance(animated: animated)
    }

    /// An edge swipe back: the pop is an interactive transition, which the user sometimes cancels.
    private mutating func interactivePop(_ location: NavLocation, _ stack: NavStack) {
        let top = stack.stack[stack.stack.count - 1]
        let number = beginInteractiveTransition("pop")
        open("nav.pop")
        field("nav", ref: stack.nav)
        if rng.chance(0.6) { field("vc", ref: top) }
        field("animated", bool: true)
        close()
        if rng.chance(0.22) {
            // The user lets go early: UIKit rolls the pop back (R19), with the reversed
            // callbacks: the revealed screen's will-appear then will- and did-disappear, the
            // covered one's will-disappear then will- and did-appear (E5, E6).
            noteCancelledGesture()
            let below = stack.stack[stack.stack.count - 2]
            appearance("vc.disappear", top, will: true, animated: true, delay: quick())
            appearance("vc.appear", below, will: true, animated: true, delay: quick())
            endInteractiveTransition("pop", number, completed: false, after: Int64(rng.between(120_000, 700_000)))
            appearance("vc.disappear", below, will: true, animated: true, delay: quick())
            appearance("vc.disappear", below, will: false, animated: true, delay: quick())
            appearance("vc.appear", top, will: true, animated: true, delay: quick())
            appearance("vc.appear", top, will: false, animated: true, delay: quick())
            return
        }
        modifyStack(location) { $0.removeLast() }
        completeInteractiveTransition("pop", number)
    }

    mutating func popToRoot() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        snapshot()
        let animated = rng.chance(0.9)
        open("nav.popToRoot")
        field("nav", ref: stack.nav)
        animatedField(animated)
        close()
        modifyStack(location) { $0.removeSubrange(1...) }
        appearance(animated: animated)
    }

    mutating func popTo() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let keep = rng.between(1, stack.stack.count - 2)  // index of the target, never the top
        snapshot()
        let animated = rng.chance(0.9)
        open("nav.popTo")
        field("nav", ref: stack.nav)
        field("vc", ref: stack.stack[keep])
        animatedField(animated)
        close()
        modifyStack(location) { $0.removeSubrange((keep + 1)...) }
        appearance(animated: animated)
    }

    /// `setViewControllers`: the app replaces the stack with its root and one fresh screen.
    mutating func replaceStack() {
        guard let location = activeNav else { return }
        let stack = nav(location)
        let vc = make(catalog.pushes[rng.below(catalog.pushes.count)])
        snapshot()
        let animated = rng.chance(0.7)
        open("nav.set")
        field("nav", ref: stack.nav)
        field("vcs", refs: [stack.stack[0], vc])
        animatedField(animated)
        close()
        modifyStack(location) {
            $0.removeSubrange(1...)
            $0.append(vc)
        }
        appearance(animated: animated)
    }
}
