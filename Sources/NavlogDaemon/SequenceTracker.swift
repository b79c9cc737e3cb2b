import NavlogEvents
import NavlogStore

/// Remembers, per session, which sequence numbers are stored, so a resent event is dropped as
/// a duplicate and a jump forward is counted as loss (events.md: "safe resend").
///
/// Per session it keeps the highest `seq` stored and the gaps below it (numbers skipped and not
/// yet received); a late event that fills a gap is stored, not dropped. Sessions are keyed by
/// their bytes in an open-addressing table, so checking an event allocates nothing.
struct SequenceTracker {
    /// What to do with an event's sequence number.
    enum Verdict: Equatable {
        /// New: store it.
        case store
        /// Already stored: drop it.
        case duplicate
    }

    /// The most gaps remembered per session; older ones are forgotten (a very late resend of
    /// those would then be dropped as a duplicate).
    static let maximumGapsPerSession = 4096

    private var sessionBytes: [UInt8] = []
    private var sessionEnds: [Int] = []
    private var hashes: [UInt64] = []
    private var highest: [UInt64] = []
    private var gaps: [[ClosedRange<UInt64>]] = []
    private var slots = [Int32](repeating: -1, count: 1024)

    /// Sessions tracked.
    var sessionCount: Int { hashes.count }

    /// Looks at `seq` of `session` and records it when it is new.
    /// - Returns: the verdict and how many numbers this event shows were skipped (lost).
    mutating func record(session: UnsafeRawBufferPointer, sequence: UInt64) -> (Verdict, lost: UInt64) {
        let index = find(session, create: true)!
        if highest[index] == UInt64.max {  // first event of the session
            highest[index] = sequence
            return (.store, 0)
        }
        let top = highest[index]
        if sequence > top {
            let lost = sequence - top - 1
            if lost > 0 {
                gaps[index].append((top + 1)...(sequence - 1))
                if gaps[index].count > Self.maximumGapsPerSession { gaps[index].removeFirst() }
            }
            highest[index] = sequence
            return (.store, lost)
        }
        if sequence == top { return (.duplicate, 0) }
        // Below the top: stored unless it fills a remembered gap.
        guard let gap = gaps[index].firstIndex(where: { $0.contains(sequence) }) else { return (.duplicate, 0) }
        let range = gaps[index][gap]
        var replacement: [ClosedRange<UInt64>] = []
        if range.lowerBound < sequence { replacement.append(range.lowerBound...(sequence - 1)) }
        if sequence < range.upperBound { replacement.append((sequence + 1)...range.upperBound) }
        gaps[index].replaceSubrange(gap...gap, with: replacement)
        return (.store, 0)
    }

    /// Forgets that `sequence` of `session` was stored (an append that failed).
    mutating func forget(session: UnsafeRawBufferPointer, sequence: UInt64) {
        guard let index = find(session, create: false) else { return }
        if sequence == highest[index] {
            // Step back below it; the numbers in between become a gap again only if they were.
            if let last = gaps[index].last, last.upperBound == sequence - 1 {
                highest[index] = last.lowerBound - 1
                gaps[index].removeLast()
            } else {
                highest[index] = sequence == 0 ? UInt64.max : sequence - 1
            }
        } else {
            gaps[index].append(sequence...sequence)
        }
    }

    private mutating func find(_ session: UnsafeRawBufferPointer, create: Bool) -> Int? {
        let hash = StringHash.hash(session)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] >= 0 {
            let index = Int(slots[slot])
            if hashes[index] == hash && matches(index, session) { return index }
            slot = (slot + 1) & mask
        }
        guard create else { return nil }
        let index = hashes.count
        sessionBytes.append(contentsOf: session)
        sessionEnds.append(sessionBytes.count)
        hashes.append(hash)
        highest.append(UInt64.max)
        gaps.append([])
        slots[slot] = Int32(index)
        if hashes.count * 2 > slots.count { grow() }
        return index
    }

    private func matches(_ index: Int, _ session: UnsafeRawBufferPointer) -> Bool {
        let start = index == 0 ? 0 : sessionEnds[index - 1]
        guard sessionEnds[index] - start == session.count else { return false }
        return sessionBytes.withUnsafeBytes { all in
            UnsafeRawBufferPointer(rebasing: all[start..<sessionEnds[index]]).elementsEqual(session)
        }
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for index in hashes.indices {
            var slot = Int(truncatingIfNeeded: hashes[index]) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index)
        }
    }
}
