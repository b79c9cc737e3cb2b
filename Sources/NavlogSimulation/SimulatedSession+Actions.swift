import NavlogJSON
import NavlogReplay
import NavlogStoryboard

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a user (or the app) does next.
enum SimulatedAction {
    case segue(StoryboardSegue)
    case back
    case dismiss
    case selectTab
    case background
    case traits
    case mark
}

extension SimulatedSession {
    static let presentationStyles: Set<String> = [
        "fullScreen", "pageSheet", "formSheet", "currentContext", "overFullScreen", "overCurrentContext", "popover", "custom", "automatic",
    ]
    static let transitionStyles: Set<String> = ["coverVertical", "flipHorizontal", "crossDissolve", "partialCurl"]

    mutating func chance(_ probability: Double) -> Bool { Double(random.next() >> 11) / Double(1 << 53) < probability }

    mutating func pick(_ count: Int) -> Int { Int(random.next() % UInt64(max(count, 1))) }

    /// A think time: exponential with the given mean (µs), capped at ten means.
    mutating func thinkTime(mean: Double) -> Int64 {
        let uniform = max(Double(random.next() >> 11) / Double(1 << 53), 1e-9)
        return Int64(min(-log(uniform) * mean, mean * 10))
    }

    /// The next lines of the session (one user action, or its start or end), applied to the engine.
    mutating func step(_ tools: inout SimulationTools, misuseRate: Double) -> [[UInt8]] {
        output.removeAll()
        if sequence == 0 {
            start(&tools)
            return output
        }
        if !foreground {
            var event = begin("app.foreground", gap: thinkTime(mean: 20_000_000))
            foreground = true
            end(&event)
            _ = flush(&tools)
            return output
        }
        if actionsLeft <= 0 {
            var event = begin("session.end", gap: thinkTime(mean: 3_000_000))
            event.member("reason", chance(0.5) ? "user" : "terminated")
            end(&event)
            _ = flush(&tools)
            ended = true
            return output
        }
        actionsLeft -= 1
        if misuseRate > 0, chance(misuseRate), injectMisuse(&tools) { return output }
        for _ in 0..<8 {
            var trial = self
            if trial.perform(chooseAction(), &tools) {
                self = trial
                return output
            }
        }
        var event = begin("mark", gap: thinkTime(mean: 2_000_000))
        event.member("name", "idle")
        end(&event)
        _ = flush(&tools)
        return output
    }

    mutating func end(_ event: inout JSONWriter) {
        event.raw("}\n")
        pending.append(event.bytes)
    }

    /// session.start, the initial view controller as the window's root, its first appearance.
    mutating func start(_ tools: inout SimulationTools) {
        var event = begin("session.start", gap: 0)
        event.member("app", app.storyboards[0].name)
        event.member("version", "1.\(pick(4)).\(pick(10))")
        event.member("os", idiom == "pad" ? "iPadOS 18.1" : "iOS 18.1")
        event.member("device", idiom == "pad" ? "iPad14,3" : "iPhone16,2")
        event.member("idiom", idiom)
        event.member("traits", json: Array((compact ? #"{"h":"compact","v":"regular"}"# : #"{"h":"regular","v":"regular"}"#).utf8))
        end(&event)
        let (storyboard, scene) = app.initialScene
        let root = instantiate(storyboard, scene)
        var rootEvent = begin("window.root")
        rootEvent.member("window", "main")
        rootEvent.member("vc", json: reference(root))
        end(&rootEvent)
        _ = flush(&tools)
        appear(nil)
        loadEmbeds()
        _ = flush(&tools)
    }

    /// Appearance callbacks for a change of focus from `old` (R20): old will-disappear, new
    /// will-appear, then, an animation later, both dids.
    mutating func appear(_ old: ControllerHandle?) {
        let new = replayer.focus
        guard new != old else { return }
        let oldIndex = old.flatMap(controller), newIndex = new.flatMap(controller)
        appearance(disappearing: oldIndex, appearing: newIndex, phase: "will")
        nextTime(300_000 + Int64(random.next() % 150_000))
        appearance(disappearing: oldIndex, appearing: newIndex, phase: "did")
    }

    /// One phase of the appearance callbacks: `vc.disappear` of `disappearing`, then `vc.appear`
    /// of `appearing` (each when there is one).
    private mutating func appearance(disappearing: Int?, appearing: Int?, phase: String) {
        for (type, index) in [("vc.disappear", disappearing), ("vc.appear", appearing)] {
            guard let index else { continue }
            var event = begin(type)
            event.member("vc", json: reference(index))
            event.member("phase", phase)
            end(&event)
        }
    }

    /// What the user can do on the focused screen, chosen with weights.
    mutating func chooseAction() -> SimulatedAction {
        let focusPath = replayer.focusPath
        var segues: [StoryboardSegue] = []
        if let focus = focusPath.last, let index = controller(focus) {
            let owner = controllers[index]
            segues = app.segues(from: owner.storyboard, owner.sceneID).filter { $0.kind != "relationship" && $0.kind != "embed" }
        }
        let roll = pick(100)
        if !segues.isEmpty && roll < 55 { return .segue(segues[pick(segues.count)]) }
        if roll < 72 { return .back }
        if roll < 82 { return .dismiss }
        if roll < 90 { return .selectTab }
        if roll < 93 { return .background }
        if roll < 96, idiom == "pad" { return .traits }
        return .mark
    }

    /// Emits and applies `action`; false when it does not apply here or UIKit would object.
    mutating func perform(_ action: SimulatedAction, _ tools: inout SimulationTools) -> Bool {
        nextTime(thinkTime(mean: 3_500_000))
        let baseline = replayer.anomalies.count
        let old = replayer.focus
        guard let focus = old, let focused = controller(focus) else { return false }
        switch action {
        case .segue(let segue):
            guard performSegue(segue, from: focused, &tools) else { return false }
        case .back:
            guard let nav = replayer.focusPath.last(where: { replayer.hierarchy[$0.index].items.count > 1 && isNavigation($0) }),
                let navIndex = controller(nav)
            else { return false }
            var event = begin("nav.pop", gap: 0)
            event.member("nav", json: reference(navIndex))
            event.member("animated", true)
            end(&event)
        case .dismiss:
            guard replayer.focusPath.contains(where: { replayer.hierarchy[$0.index].placement == .presented }) else { return false }
            var event = begin("dismiss", gap: 0)
            event.member("vc", json: reference(focused))
            event.member("animated", true)
            end(&event)
        case .selectTab:
            guard let tab = replayer.focusPath.last(where: { replayer.hierarchy[$0.index].items.count > 1 && replayer.controllers[$0].kind == .tab }),
                let tabIndex = controller(tab)
            else { return false }
            let count = replayer.hierarchy[tab.index].items.count
            let selected = Int(replayer.hierarchy[tab.index].selected)
            let target = chance(0.2) ? selected : (selected + 1 + pick(count - 1)) % count
            var event = begin("tab.select", gap: 0)
            event.member("tab", json: reference(tabIndex))
            event.member("index", Int64(target))
            event.member("byUser", true)
            end(&event)
        case .background:
            var event = begin("app.background", gap: 0)
            end(&event)
            foreground = false
        case .traits:
            compact.toggle()
            var event = begin("traits.change", gap: 0)
            event.member("h", compact ? "compact" : "regular")
            event.member("v", "regular")
            end(&event)
        case .mark:
            var event = begin("mark", gap: 0)
            event.member("name", ["viewed_item", "added_to_list", "shared", "searched", "refreshed"][pick(5)])
            event.member("props", json: Array(#"{"source":"simulated","count":\#(pick(20))}"#.utf8))
            end(&event)
        }
        guard flush(&tools).anomalies.isEmpty else { return false }
        appear(old)
        loadEmbeds()
        _ = flush(&tools)
        return replayer.anomalies.count == baseline
    }

    func isNavigation(_ handle: ControllerHandle) -> Bool { replayer.controllers[handle].kind == .navigation }

    /// A storyboard segue from the focused controller: the destination is instantiated (with
    /// its container contents), then should/prepare (sometimes), perform, and for some sessions
    /// the operation that carries it out with `cause`.
    mutating func performSegue(_ segue: StoryboardSegue, from source: Int, _ tools: inout SimulationTools) -> Bool {
        var destination: Int?
        if segue.kind != "unwind" {
            guard let target = segue.destinationID, let scene = app.scenes[controllers[source].storyboard][target] else { return false }
            destination = instantiate(controllers[source].storyboard, scene)
        }
        if chance(0.4) {
            for phase in ["should", "prepare"] {
                var event = beginSegue(segue, from: source, to: destination)
                event.member("phase", phase)
                if phase == "should" { event.member("result", true) }
                end(&event)
            }
        }
        var event = beginSegue(segue, from: source, to: destination)
        if let style = segue.presentationStyle, Self.presentationStyles.contains(style) { event.member("style", style) }
        if let transition = segue.transitionStyle, Self.transitionStyles.contains(transition) { event.member("transition", transition) }
        if segue.kind == "popoverPresentation" || segue.kind == "popover" {
            event.key("anchor")
            if let item = segue.anchorBarButtonItemID {
                event.raw("{\"barButtonItem\":")
                event.string(item)
            } else {
                event.raw("{\"sourceView\":")
                event.string(segue.anchorViewID ?? "simulatedSourceView")
            }
            event.raw("}")
        }
        if let action = segue.unwindAction { event.member("action", action) }
        if segue.kind == "unwind" && segue.unwindAction == nil { return false }
        event.member("animated", segue.animates)
        let performSequence = sequence
        end(&event)
        let (anomalies, resolution) = flush(&tools)
        guard anomalies.isEmpty else { return false }
        if segue.kind == "custom", let destination {
            carryOutCustomSegue(from: source, to: destination)
        } else if let resolution, chance(0.3) {
            confirm(resolution, cause: performSequence)
        }
        return true
    }

    /// A `segue` event of `segue` from `source` (to `destination`, unless it unwinds), its
    /// phase and details left for the caller to write.
    private mutating func beginSegue(_ segue: StoryboardSegue, from source: Int, to destination: Int?) -> JSONWriter {
        var event = begin("segue")
        event.member("kind", segue.kind)
        if let identifier = segue.identifier { event.member("identifier", identifier) }
        event.member("source", json: reference(source))
        if let destination { event.member("destination", json: reference(destination)) }
        return event
    }

    /// R18: a custom segue does what its perform() does; this app's custom segues push or
    /// present, as most do, so the next event is that operation.
    private mutating func carryOutCustomSegue(from source: Int, to destination: Int) {
        let nav = replayer.focusPath.last { isNavigation($0) }.flatMap(controller)
        var operation = begin(nav == nil ? "present" : "nav.push")
        if let nav {
            operation.member("nav", json: reference(nav))
            operation.member("vc", json: reference(destination))
        } else {
            operation.member("from", json: reference(source))
            operation.member("vc", json: reference(destination))
            operation.member("style", "fullScreen")
        }
        operation.member("animated", true)
        end(&operation)
    }

    /// The operation event that carries out an intent, with `cause` (it confirms, R15–R17): a
    /// push, a presentation or a new secondary column, as the intent resolved.
    mutating func confirm(_ resolution: Resolution, cause: UInt64) {
        let type: String, ownerKey: StaticString, owner: ControllerHandle, shownKey: StaticString, shown: ControllerHandle
        var style: String?
        switch resolution {
        case .push(let container, let vc): (type, ownerKey, owner, shownKey, shown) = ("nav.push", "nav", container, "vc", vc)
        case .present(let presenter, let vc, let presented, _):
            (type, ownerKey, owner, shownKey, shown) = ("present", "from", presenter, "vc", vc)
            style = presented.name
        case .setSecondary(let container, let vc): (type, ownerKey, owner, shownKey, shown) = ("split.set", "split", container, "secondary", vc)
        default: return
        }
        guard let ownerIndex = controller(owner), let shownIndex = controller(shown) else { return }
        var event = begin(type)
        event.member(ownerKey, json: reference(ownerIndex))
        event.member(shownKey, json: reference(shownIndex))
        if let style { event.member("style", style) }
        event.member("cause", Int64(cause))
        end(&event)
    }
}
