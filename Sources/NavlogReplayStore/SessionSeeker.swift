import NavlogEvents
public import NavlogReplay
public import NavlogStore

/// Replays one session to a chosen point: from the nearest checkpoint of the replay index when
/// it has one (one block decoded), else from the session's first event.
public final class SessionSeeker {
    /// The index (and through it, the log).
    public let index: ReplayIndex
    private var decoded = DecodedBlock()
    /// The positions of the session's events in the block being replayed (reused).
    private var positions: [Int32] = []
    /// Reads a session's next block while this seeker replays one (made on first use).
    private var prefetcher: BlockPrefetcher?
    /// Whether the prefetcher's read was started and not yet taken.
    private var readPending = false
    /// Whether a replay reads a session's blocks two at a time, the second on another thread
    /// (default); false reads them one after another on the caller's thread.
    public var readsAhead = true

    /// A seeker over `index`.
    public init(index: ReplayIndex) {
        self.index = index
    }

    /// The state of `session` after `target`, or nil when the log holds no event of the session.
    ///
    /// - Parameters:
    ///   - useCheckpoints: start from the nearest checkpoint (default); false replays from the
    ///     session's first event (what checkpoints are checked against).
    ///   - indexIsCurrent: whether the index covers every event of the session in the log. A
    ///     reader that lets the log grow past its index (the web viewer, while navlogd records)
    ///     says false for a session with newer events: then nothing is taken from the index, not
    ///     even whether the session's events arrived out of `seq` order.
    ///   - visit: called after each event applied, with the state after it; return false to stop.
    ///     A replay to `.end` that the index's kept end state answers applies no event: pass
    ///     `useCheckpoints: false` to visit every event.
    /// - Throws: ``StoreError`` for I/O failures reading the log.
    ///
    /// A replay that stops while a pop or dismissal is pending (E6: the session records no
    /// transitions, and the callbacks that tell whether it was a cancelled gesture come later)
    /// shows it as the rest of the session proves it: rolled back, or completed with the focus
    /// moved at its call. A replay that visits each event sees each state as it was then.
    ///
    /// A navigation-only gesture that a later event proves cancelled (E7) is rolled back at its
    /// own event, whether the replay stops before that proof or after: the index marks such a
    /// session; without the index, a replay that such a proof may concern looks at the whole
    /// session first.
    public func replay(
        session: String, to target: ReplayTarget, useCheckpoints: Bool = true, indexIsCurrent: Bool = true,
        visit: ((borrowing DecodedBlock, Int, SessionReplayer, Resolution?) throws -> Bool)? = nil
    ) throws -> SessionReplayer? {
        let start = indexIsCurrent ? index.start(session: session, for: target) : nil
        // The end state the index keeps is the true one, E7's hindsight included.
        if useCheckpoints, target == .end, let start, start.block == nil { return start.state }
        var stopped: SessionReplayer?
        if start?.hindsight == true || (start == nil && visit != nil) {
            // A visitor sees each event once: without the index, the whole session is looked at first.
            stopped = try replayFromFirstEvent(session: session, to: target, visit: visit, onlyIfReordered: false, hindsight: true)
        } else {
            stopped = try replayForward(session: session, to: target, start: start, useCheckpoints: useCheckpoints && indexIsCurrent, visit: visit)
            if start == nil, let state = stopped, state.mayBeCancelledInHindsight || !state.gesturesCancelledInHindsight.isEmpty {
                stopped = try replayFromFirstEvent(session: session, to: target, visit: nil, onlyIfReordered: false, hindsight: true)
            }
        }
        guard visit == nil, target != .end, var state = stopped, state.hasPendingRemoval else { return stopped }
        // E6 hindsight: replay on until the removal is resolved, and resolve it the same way here.
        let eventsApplied = state.eventCount
        let position = state.pendingRemovalPosition ?? -1
        var (wasCancelled, wasChosen) = (false, false)
        _ = try replay(session: session, to: .index(Int.max), useCheckpoints: false, indexIsCurrent: indexIsCurrent) { _, _, later, _ in
            // It stays pending until an event resolves it: the first outcome after it is its own.
            guard later.eventCount > eventsApplied, let outcome = later.heldRemovalOutcome else { return true }
            wasCancelled = outcome == .cancelled
            wasChosen = later.isRollbackChosen(position: position)
            return false
        }
        state.resolvePendingRemoval(cancelled: wasCancelled, chosen: wasChosen)
        return state
    }

    /// Replays `session` to `target` from `start` (the index's nearest checkpoint) when
    /// `useCheckpoints`, else from its first event.
    /// `initial` (with no checkpoint): the state to begin from, knowing the gestures its
    /// events prove cancelled (E7), for a session already known to be in `seq` order.
    private func replayForward(
        session: String, to target: ReplayTarget, start: ReplayIndex.Start?, useCheckpoints: Bool,
        visit: ((borrowing DecodedBlock, Int, SessionReplayer, Resolution?) throws -> Bool)?, initial: SessionReplayer? = nil
    ) throws -> SessionReplayer? {
        // E4: a session whose events were stored out of seq order (delivery over several
        // connections, a late resend) is replayed in seq order from its first event: its
        // checkpoints, built in log order, do not hold for it.
        // The index's end piece tells (late events, and a true duplicate, A18), and every start
        // the index gives carries it: one lookup, one state loaded; without one, look.
        // The end state the index keeps is the true one also for a session whose events came
        // out of order: the index re-derives such a session in seq order when a late event
        // arrives (E4). Sorting its events again would read every block of it, per session.
        if useCheckpoints, target == .end, let start, start.block == nil { return start.state }
        let outOfOrder = initial == nil && (start?.outOfOrder ?? true)
        if outOfOrder, let sorted = try replayFromFirstEvent(session: session, to: target, visit: visit, onlyIfReordered: true, hindsight: false) {
            return sorted
        }
        var state = initial ?? SessionReplayer()
        var from: (segment: Int, block: Int)? = (0, -1)
        var firstLSN: UInt64 = 0
        if useCheckpoints, let start {
            state = start.state
            from = start.block
            firstLSN = start.firstLSN
        }
        guard let from else { return state }
        var sawEvent = state.eventCount > 0
        let wanted = Array(session.utf8)
        // Only the session's events are needed: of a grouped block, its group's frame; the
        // receive times and peers only for a caller that looks at the events.
        let receiveTimesAndPeers = visit != nil
        var blocks: [(segment: Int, block: Int)] = []
        for segment in from.segment..<index.log.segments.count {
            for block in index.log.blocks(ofSegment: segment, mayHoldSession: session) where segment > from.segment || block >= from.block {
                blocks.append((segment, block))
            }
        }

        /// Applies the session's events of `decoded`: nil to go on, else what to return.
        func replayBlock() throws -> SessionReplayer?? {
            guard let reference = decoded.sessionReadFor ?? reference(of: wanted) else { return nil }
            decoded.positions(ofSession: reference, into: &positions)
            return try decoded.withEvents { events -> SessionReplayer?? in
                for position in positions.lazy.map(Int.init) {
                    // Already in the checkpoint's state (it starts inside this block).
                    if decoded.lsn(position) < firstLSN { continue }
                    if Self.isPast(target, state: state, sequence: decoded.sequence(position), timestamp: decoded.timestamps[position]) {
                        return .some(sawEvent ? state : nil)
                    }
                    let resolution = state.apply(
                        ReplayEvent(
                            type: decoded.types[position], sequence: decoded.sequence(position), timestamp: decoded.timestamps[position],
                            lsn: decoded.lsn(position), body: StoredBody(tokens: events.tokens(ofEvent: position), strings: events.strings(ofEvent: position))))
                    sawEvent = true
                    if let visit, try !visit(decoded, position, state, resolution) { return .some(state) }
                    if case .sequence(let wantedSequence) = target, decoded.sequence(position) == wantedSequence { return .some(state) }
                    // The target event applied: the next block need not be read to see it is past.
                    if case .index(let wantedIndex) = target, state.eventCount > wantedIndex { return .some(state) }
                }
                return nil
            }
        }

        // Two blocks at a time, the second read on the prefetcher's thread. A replay that ends in
        // the first leaves the second read running; the next replay waits for it.
        dropPendingRead()
        var next = 0
        while next < blocks.count {
            let first = blocks[next]
            var second = next + 1 < blocks.count && readsAhead ? blocks[next + 1] : nil
            next += second == nil ? 1 : 2
            if let ahead = second {
                let prefetcher = try self.prefetcher ?? BlockPrefetcher()
                self.prefetcher = prefetcher
                let started = try index.log.startReadingAhead(
                    segment: ahead.segment, block: ahead.block, session: wanted, receiveTimesAndPeers: receiveTimesAndPeers, with: prefetcher)
                if !started { second = nil }
                readPending = started
            }
            if try index.log.readBlock(segment: first.segment, block: first.block, into: &decoded, session: wanted, receiveTimesAndPeers: receiveTimesAndPeers),
                let result = try replayBlock()
            {
                return result
            }
            guard second != nil, let prefetcher else { continue }
            readPending = false
            if try index.log.finishReadingAhead(prefetcher, into: &decoded), let result = try replayBlock() { return result }
        }
        return sawEvent ? state : nil
    }

    /// Waits for a read ahead that the last replay left running, and drops it (a block that
    /// replay did not need: its damage is not this replay's to report).
    private func dropPendingRead() {
        guard readPending, let prefetcher else { return }
        readPending = false
        index.log.dropReadingAhead(prefetcher, scratch: &decoded)
    }

    /// Replays `session` from its first event with its events in `seq` order (rule E4) when
    /// they all carry one, reading its blocks again as the order needs them; nil when
    /// `onlyIfReordered` and its events are already in order (the caller's usual replay is then
    /// the same and cheaper). With `hindsight`, the whole session is replayed first, as often as
    /// it takes to know which navigation-only gestures its events prove cancelled (E7), and the
    /// replay to `target` rolls each back at its own event.
    private func replayFromFirstEvent(
        session: String, to target: ReplayTarget, visit: ((borrowing DecodedBlock, Int, SessionReplayer, Resolution?) throws -> Bool)?,
        onlyIfReordered: Bool, hindsight: Bool
    ) throws -> SessionReplayer? {
        if let visit, !hindsight {
            // The order alone decides: where the events are is enough, no copy of their bodies.
            var locations = try SessionEventOrder(sessions: [session], log: index.log, decoded: &decoded).events[0]
            guard SessionEventOrder.sortForReplay(&locations) || !onlyIfReordered, !locations.isEmpty else { return nil }
            return try replay(along: locations, to: target, knowing: [], visit: visit)
        }
        // Copied out in one pass: each block read once (of a grouped block, the session's group),
        // however scattered the events are.
        let wanted = Array(session.utf8)
        let log = index.log
        var events = try SessionEventOrder.copyEvents(
            of: [session], log: log, throughSegment: nil, decoded: &decoded,
            read: { segment, block, whole, decoded in
                whole
                    ? try log.readBlock(segment: segment, block: block, into: &decoded)
                    : try log.readBlock(segment: segment, block: block, into: &decoded, session: wanted, receiveTimesAndPeers: false)
            })[0]
        let reordered = events.sortForReplay()
        guard reordered || !onlyIfReordered, !events.events.isEmpty else { return nil }
        func apply(_ state: inout SessionReplayer, to target: ReplayTarget) {
            var stopped = false
            events.forEach { event, body in
                guard !stopped else { return }
                if Self.isPast(target, state: state, sequence: event.sequence, timestamp: event.timestamp) {
                    stopped = true
                    return
                }
                if event.late { state.noteLateEvent() }
                state.apply(ReplayEvent(type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn, body: body))
                if case .sequence(let wanted) = target, event.sequence == wanted { stopped = true }
            }
        }
        let known = hindsight ? SessionReplayer.replayingWithHindsight { apply(&$0, to: .end) } : nil
        let cancelled = known?.gesturesCancelledInHindsight ?? []
        guard let visit else {
            if target == .end, let known { return known }
            var state = SessionReplayer(gesturesCancelledInHindsight: cancelled)
            apply(&state, to: target)
            return state
        }
        // The caller looks at each event in its block (timeline).
        if !reordered {
            // In log order: the usual forward replay, knowing the gestures.
            return try replayForward(
                session: session, to: target, start: nil, useCheckpoints: false, visit: visit, initial: SessionReplayer(gesturesCancelledInHindsight: cancelled))
        }
        var locations = try SessionEventOrder(sessions: [session], log: index.log, decoded: &decoded).events[0]
        SessionEventOrder.sortForReplay(&locations)
        return try replay(along: locations, to: target, knowing: cancelled, visit: visit)
    }

    /// Replays the events at `locations` (a session's, in the order to apply them) to `target`,
    /// following them through their blocks with a few kept decoded, and knowing the gestures
    /// `cancelled` were cancelled (E7); `visit` sees each.
    private func replay(
        along locations: [SessionEventOrder.Location], to target: ReplayTarget, knowing cancelled: [SessionReplayer.CancelledGesture],
        visit: (borrowing DecodedBlock, Int, SessionReplayer, Resolution?) throws -> Bool
    ) throws -> SessionReplayer {
        var state = SessionReplayer(gesturesCancelledInHindsight: cancelled)
        var cache = DecodedBlockCache()
        for event in locations {
            let stop = try cache.with(segment: event.segment, block: event.block, log: index.log) { decoded -> Bool in
                let position = Int(event.position)
                if Self.isPast(target, state: state, sequence: decoded.sequence(position), timestamp: decoded.timestamps[position]) { return true }
                if event.late { state.noteLateEvent() }
                let resolution = decoded.withBody(position) { body in
                    state.apply(
                        ReplayEvent(
                            type: decoded.types[position], sequence: decoded.sequence(position), timestamp: decoded.timestamps[position],
                            lsn: decoded.lsn(position), body: body))
                }
                if try !visit(decoded, position, state, resolution) { return true }
                if case .sequence(let wantedSequence) = target, decoded.sequence(position) == wantedSequence { return true }
                return false
            }
            if stop == true { break }
        }
        return state
    }

    /// The number of `session` (its bytes) in the decoded block's string table.
    private func reference(of session: [UInt8]) -> Int? {
        decoded.withStrings { strings in
            session.withUnsafeBytes { bytes in (0..<strings.count).first { strings[$0].map { $0.elementsEqual(bytes) } ?? false } }
        }
    }

    /// Whether the next event (with this seq and time) lies beyond `target`.
    static func isPast(_ target: ReplayTarget, state: SessionReplayer, sequence: UInt64?, timestamp: Int64) -> Bool {
        switch target {
        case .end: return false
        case .index(let index): return state.eventCount > index
        case .sequence(let wanted): return sequence.map { $0 > wanted } ?? false
        case .time(let time): return timestamp > time
        }
    }
}
