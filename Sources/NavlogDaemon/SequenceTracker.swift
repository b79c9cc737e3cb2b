import NavlogEvents

/// Remembers, per session, exactly which sequence numbers are stored, so that any order of
/// delivery over any number of connections stores each `(session, seq)` once (events.md: an
/// event whose `(session, seq)` is already stored is dropped; a late event is no duplicate).
///
/// Per session the stored numbers are kept as sorted, disjoint, merged ranges: in-order
/// delivery is one range however long the session, reordering adds a few. The holes between
/// ranges are numbers *missing now*; they are *given up as lost* when the session ends
/// (`session.end` stored) or has stored nothing for ``grace`` — a late event that fills a hole
/// afterwards is still stored. Horizon: at most ``maximumRangesPerSession`` ranges per session;
/// past that the lowest hole is given up and closed, so an event that arrives in it even later
/// is dropped as a duplicate. Sessions are kept for the daemon's life (rebuilt from the log on
/// start, see ``LogWriter``). Sessions are keyed by their bytes in a ``ByteStringTable``, so
/// checking an event allocates nothing unless the ranges change shape.
struct SequenceTracker {
    /// What to do with an event's sequence number.
    enum Verdict: Equatable {
        /// New: store it.
        case store
        /// Already stored: drop it.
        case duplicate
    }

    /// The most ranges (and so holes) remembered per session.
    static let maximumRangesPerSession = 4096

    /// One session's stored numbers and bookkeeping.
    private struct Session {
        /// Stored numbers: sorted, disjoint, not adjacent.
        var ranges = StoredRanges()
        /// When it last stored an event (µs, the daemon's clock).
        var lastStored: Int64 = 0
        /// Holes below this number were given up (counted in ``lost``); holes above it are
        /// missing now (counted in ``missing``). 0: nothing given up.
        var givenUpBelow: UInt64 = 0
        /// Its numbers missing now (the holes above ``givenUpBelow``).
        var missing: UInt64 = 0
    }

    /// Session ids → dense indexes into ``states``.
    private var sessions = ByteStringTable()
    private var states: [Session] = []
    /// Numbers missing now (holes not given up), all sessions.
    private(set) var missing: UInt64 = 0
    /// The sessions with numbers missing now: what ``sweep(now:)`` looks at (few, against all
    /// the sessions tracked).
    private var sessionsMissing = Set<Int>()
    /// Numbers given up as lost (a counter).
    private(set) var lost: UInt64 = 0
    /// How long a session may store nothing before its holes are given up (µs).
    var grace: Int64

    /// A tracker that gives up holes after `grace` µs without a stored event (default 5 min).
    init(grace: Int64 = 300_000_000) {
        self.grace = grace
    }

    /// Sessions tracked.
    var sessionCount: Int { sessions.count }

    /// Looks at `seq` of `session` and records it when it is new.
    mutating func record(session: UnsafeRawBufferPointer, sequence: UInt64, now: Int64 = 0) -> Verdict {
        record(session: session, hash: StringHash.hash(session), sequence: sequence, now: now)
    }

    /// ``record(session:sequence:now:)`` for a session whose ``StringHash`` is already known.
    mutating func record(session: UnsafeRawBufferPointer, hash: UInt64, sequence: UInt64, now: Int64 = 0) -> Verdict {
        let (reference, inserted) = sessions.insert(session, hash: hash)
        let index = Int(reference)
        if inserted { states.append(Session()) }
        // The last range starting at or below `sequence` (binary search), and the one after it.
        // Only their bounds are kept: a copy of the array held across the mutations below would
        // make each of them copy the whole array (one allocation per event on the ingest path).
        let rangeCount = states[index].ranges.count
        var low = 0
        var high = rangeCount
        while low < high {
            let middle = (low + high) / 2
            if states[index].ranges[middle].lowerBound <= sequence { low = middle + 1 } else { high = middle }
        }
        let before = low - 1
        let below = before >= 0 ? states[index].ranges[before] : nil
        let above = low < rangeCount ? states[index].ranges[low] : nil
        if let below, below.contains(sequence) { return .duplicate }
        let joinsBefore = below.map { $0.upperBound &+ 1 == sequence } ?? false
        let joinsAfter = above.map { sequence &+ 1 == $0.lowerBound } ?? false
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            states[index].ranges[before] = below!.lowerBound...above!.upperBound
            states[index].ranges.remove(at: low)
        case (true, false):
            states[index].ranges[before] = below!.lowerBound...sequence
        case (false, true):
            states[index].ranges[low] = sequence...above!.upperBound
        case (false, false):
            states[index].ranges.insert(sequence...sequence, at: low)
        }
        if below != nil && above != nil {
            // It fills one number of a hole.
            uncount(index, sequence...sequence)
        } else if let below, sequence > below.upperBound + 1 {
            // Above the highest: the numbers skipped are missing now.
            count(index, (below.upperBound + 1)...(sequence - 1))
        } else if let above, sequence + 1 < above.lowerBound {
            // Below the lowest: the numbers up to the lowest are missing now.
            count(index, (sequence + 1)...(above.lowerBound - 1))
        }
        states[index].lastStored = now
        if states[index].ranges.count > Self.maximumRangesPerSession { closeLowestHole(index) }
        return .store
    }

    /// Forgets that `sequence` of `session` (whose ``StringHash`` is `hash`) was stored (an
    /// append that failed): a resend is then stored, not dropped.
    mutating func forget(session: UnsafeRawBufferPointer, hash: UInt64, sequence: UInt64) {
        guard let reference = sessions.reference(of: session, hash: hash) else { return }
        let index = Int(reference)
        let ranges = states[index].ranges
        guard let position = ranges.firstIndex(where: { $0.contains(sequence) }) else { return }
        let range = ranges[position]
        var replacement: [ClosedRange<UInt64>] = []
        if range.lowerBound < sequence { replacement.append(range.lowerBound...(sequence - 1)) }
        if sequence < range.upperBound { replacement.append((sequence + 1)...range.upperBound) }
        let isLowest = position == 0 && range.lowerBound == sequence
        let isHighest = position == ranges.count - 1 && range.upperBound == sequence
        if !isLowest && !isHighest {
            count(index, sequence...sequence)  // a hole again
        } else if replacement.isEmpty && ranges.count > 1 {
            // The lowest or highest range was this one number: the hole next to it is no hole now.
            let hole = isHighest ? (ranges[position - 1].upperBound + 1)...(sequence - 1) : (sequence + 1)...(ranges[position + 1].lowerBound - 1)
            uncount(index, hole)
        }
        states[index].ranges.replaceSubrange(position...position, with: replacement)
    }

    /// `session.end` of `session` was stored: what it still misses is given up as lost.
    mutating func end(session: UnsafeRawBufferPointer, hash: UInt64) {
        guard let reference = sessions.reference(of: session, hash: hash) else { return }
        giveUp(Int(reference))
    }

    /// Gives up the holes of every session that has stored nothing since `now - grace`.
    mutating func sweep(now: Int64) {
        for index in sessionsMissing where now &- states[index].lastStored > grace {
            giveUp(index)
        }
    }

    /// Numbers `hole` of session `index` are missing now, unless below what was given up.
    private mutating func count(_ index: Int, _ hole: ClosedRange<UInt64>) {
        let counted = countAbove(states[index].givenUpBelow, hole)
        states[index].missing += counted
        missing &+= counted
        if states[index].missing > 0 { sessionsMissing.insert(index) }
    }

    /// Numbers `hole` of session `index` are no longer missing.
    private mutating func uncount(_ index: Int, _ hole: ClosedRange<UInt64>) {
        let counted = min(countAbove(states[index].givenUpBelow, hole), states[index].missing)
        states[index].missing -= counted
        missing &-= counted
        if states[index].missing == 0 { sessionsMissing.remove(index) }
    }

    /// How many numbers of `range` are at or above `floor`.
    private func countAbove(_ floor: UInt64, _ range: ClosedRange<UInt64>) -> UInt64 {
        guard range.upperBound >= floor else { return 0 }
        return range.upperBound - max(range.lowerBound, floor) + 1
    }

    private mutating func giveUp(_ index: Int) {
        guard let top = states[index].ranges.last?.upperBound else { return }
        lost &+= states[index].missing
        missing &-= states[index].missing
        states[index].missing = 0
        sessionsMissing.remove(index)
        states[index].givenUpBelow = top &+ 1
    }

    /// The horizon: the lowest hole is given up and closed (its numbers count as stored).
    private mutating func closeLowestHole(_ index: Int) {
        let first = states[index].ranges[0]
        let second = states[index].ranges[1]
        let hole = (first.upperBound + 1)...(second.lowerBound - 1)
        let counted = min(countAbove(states[index].givenUpBelow, hole), states[index].missing)
        states[index].missing -= counted
        missing &-= counted
        lost &+= counted
        if states[index].missing == 0 { sessionsMissing.remove(index) }
        states[index].ranges.replaceSubrange(0...1, with: [first.lowerBound...second.upperBound])
    }
}

/// A session's stored ranges: the first inline, the rest in an array that in-order delivery
/// never allocates (one range however long the session), so that tracking tens of thousands of
/// sessions costs no heap block each.
struct StoredRanges: RandomAccessCollection, MutableCollection {
    private var head: ClosedRange<UInt64>?
    private var tail: [ClosedRange<UInt64>] = []

    init() {}

    init(_ ranges: some Sequence<ClosedRange<UInt64>>) {
        for range in ranges { append(range) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    subscript(position: Int) -> ClosedRange<UInt64> {
        get { position == 0 ? head! : tail[position - 1] }
        set {
            if position == 0 { head = newValue } else { tail[position - 1] = newValue }
        }
    }

    mutating func append(_ range: ClosedRange<UInt64>) {
        if head == nil { head = range } else { tail.append(range) }
    }

    mutating func insert(_ range: ClosedRange<UInt64>, at position: Int) {
        if position == 0 {
            if let head { tail.insert(head, at: 0) }
            head = range
        } else {
            tail.insert(range, at: position - 1)
        }
    }

    mutating func remove(at position: Int) {
        if position == 0 {
            head = tail.isEmpty ? nil : tail.removeFirst()
        } else {
            tail.remove(at: position - 1)
        }
    }

    /// Replaces the ranges at `positions` with `replacement` (rare: a failed append, the horizon).
    mutating func replaceSubrange(_ positions: ClosedRange<Int>, with replacement: [ClosedRange<UInt64>]) {
        var all = Array(self)
        all.replaceSubrange(positions, with: replacement)
        self = StoredRanges(all)
    }
}
