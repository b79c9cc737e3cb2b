/// When a follower of the log (`navlog index --follow`) looks again after bringing the index up
/// to date: the first query after navlogd stored events replays what the index does not cover
/// yet, so the follower keeps that tail short while events pour in, without spinning on a log
/// that grows a few events at a time.
///
/// - A pass that found less than ``behindEvents`` new events: the next look after ``interval``
///   (production traffic, hundreds of sessions with seconds between actions, brings a few
///   hundred events a second: one pass a second costs little, and a query then replays at
///   most a second of them).
/// - A pass that found more: the follower is behind. The next look comes as soon as the pass
///   took (so a busy follower indexes at most half the time and leaves navlogd its share of
///   the cores), at least ``minimumWait`` later and at most ``interval``.
public struct FollowCadence: Sendable {
    /// How long to wait between two looks when the follower keeps up.
    public var interval: Duration
    /// New events in one pass past which the follower is behind (see the type's description).
    public var behindEvents = 10_000
    /// The shortest wait after a pass: each pass has a fixed cost (the segment's live sessions'
    /// states are read and written again), whatever it finds.
    public var minimumWait = Duration.milliseconds(100)

    /// A cadence that looks every `interval` while it keeps up.
    public init(interval: Duration) {
        self.interval = interval
    }

    /// How long to wait after a pass that indexed `events` new events in `took`.
    public func wait(afterIndexing events: Int, took: Duration) -> Duration {
        guard events >= behindEvents else { return interval }
        return min(interval, max(minimumWait, took))
    }
}
