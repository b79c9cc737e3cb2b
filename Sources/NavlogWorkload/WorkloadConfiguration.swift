/// What a ``WorkloadGenerator`` produces: how many sessions run at once, how long they are, when
/// the traffic starts, which devices and apps send it.
///
/// Every setting has a sensible default; ``init(seed:)`` gives a mixed phone/iPad population of
/// 200 live sessions of about 400 events each, starting at 2025-11-21T09:00:00Z.
public struct WorkloadConfiguration: Sendable, Hashable {
    /// The seed of every random choice: the same configuration always gives the same bytes.
    public var seed: UInt64

    /// How many sessions are live (and interleaved) at any time; an ended session is replaced by a
    /// new one a few seconds later. Must be at least 1.
    public var concurrentSessions: Int

    /// The mean number of events in a session (session lengths are roughly exponential, at least
    /// a setup's worth of events). Must be at least 1.
    public var meanEventsPerSession: Int

    /// The device time of the first session start, in microseconds since the Unix epoch
    /// (default: 2025-11-21T09:00:00Z).
    public var startTime: Int64

    /// The share of sessions that run on an iPad (0...1); the rest run on an iPhone.
    public var padFraction: Double

    /// The apps the sessions belong to, picked uniformly per session. Must not be empty.
    public var apps: [WorkloadApp]

    /// The mean user think time between two actions, in microseconds (default 7 s; the actual
    /// delays range from under a second to a few minutes).
    public var meanThinkTime: Int64

    /// 2025-11-21T09:00:00Z in microseconds since the Unix epoch.
    public static let defaultStartTime: Int64 = 1_763_715_600_000_000

    /// The default configuration for `seed`.
    /// - Parameter seed: the seed of every random choice.
    public init(seed: UInt64) {
        self.init(seed: seed, concurrentSessions: 200)
    }

    /// How the sessions' apps record UIKit (../shared/workload.md "How apps record"): each
    /// session picks a style with these weights. Default: every session records everything.
    public var recordingMix: [RecordingShare] = [RecordingShare(.full, 1)]

    /// A mix of recording styles as workload.md describes: 40% full, 25% did-only, 20% will
    /// and did without transitions, 15% navigation calls only.
    public static let productionRecordingMix = [
        RecordingShare(.full, 0.40), RecordingShare(.didOnly, 0.25), RecordingShare(.willAndDid, 0.20), RecordingShare(.navigationOnly, 0.15),
    ]

    /// Production's shape (../shared/workload.md): 560 sessions live at once, about 480 events a
    /// session, a user action every 8 s or so, recorded in ``productionRecordingMix``; 2M events
    /// hold about 4,000 sessions and each 32,768-event block events of several hundred.
    /// Benchmarks judge their goals on this.
    public static func production(seed: UInt64) -> WorkloadConfiguration {
        var configuration = WorkloadConfiguration(seed: seed, concurrentSessions: 560, meanEventsPerSession: 480, meanThinkTime: 8_000_000)
        configuration.recordingMix = productionRecordingMix
        return configuration
    }

    /// A configuration with every setting given (or defaulted).
    /// - Parameters:
    ///   - seed: the seed of every random choice.
    ///   - concurrentSessions: how many sessions are live at once (at least 1).
    ///   - meanEventsPerSession: the mean session length in events (at least 1).
    ///   - startTime: the first session start, µs since the epoch.
    ///   - padFraction: the share of iPad sessions (clamped to 0...1).
    ///   - apps: the apps to simulate (not empty).
    ///   - meanThinkTime: the mean delay between user actions, µs.
    public init(
        seed: UInt64,
        concurrentSessions: Int,
        meanEventsPerSession: Int = 400,
        startTime: Int64 = WorkloadConfiguration.defaultStartTime,
        padFraction: Double = 0.25,
        apps: [WorkloadApp] = WorkloadApp.defaults,
        meanThinkTime: Int64 = 7_000_000
    ) {
        self.seed = seed
        self.concurrentSessions = concurrentSessions
        self.meanEventsPerSession = meanEventsPerSession
        self.startTime = startTime
        self.padFraction = padFraction
        self.apps = apps
        self.meanThinkTime = meanThinkTime
    }
}
