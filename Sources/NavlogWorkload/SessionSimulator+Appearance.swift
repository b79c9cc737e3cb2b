import NavlogJSON

// Appearance callbacks derived from the visible screens before and after a change, so that
// they always balance (R20), and the interactive transitions (swipes) they can be part of.

extension SessionSimulator {
    /// Records what is visible before a change.
    mutating func snapshot() {
        var v: [Int32] = []
        swap(&v, &visibleBefore)
        collectVisible(into: &v)
        swap(&v, &visibleBefore)
    }

    /// After a change: loads newly shown screens (their embed segues) and writes the `will` callbacks.
    mutating func beginAppearance(animated: Bool) {
        var after: [Int32] = []
        swap(&after, &visibleAfter)
        collectVisible(into: &after)
        var g: [Int32] = []
        swap(&g, &gone)
        var c: [Int32] = []
        swap(&c, &came)
        g.removeAll(keepingCapacity: true)
        c.removeAll(keepingCapacity: true)
        for x in visibleBefore where !after.contains(x) { g.append(x) }
        for x in after where !visibleBefore.contains(x) { c.append(x) }
        for x in c where !ctlLoaded[Int(x)] {
            ctlLoaded[Int(x)] = true
            loadEmbeds(x)
        }
        for x in g { appearance("vc.disappear", x, will: true, animated: animated, delay: quick()) }
        for x in c { appearance("vc.appear", x, will: true, animated: animated, delay: quick()) }
        swap(&after, &visibleAfter)
        swap(&g, &gone)
        swap(&c, &came)
    }

    /// Writes the `did` callbacks matching the last ``beginAppearance(animated:)``.
    mutating func endAppearance(animated: Bool) {
        var delay = appearanceGap(animated: animated)
        var g: [Int32] = []
        swap(&g, &gone)
        var c: [Int32] = []
        swap(&c, &came)
        for x in g {
            appearance("vc.disappear", x, will: false, animated: animated, delay: delay)
            delay = quick()
        }
        for x in c {
            appearance("vc.appear", x, will: false, animated: animated, delay: delay)
            delay = quick()
        }
        g.removeAll(keepingCapacity: true)
        c.removeAll(keepingCapacity: true)
        swap(&g, &gone)
        swap(&c, &came)
    }

    /// Both halves, for changes that are not interactive.
    mutating func appearance(animated: Bool) {
        beginAppearance(animated: animated)
        endAppearance(animated: animated)
    }

    mutating func appearance(_ type: StaticString, _ vc: Int32, will: Bool, animated: Bool, delay: Int64) {
        open(type, after: delay)
        openIsWill = will
        field("vc", ref: vc)
        field("phase", plain: will ? "will" : "did")
        animatedField(animated)
        close()
    }

    // MARK: - Interactive transitions

    /// Writes the `transition.begin` of a new interactive transition (`pop-N`, `dismiss-N`).
    /// - Returns: its number.
    mutating func beginInteractiveTransition(_ prefix: StaticString) -> UInt64 {
        transitionCounter += 1
        open("transition.begin")
        transitionID(prefix, transitionCounter)
        field("interactive", bool: true)
        close()
        return transitionCounter
    }

    /// Writes the `transition.end` of interactive transition `number`, `delay` after the last event.
    mutating func endInteractiveTransition(_ prefix: StaticString, _ number: UInt64, completed: Bool, after delay: Int64) {
        open("transition.end", after: delay)
        transitionID(prefix, number)
        field("interactive", bool: true)
        field("completed", bool: completed)
        close()
    }

    /// Once the model has changed: the `will` callbacks, the transition's completed end, the `did` callbacks.
    mutating func completeInteractiveTransition(_ prefix: StaticString, _ number: UInt64) {
        beginAppearance(animated: true)
        endInteractiveTransition(prefix, number, completed: true, after: Int64(rng.between(150_000, 900_000)))
        endAppearance(animated: false)
    }
}
