public import NavlogStoryboard

/// How a simulation runs.
public struct SimulationConfiguration: Sendable, Hashable {
    /// How many sessions to simulate.
    public var sessions: Int
    /// The seed: the same seed and storyboards give the same events.
    public var seed: UInt64
    /// How many sessions are live at once (their events interleave by time).
    public var concurrency: Int
    /// `phone` or `pad` (size classes: compact width on a phone, regular on a pad).
    public var idiom: String
    /// The chance that a user action is replaced by a deliberate UIKit misuse (0: valid UIKit only).
    public var misuseRate: Double
    /// The mean number of user actions per session.
    public var meanActions: Int
    /// When the first session starts (µs since the epoch).
    public var startTime: Int64

    /// A configuration with the usual values.
    public init(
        sessions: Int, seed: UInt64 = 1, concurrency: Int = 16, idiom: String = "phone", misuseRate: Double = 0, meanActions: Int = 24,
        startTime: Int64 = 1_763_715_600_000_000
    ) {
        self.sessions = sessions
        self.seed = seed
        self.concurrency = concurrency
        self.idiom = idiom
        self.misuseRate = misuseRate
        self.meanActions = meanActions
        self.startTime = startTime
    }
}

/// Simulates sessions of an app built from storyboards: each is a random walk over the
/// storyboard's segues from the focused screen, with pops, dismissals, unwinds, tab switches,
/// backgrounding and size-class changes, and appearance callbacks, all checked against the
/// replay engine as they are made (see ``SimulatedSession``). Deterministic for a seed and a
/// kind of random number generator, which the caller chooses (navlog simulate passes
/// NavlogWorkload's `SplitMix64`).
public struct StoryboardSimulator {
    /// The app.
    public let app: StoryboardApp
    /// The settings.
    public let configuration: SimulationConfiguration
    /// Misuse injected so far (empty unless ``SimulationConfiguration/misuseRate`` > 0).
    public private(set) var injected: [InjectedMisuse] = []
    /// Events written so far.
    public private(set) var eventsGenerated = 0
    /// Sessions started so far.
    public private(set) var sessionsStarted = 0

    private var live: [SimulatedSession] = []
    /// The simulator's own random numbers (session seeds, lengths and start times).
    private var random: any RandomNumberGenerator
    private let makeGenerator: (_ seed: UInt64) -> any RandomNumberGenerator
    private var tools = SimulationTools()

    /// A simulator of `configuration.sessions` sessions of `app`.
    /// - Parameters:
    ///   - app: the storyboards.
    ///   - configuration: the settings; its seed seeds the simulator's generator.
    ///   - makeGenerator: a random number generator that starts from a seed, for the simulator
    ///     (from the configuration's seed) and for each session (from a seed the simulator's
    ///     draws). The same kind of generator and seed give the same events.
    public init(
        app: StoryboardApp, configuration: SimulationConfiguration, makeGenerator: @escaping (_ seed: UInt64) -> any RandomNumberGenerator
    ) {
        self.app = app
        self.configuration = configuration
        self.makeGenerator = makeGenerator
        random = makeGenerator(configuration.seed)
    }

    /// Whether every session has ended.
    public var isFinished: Bool { live.isEmpty && sessionsStarted >= configuration.sessions }

    /// Appends the lines of the next step (one action of the session whose next event is the
    /// earliest; a step may be a single event) to `lines`; false when every session has ended.
    public mutating func step(into lines: inout [[UInt8]]) -> Bool {
        while live.count < max(1, configuration.concurrency), sessionsStarted < configuration.sessions {
            startSession()
        }
        guard !live.isEmpty else { return false }
        var earliest = 0
        for index in live.indices where live[index].clock < live[earliest].clock { earliest = index }
        let produced = live[earliest].step(&tools, misuseRate: configuration.misuseRate)
        eventsGenerated += produced.count
        lines.append(contentsOf: produced)
        if live[earliest].ended {
            injected.append(contentsOf: live[earliest].injected)
            live.remove(at: earliest)
        }
        return true
    }

    private mutating func startSession() {
        let number = sessionsStarted
        sessionsStarted += 1
        let seed = random.next()
        let hex = String(seed, radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - hex.count)) + hex
        let id = "sim-\(padded.prefix(8))-\(padded.dropFirst(8).prefix(4))-\(number)"
        let base = live.map(\.clock).min() ?? configuration.startTime
        let mean = Double(max(1, configuration.meanActions))
        let uniform = max(Double(random.next() >> 11) / Double(1 << 53), 1e-9)
        let actions = max(1, Int(mean * (0.5 + uniform)))
        live.append(
            SimulatedSession(
                app: app, id: id, idiom: configuration.idiom, seed: seed, random: makeGenerator(seed), start: base + Int64(random.next() % 2_000_000),
                actions: actions))
    }
}
