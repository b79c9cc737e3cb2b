import NavlogEvents

/// Remembers, per session, which sequence numbers are stored, so a resent event is dropped as
/// a duplicate and a jump forward is counted as loss (events.md: "safe resend").
///
/// Per session it keeps the highest `seq` stored and the gaps below it (numbers skipped and not
/// yet received); a late event that fills a gap is stored, not dropped. Sessions are keyed by
/// their bytes in a ``ByteStringTable``, so checking an event allocates nothing.
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

    /// Session ids → dense indexes into the per-session arrays below.
    private var sessions = ByteStringTable()
    private var highest: [UInt64] = []
    private var gaps: [[ClosedRange<UInt64>]] = []

    /// Sessions tracked.
    var sessionCount: Int { sessions.count }

    /// Looks at `seq` of `session` and records it when it is new.
    /// - Returns: the verdict and how many numbers this event shows were skipped (lost).
    mutating func record(session: UnsafeRawBufferPointer, sequence: UInt64) -> (Verdict, lost: UInt64) {
        record(session: session, hash: StringHash.hash(session), sequence: sequence)
    }

    /// ``record(session:sequence:)`` for a session whose ``StringHash`` is already known.
    mutating func record(session: UnsafeRawBufferPointer, hash: UInt64, sequence: UInt64) -> (Verdict, lost: UInt64) {
        let (reference, inserted) = sessions.insert(session, hash: hash)
        let index = Int(reference)
        if inserted {
            highest.append(UInt64.max)
            gaps.append([])
        }
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

    /// Forgets that `sequence` of `session` (whose ``StringHash`` is `hash`) was stored (an
    /// append that failed).
    mutating func forget(session: UnsafeRawBufferPointer, hash: UInt64, sequence: UInt64) {
        guard let reference = sessions.reference(of: session, hash: hash) else { return }
        let index = Int(reference)
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
}
