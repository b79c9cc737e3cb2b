import NavlogEvents
import NavlogJSON
public import NavlogReplay
import NavlogStore
import NavlogStoryboard

/// Scratch buffers shared by every session of a simulation (never copied with a session).
struct SimulationTools {
    var parser = EventLineParser()
    var batch = EventBatch()
    var codec = InMemoryBlockCodec()
    var block = DecodedBlock()
}

/// An anomaly the simulator caused on purpose (misuse injection), for checking the replayer.
public struct InjectedMisuse: Sendable, Hashable {
    /// The session and the `seq` of the event that should raise it.
    public var session: String
    public var sequence: UInt64
    /// The code the replayer must report there.
    public var code: AnomalyCode
}

/// One simulated app launch: a random walk over the storyboard from the focused screen, with
/// the replay engine's own state telling what is on screen. Every action is tried on a copy
/// first (sessions are values) and kept only if the engine raises no anomaly — or, for an
/// injected misuse, exactly the one intended — so the events are valid UIKit by construction.
struct SimulatedSession {
    let app: StoryboardApp
    let id: String
    let idiom: String
    /// The session's random numbers: a generator started from its seed.
    var random: any RandomNumberGenerator
    /// The engine's view of the session, after every event emitted so far.
    var replayer = SessionReplayer()
    var controllers: [SimulatedController] = []
    var controllerByID: [String: Int] = [:]
    var embedsDone: Set<Int> = []
    var nextAddress: UInt64
    var sequence: UInt64 = 0
    /// Time of the next event (µs).
    var clock: Int64
    var foreground = true
    var compact: Bool
    /// Actions left before the session ends.
    var actionsLeft: Int
    var ended = false
    /// Lines emitted by the action being built, not yet applied to `replayer`.
    var pending: [[UInt8]] = []
    /// Lines of the action applied so far (the action's output once it is kept).
    var output: [[UInt8]] = []
    var injected: [InjectedMisuse] = []

    /// A session of `app` that starts at `start` and ends after `actions` user actions;
    /// `random` is a generator started from `seed`, which also places its controllers' addresses.
    init(app: StoryboardApp, id: String, idiom: String, seed: UInt64, random: any RandomNumberGenerator, start: Int64, actions: Int) {
        self.app = app
        self.id = id
        self.idiom = idiom
        self.random = random
        clock = start
        compact = idiom != "pad"
        actionsLeft = actions
        nextAddress = 0x6000_0000_0000 &+ (seed & 0xFFF_FFFF) << 12
    }

    // MARK: Emitting events

    mutating func nextTime(_ micros: Int64) {
        clock += max(1, micros)
    }

    /// A new event line (events.md) with its envelope written: `type`, `session`, `seq` (the
    /// next one), `ts`. The caller adds the event's fields (`member`) and hands it to `end`.
    mutating func begin(_ type: String, gap: Int64 = 1_200) -> JSONWriter {
        nextTime(gap + Int64(random.next() % 800))
        sequence += 1
        var event = JSONWriter()
        event.bytes.reserveCapacity(256)
        event.raw("{\"type\":")
        event.string(type)
        event.member("session", id)
        event.member("seq", sequence)
        event.member("ts", clock)
        return event
    }

    /// Closes the event line begun by ``begin(_:gap:)`` and queues it for ``flush(_:)``.
    mutating func end(_ event: consuming JSONWriter) {
        var event = event
        end(&event)
    }

    mutating func reference(_ index: Int) -> [UInt8] { controllers[index].reference() }

    /// Applies the pending lines to the engine; returns the anomalies they raised and the last
    /// event's resolution.
    @discardableResult
    mutating func flush(_ tools: inout SimulationTools) -> (anomalies: ArraySlice<Anomaly>, resolution: Resolution?) {
        let before = replayer.anomalies.count
        var resolution: Resolution?
        guard !pending.isEmpty else { return (replayer.anomalies[before...], nil) }
        tools.batch.removeAll()
        for (number, line) in pending.enumerated() {
            do {
                _ = try line.withUnsafeBytes { raw in
                    try tools.parser.parse(
                        UnsafeRawBufferPointer(rebasing: raw.dropLast()), lineNumber: number + 1, receivedAt: clock,
                        peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &tools.batch)
                }
            } catch {
                preconditionFailure("the simulator wrote an invalid event line (\(error)): \(String(decoding: line, as: UTF8.self))")
            }
        }
        do {
            try tools.codec.roundTrip(tools.batch, into: &tools.block)
        } catch {
            preconditionFailure("the in-memory block codec failed: \(error)")
        }
        for index in 0..<tools.block.count {
            let block = tools.block
            resolution = block.withBody(index) { body in
                replayer.apply(
                    ReplayEvent(type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: nil, body: body))
            }
        }
        output.append(contentsOf: pending)
        pending.removeAll()
        return (replayer.anomalies[before...], resolution)
    }

    // MARK: Controllers

    /// A new controller for `scene` (placeholders resolved), and the events that build its
    /// container contents (stack root, tabs, columns), all while it is not yet attached.
    mutating func instantiate(_ storyboard: Int, _ scene: StoryboardScene, depth: Int = 0) -> Int {
        let (resolvedStoryboard, resolved) = app.resolve(storyboard, scene) ?? (storyboard, scene)
        let index = makeController(resolvedStoryboard, resolved)
        guard depth < 6 else { return index }
        fillContainer(index, resolvedStoryboard, resolved, depth: depth)
        return index
    }

    /// A new controller for the resolved `scene` of `storyboard`, with a fresh address.
    private mutating func makeController(_ resolvedStoryboard: Int, _ resolved: StoryboardScene) -> Int {
        nextAddress &+= 0x40 &+ (random.next() % 0x10) &* 0x10
        let kind: String? =
            switch resolved.kind {
            case .navigation: "navigation"
            case .tab: "tab"
            case .split: "split"
            case .page: "page"
            case .alert: "alert"
            default: nil
            }
        // Unwind actions: the storyboard's own list for the class when it has one; else the
        // simulated app implements its storyboard's unwind actions in the controllers that
        // relationship segues put at the root of a stack, a tab or a column.
        var actions = resolved.unwindActions
        if actions.isEmpty, kind == nil, app.relationshipDestinations[resolvedStoryboard].contains(resolved.id) {
            actions = app.unwindActions[resolvedStoryboard].sorted()
        }
        let controller = SimulatedController(
            id: "0x" + String(nextAddress, radix: 16), storyboard: resolvedStoryboard, sceneID: resolved.id, className: resolved.className,
            storyboardID: resolved.storyboardID, title: resolved.title, kind: kind, definesContext: resolved.definesContext,
            unwindActions: actions.filter { $0.allSatisfy { !$0.isWhitespace } && !$0.isEmpty })
        controllers.append(controller)
        let index = controllers.count - 1
        controllerByID[controller.id] = index
        return index
    }

    /// The events that give container `index` (of the resolved `scene`) its contents, made by
    /// its relationship segues: a navigation controller's root, a tab bar's tabs, a split
    /// view's columns.
    private mutating func fillContainer(_ index: Int, _ resolvedStoryboard: Int, _ resolved: StoryboardScene, depth: Int) {
        let relationships = app.segues(from: resolvedStoryboard, resolved.id).filter { $0.kind == "relationship" }
        func destination(_ segue: StoryboardSegue) -> Int? {
            guard let target = segue.destinationID, let scene = app.scenes[resolvedStoryboard][target] else { return nil }
            // UIKit raises when a navigation controller is pushed (or made a stack root).
            if resolved.kind == .navigation, app.resolve(resolvedStoryboard, scene)?.scene.kind == .navigation { return nil }
            return instantiate(resolvedStoryboard, scene, depth: depth + 1)
        }
        switch resolved.kind {
        case .navigation:
            if let root = relationships.first(where: { $0.relationship == "rootViewController" }).flatMap(destination) {
                var event = begin("nav.set")
                event.member("nav", json: reference(index))
                event.member("vcs", json: "[".utf8 + reference(root) + "]".utf8)
                end(event)
            }
        case .tab:
            let tabs = relationships.filter { $0.relationship == "viewControllers" }.compactMap(destination)
            if !tabs.isEmpty {
                var event = begin("tab.set")
                event.member("tab", json: reference(index))
                var list: [UInt8] = [UInt8(ascii: "[")]
                for (number, tab) in tabs.enumerated() {
                    if number > 0 { list.append(UInt8(ascii: ",")) }
                    list.append(contentsOf: reference(tab))
                }
                list.append(UInt8(ascii: "]"))
                event.member("vcs", json: list)
                event.member("selected", 0)
                end(event)
            }
        case .split:
            var columns: [(StaticString, Int)] = []
            for (relationship, field) in [("masterViewController", "primary"), ("detailViewController", "secondary"), ("supplementaryViewController", "supplementary")]
                as [(String, StaticString)]
            {
                if let column = relationships.first(where: { $0.relationship == relationship }).flatMap(destination) { columns.append((field, column)) }
            }
            if !columns.isEmpty {
                var event = begin("split.set")
                event.member("split", json: reference(index))
                for (field, column) in columns { event.member(field, json: reference(column)) }
                end(event)
            }
        default:
            break
        }
    }

    /// The simulated controller the engine's handle stands for.
    func controller(_ handle: ControllerHandle) -> Int? { controllerByID[replayer.id(of: handle)] }

    /// Embed segues of every attached controller that has not loaded its children yet (R12:
    /// when its view loads, which is when it is first on screen).
    mutating func loadEmbeds() {
        for handle in replayer.visible {
            guard let index = controller(handle), !embedsDone.contains(index) else { continue }
            embedsDone.insert(index)
            let owner = controllers[index]
            for segue in app.segues(from: owner.storyboard, owner.sceneID) where segue.kind == "embed" {
                guard let target = segue.destinationID, let scene = app.scenes[owner.storyboard][target] else { continue }
                let child = instantiate(owner.storyboard, scene)
                var event = begin("segue")
                event.member("kind", "embed")
                if let identifier = segue.identifier { event.member("identifier", identifier) }
                event.member("source", json: reference(index))
                event.member("destination", json: reference(child))
                end(event)
            }
        }
    }
}
