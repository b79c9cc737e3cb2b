import NavlogEvents
import Testing

@testable import NavlogDaemon

/// The dedupe of (session, seq) against a plain set per session: any order of delivery, with
/// repeats, stores each number once; missing and lost follow the holes (rule E4: a late event
/// is no duplicate).
@Suite("Exact (session, seq) dedupe")
struct SequenceTrackerTests {
    /// A small deterministic generator (xorshift).
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func record(_ tracker: inout SequenceTracker, _ session: String, _ sequence: UInt64, now: Int64 = 0) -> SequenceTracker.Verdict {
        var session = session
        return session.withUTF8 { tracker.record(session: UnsafeRawBufferPointer($0), sequence: sequence, now: now) }
    }

    /// Holes between the lowest and highest stored number of `stored`.
    static func holes(_ stored: Set<UInt64>) -> UInt64 {
        guard let low = stored.min(), let high = stored.max() else { return 0 }
        return high - low + 1 - UInt64(stored.count)
    }

    @Test("any permutation with repeats: store exactly the numbers not stored yet; missing = the holes", arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func permutations(seed: UInt64) {
        var random = Random(state: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        var tracker = SequenceTracker()
        var reference: [String: Set<UInt64>] = [:]
        // Eight sessions of up to 400 events, delivered shuffled, 20% resent, some never sent.
        var deliveries: [(String, UInt64)] = []
        for number in 0..<8 {
            let length = 50 + random.below(350)
            for sequence in 1...UInt64(length) where random.below(50) != 0 {
                deliveries.append(("s\(number)", sequence))
                if random.below(5) == 0 { deliveries.append(("s\(number)", sequence)) }
            }
        }
        for index in deliveries.indices.reversed() { deliveries.swapAt(index, random.below(index + 1)) }
        for (session, sequence) in deliveries {
            let expected: SequenceTracker.Verdict = reference[session, default: []].insert(sequence).inserted ? .store : .duplicate
            #expect(Self.record(&tracker, session, sequence) == expected, "\(session) seq \(sequence)")
            #expect(tracker.missing == reference.values.reduce(0) { $0 + Self.holes($1) })
        }
        #expect(tracker.lost == 0)
    }

    @Test("session.end gives up what is missing; a late event after it is still stored; later holes count again")
    func giveUpAtEnd() {
        var tracker = SequenceTracker()
        for sequence: UInt64 in [1, 2, 5, 6] { #expect(Self.record(&tracker, "s", sequence) == .store) }
        #expect(tracker.missing == 2)
        var session = "s"
        session.withUTF8 { tracker.end(session: UnsafeRawBufferPointer($0), hash: StringHash.hash(UnsafeRawBufferPointer($0))) }
        #expect(tracker.missing == 0)
        #expect(tracker.lost == 2)
        #expect(Self.record(&tracker, "s", 3) == .store, "a late event is no duplicate, even after its session ended")
        #expect(Self.record(&tracker, "s", 3) == .duplicate)
        #expect(tracker.missing == 0 && tracker.lost == 2)
        #expect(Self.record(&tracker, "s", 9) == .store)
        #expect(tracker.missing == 2, "7 and 8 are missing now: they were not given up")
    }

    @Test("a session quiet for the grace window gives up its holes; a session still storing does not")
    func giveUpAfterGrace() {
        var tracker = SequenceTracker(grace: 1_000)
        for sequence: UInt64 in [1, 4] { _ = Self.record(&tracker, "quiet", sequence, now: 0) }
        for sequence: UInt64 in [1, 3] { _ = Self.record(&tracker, "busy", sequence, now: 0) }
        _ = Self.record(&tracker, "busy", 5, now: 900)
        tracker.sweep(now: 1_500)
        #expect(tracker.lost == 2, "quiet's 2 and 3")
        #expect(tracker.missing == 2, "busy's 2 and 4 may still come")
    }

    @Test("forget undoes a store exactly (a failed append), holes and all")
    func forget() {
        var tracker = SequenceTracker()
        for sequence: UInt64 in [1, 2, 3, 7] { _ = Self.record(&tracker, "s", sequence) }
        #expect(tracker.missing == 3)
        var session = "s"
        session.withUTF8 { raw in
            let bytes = UnsafeRawBufferPointer(raw)
            tracker.forget(session: bytes, hash: StringHash.hash(bytes), sequence: 7)
        }
        #expect(tracker.missing == 0, "with 7 gone, 4–6 are no hole")
        #expect(Self.record(&tracker, "s", 7) == .store)
        #expect(tracker.missing == 3)
        session.withUTF8 { raw in
            let bytes = UnsafeRawBufferPointer(raw)
            tracker.forget(session: bytes, hash: StringHash.hash(bytes), sequence: 2)
        }
        #expect(tracker.missing == 4)
        #expect(Self.record(&tracker, "s", 2) == .store)
        #expect(tracker.missing == 3)
    }

    @Test("the horizon: past the most ranges per session the lowest hole is given up, memory stays bounded")
    func horizon() {
        var tracker = SequenceTracker()
        let limit = SequenceTracker.maximumRangesPerSession
        // Every other number: each one a new range.
        for index in 0...limit { _ = Self.record(&tracker, "s", UInt64(index * 2 + 1)) }
        #expect(tracker.lost == 1, "the lowest hole (2) was given up")
        #expect(Self.record(&tracker, "s", 2) == .duplicate, "a number in a hole given up to the horizon is dropped")
        #expect(Self.record(&tracker, "s", 4) == .store)
    }
}
