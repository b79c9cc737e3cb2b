import NavlogEvents
import NavlogReplay
import NavlogStoryboard
import NavlogWorkload

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
            event.string("reason", chance(0.5) ? "user" : "terminated")
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
        event.string("name", "idle")
        end(&event)
        _ = flush(&tools)
        return output
    }

    mutating func end(_ event: inout EventLineBuilder) {
        pending.append(event.finish())
    }

    /// session.start, the initial view controller as the window's root, its first appearance.
    mutating func start(_ tools: inout SimulationTools) {
        var event = begin("session.start", gap: 0)
        event.string("app", app.storyboards[0].name)
        event.string("version", "1.\(pick(4)).\(pick(10))")
        event.string("os", idiom == "pad" ? "iPadOS 18.1" : "iOS 18.1")
        event.string("device", idiom == "pad" ? "iPad14,3" : "iPhone16,2")
        event.string("idiom", idiom)
        event.json("traits", Array((compact ? #"{"h":"compact","v":"regular"}"# : #"{"h":"regular","v":"regular"}"#).utf8))
        end(&event)
        let (storyboard, scene) = app.initialScene
        let root = instantiate(storyboard, scene)
        var rootEvent = begin("window.root")
        rootEvent.string("window", "main")
        rootEvent.json("vc", reference(root))
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
        if let oldIndex {
            var event = begin("vc.disappear")
            event.json("vc", reference(oldIndex))
            event.string("phase", "will")
            end(&event)
        }
        if let newIndex {
            var event = begin("vc.appear")
            event.json("vc", reference(newIndex))
            event.string("phase", "will")
            end(&event)
        }
        nextTime(300_000 + Int64(random.next() % 150_000))
        if let oldIndex {
            var event = begin("vc.disappear")
            event.json("vc", reference(oldIndex))
            event.string("phase", "did")
            end(&event)
        }
        if let newIndex {
            var event = begin("vc.appear")
            event.json("vc", reference(newIndex))
            event.string("phase", "did")
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
            event.json("nav", reference(navIndex))
            event.bool("animated", true)
            end(&event)
        case .dismiss:
            guard replayer.focusPath.contains(where: { replayer.hierarchy[$0.index].placement == .presented }) else { return false }
            var event = begin("dismiss", gap: 0)
            event.json("vc", reference(focused))
            event.bool("animated", true)
            end(&event)
        case .selectTab:
            guard let tab = replayer.focusPath.last(where: { replayer.hierarchy[$0.index].items.count > 1 && replayer.controllers[$0].kind == .tab }),
                let tabIndex = controller(tab)
            else { return false }
            let count = replayer.hierarchy[tab.index].items.count
            let selected = Int(replayer.hierarchy[tab.index].selected)
            let target = chance(0.2) ? selected : (selected + 1 + pick(count - 1)) % count
            var event = begin("tab.select", gap: 0)
            event.json("tab", reference(tabIndex))
            event.integer("index", Int64(target))
            event.bool("byUser", true)
            end(&event)
        case .background:
            var event = begin("app.background", gap: 0)
            end(&event)
            foreground = false
        case .traits:
            compact.toggle()
            var event = begin("traits.change", gap: 0)
            event.string("h", compact ? "compact" : "regular")
            event.string("v", "regular")
            end(&event)
        case .mark:
            var event = begin("mark", gap: 0)
            event.string("name", ["viewed_item", "added_to_list", "shared", "searched", "refreshed"][pick(5)])
            event.json("props", Array(#"{"source":"simulated","count":\#(pick(20))}"#.utf8))
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
                var event = begin("segue")
                event.string("kind", segue.kind)
                if let identifier = segue.identifier { event.string("identifier", identifier) }
                event.json("source", reference(source))
                if let destination { event.json("destination", reference(destination)) }
                event.string("phase", phase)
                if phase == "should" { event.bool("result", true) }
                end(&event)
            }
        }
        var event = begin("segue")
        event.string("kind", segue.kind)
        if let identifier = segue.identifier { event.string("identifier", identifier) }
        event.json("source", reference(source))
        if let destination { event.json("destination", reference(destination)) }
        if let style = segue.presentationStyle, Self.presentationStyles.contains(style) { event.string("style", style) }
        if let transition = segue.transitionStyle, Self.transitionStyles.contains(transition) { event.string("transition", transition) }
        if segue.kind == "popoverPresentation" || segue.kind == "popover" {
            var anchor: [UInt8] = Array("{".utf8)
            if let item = segue.anchorBarButtonItemID {
                anchor += Array("\"barButtonItem\":".utf8)
                EventJSONWriter.appendString(item, to: &anchor)
            } else {
                anchor += Array("\"sourceView\":".utf8)
                EventJSONWriter.appendString(segue.anchorViewID ?? "simulatedSourceView", to: &anchor)
            }
            anchor.append(UInt8(ascii: "}"))
            event.json("anchor", anchor)
        }
        if let action = segue.unwindAction { event.string("action", action) }
        if segue.kind == "unwind" && segue.unwindAction == nil { return false }
        event.bool("animated", segue.animates)
        let performSequence = sequence
        end(&event)
        let (anomalies, resolution) = flush(&tools)
        guard anomalies.isEmpty else { return false }
        if segue.kind == "custom", let destination {
            // R18: a custom segue does what its perform() does; this app's custom segues push
            // or present, as most do, so the next event is that operation.
            let nav = replayer.focusPath.last { isNavigation($0) }.flatMap(controller)
            var operation = begin(nav == nil ? "present" : "nav.push")
            if let nav {
                operation.json("nav", reference(nav))
                operation.json("vc", reference(destination))
            } else {
                operation.json("from", reference(source))
                operation.json("vc", reference(destination))
                operation.string("style", "fullScreen")
            }
            operation.bool("animated", true)
            end(&operation)
        } else if let resolution, chance(0.3) {
            confirm(resolution, cause: performSequence)
        }
        return true
    }

    /// The operation event that carries out an intent, with `cause` (it confirms, R15–R17).
    mutating func confirm(_ resolution: Resolution, cause: UInt64) {
        func index(_ handle: ControllerHandle) -> Int? { controller(handle) }
        switch resolution {
        case .push(let container, let vc):
            guard let nav = index(container), let pushed = index(vc) else { return }
            var event = begin("nav.push")
            event.json("nav", reference(nav))
            event.json("vc", reference(pushed))
            event.integer("cause", Int64(cause))
            end(&event)
        case .present(let presenter, let vc, let style, _):
            guard let from = index(presenter), let presented = index(vc) else { return }
            var event = begin("present")
            event.json("from", reference(from))
            event.json("vc", reference(presented))
            event.string("style", style.name)
            event.integer("cause", Int64(cause))
            end(&event)
        case .setSecondary(let container, let vc):
            guard let split = index(container), let detail = index(vc) else { return }
            var event = begin("split.set")
            event.json("split", reference(split))
            event.json("secondary", reference(detail))
            event.integer("cause", Int64(cause))
            end(&event)
        default:
            break
        }
    }
}
