import Synchronization

/// Token buckets in events per second, one per name (a key id, a client address): a body is
/// taken whole or refused whole, so a 429 stores nothing and says when to come back.
///
/// Buckets of names not seen for a while are forgotten, and at most ``maximumBuckets`` are
/// kept (the fullest, i.e. least recently used, go first), so a flood of client addresses
/// cannot grow the intake's memory.
final class RateLimiter: Sendable {
    /// A bucket's state.
    private struct Bucket {
        /// Tokens (events) available at ``updated``.
        var tokens: Double
        /// When ``tokens`` was computed (monotonic seconds).
        var updated: Double
    }

    /// What a request gets.
    enum Decision: Equatable {
        /// Taken; the tokens are spent.
        case admitted
        /// Refused: come back after this many seconds (at least 1).
        case refused(retryAfterSeconds: Int)
    }

    private let state = Mutex([String: Bucket]())
    private let maximumBuckets: Int

    /// A limiter that remembers at most `maximumBuckets` names.
    init(maximumBuckets: Int = 100_000) {
        self.maximumBuckets = maximumBuckets
    }

    /// Takes `events` tokens from `name`'s bucket, refilled at `rate` per second up to `burst`.
    /// A body larger than the burst is admitted only into a full bucket (it can never fit
    /// otherwise) and leaves it in debt, so the next ones wait.
    func take(_ events: Int, name: String, rate: Double, burst: Double, now: Double) -> Decision {
        guard rate > 0, events > 0 else { return .admitted }
        return state.withLock { buckets in
            var bucket = buckets[name] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            let needed = min(Double(events), burst)
            if bucket.tokens >= needed {
                bucket.tokens -= Double(events)
                store(bucket, name, in: &buckets, now: now, rate: rate, burst: burst)
                return .admitted
            }
            store(bucket, name, in: &buckets, now: now, rate: rate, burst: burst)
            let wait = (needed - bucket.tokens) / rate
            return .refused(retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
    }

    /// Gives back tokens of a body that was admitted but not stored (navlogd unreachable): the
    /// client's resend should not be charged twice.
    func refund(_ events: Int, name: String, burst: Double) {
        state.withLock { buckets in
            if var bucket = buckets[name] {
                bucket.tokens = min(burst, bucket.tokens + Double(events))
                buckets[name] = bucket
            }
        }
    }

    private func store(_ bucket: Bucket, _ name: String, in buckets: inout [String: Bucket], now: Double, rate: Double, burst: Double) {
        buckets[name] = bucket
        guard buckets.count > maximumBuckets else { return }
        // A full bucket is the same as no bucket: drop those first, then the oldest.
        buckets = buckets.filter { min(burst, $0.value.tokens + (now - $0.value.updated) * rate) < burst }
        if buckets.count > maximumBuckets {
            let oldest = buckets.sorted { $0.value.updated < $1.value.updated }.prefix(buckets.count - maximumBuckets / 2)
            for (key, _) in oldest { buckets[key] = nil }
        }
    }
}
