import Dispatch
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogZstd
import Synchronization

/// One of the workers that build a segment's replay index file together, each on a core of
/// its own: the worker `residue` of `modulus` replays the sessions whose id hash is `residue`
/// modulo `modulus` (sessions never interact, so each worker's states, checkpoints and focus
/// journal are complete for its sessions), and of a grouped block it decompresses and decodes
/// only the session groups that hold them (a session's group is its hash modulo the block's
/// group count). ``ReplayIndex`` merges the workers' checkpoints and journals into one file.
///
/// `@unchecked Sendable`: one thread at a time uses a worker: its own thread between the
/// build's start and its join (`DispatchGroup.wait()`, which orders the accesses), the build's
/// thread before and after.
final class ReplayIndexWorker: @unchecked Sendable {
    /// Which sessions are this worker's: those whose id hash is `residue` modulo `modulus`.
    let residue: Int
    let modulus: Int
    /// The sessions this worker replays, and their journal.
    var live = LiveSessions()
    /// The checkpoints and end pieces of this worker's sessions.
    var writer: ReplayIndexFile.Writer
    private let compressor: ZstdCompressor
    private var reader: LocatedBlockReader
    var decoded = DecodedBlock()
    /// Events replayed.
    var replayed = 0
    /// Sessions re-derived from the events held (``rederiveHeld(_:)``).
    var rederivedFromHeldEvents = 0
    /// Blocks found damaged (their positions in the located blocks): skipped.
    var damage: [(position: Int, damage: SegmentDamage)] = []
    /// What stopped the worker, to be thrown by the build.
    var failure: (any Error)?

    /// The sessions of a worker, a slot each: their replay states and what the build knows of
    /// them, and their focus journal. A value, that the replay loop holds in a local (a field
    /// of a class costs an exclusivity check at each access, and the loop makes several per event).
    struct LiveSessions {
        /// Sessions whose replay is live in this pass, by id (the slot numbers).
        var sessionNumbers = ByteStringTable()
        var states = SlotStates()
        /// Per slot, the event count at its last checkpoint (-1 before its first in this pass).
        var lastCheckpoint: [Int] = []
        /// Sessions that received a late event in this pass (E4), or an event that proved one
        /// of their gestures cancelled (E7) when their events were not held in order
        /// (``held``): left out of the rest of the pass and replayed again in seq order from
        /// their first event at its end.
        var late: [Bool] = []
        var lateSlots: [Int] = []
        /// Of them, those marked by an event that proved a gesture cancelled (E7).
        var provedGesture = Set<Int>()
        /// Per late session, about how many events its re-derivation copies (its events applied
        /// before the late one, and those left out after), to bound the copies held at once.
        var copiedEvents: [Int] = []
        /// Sessions whose end piece is written (at their session.end) and whose state is let go,
        /// so that the build holds the states of live sessions only, not of every session the
        /// segment has seen. An event of one after that goes through re-derivation.
        var ended: [Bool] = []
        /// End pieces of an extended file, loaded when their session has an event (or at the end).
        var carriedEnd: [ReplayPiece?] = []
        /// The focus journal: records not yet compressed, and the compressed frames.
        var journal = FocusJournal.Writer()
        /// Per slot, its number in ``journal`` (-1: not asked yet since the journal began).
        var journalKeys: [Int] = []
        var compressedJournal: [UInt8] = []
        /// Per slot, every event of its session copied as the pass meets it, while a later event
        /// may still prove one of its gestures cancelled (E7: it records navigation calls alone,
        /// or such a removal is pending or unproven); nil otherwise. A session re-derived with
        /// its events held here needs no second read of the log (a pass over the blocks again
        /// cost a quarter of a build): only sessions whose first event this pass met are held,
        /// in at most ``heldByteLimit`` bytes.
        var held: [HeldSessionEvents?] = []
        /// The string tables ``held`` refers to, and about how many bytes it takes with them.
        var heldTables: [HeldSessionEvents.BlockStrings] = []
        var heldBytes = 0
        /// What ``held`` may take at most (``ReplayIndex/heldBytesPerWorker``).
        var heldByteLimit = 0
        /// How many LSNs a session with held events may go without an event before they are
        /// let go (``ReplayIndex/heldSessionIdleLSNs``).
        var heldIdleLimit: UInt64 = 0
        /// Per slot to be re-derived whose events were held, those events copied into strings
        /// of its own (``CopiedSessionEvents``) when it was marked, and its later events as the
        /// pass meets them: held as they were, it would keep the string table of every block it
        /// spans until the end of the pass.
        var waiting: [CopiedSessionEvents?] = []
        /// The slots with held events, and per slot the LSN of its last event: a session with
        /// no event in the last ``heldIdleLimit`` LSNs is let go (most sessions that stop
        /// without a `session.end` are gone for good), so that what a build holds follows the
        /// sessions live now, not every one the segment has seen.
        var heldSlots: [Int] = []
        var lastLSN: [UInt64] = []
        /// Per slot, how many times ``rederiveNow(_:)`` re-derived it in this pass.
        var rederivedNow: [UInt8] = []
        /// The string tables of the block being read that held events refer to (by where the
        /// decoded block has them): emptied at each block.
        var blockStrings: [(base: UnsafeRawPointer?, strings: HeldSessionEvents.BlockStrings)] = []

        /// Adds a slot for `session` with `state`; returns it.
        @discardableResult
        mutating func addSlot(_ session: UnsafeRawBufferPointer, state: SessionReplayer, carrying end: ReplayPiece? = nil) -> Int {
            let slot = Int(sessionNumbers.intern(session))
            states.append(state)
            lastCheckpoint.append(-1)
            late.append(false)
            copiedEvents.append(0)
            ended.append(false)
            carriedEnd.append(end)
            journalKeys.append(-1)
            held.append(nil)
            lastLSN.append(0)
            waiting.append(nil)
            rederivedNow.append(0)
            return slot
        }

        /// Copies the event `header` describes (LSN `lsn`, read through `events`) into `slot`'s
        /// held events; lets them go (the session is then re-derived, if need be, by reading
        /// the log again) when the worker's held events take ``heldByteLimit`` bytes.
        mutating func hold(_ header: DecodedBlock.EventHeader, lsn: UInt64, of events: DecodedBlock.Events, for slot: Int) {
            guard held[slot] != nil else { return }
            guard heldBytes < heldByteLimit else { return letGoHeld(slot) }
            // The block's string table of the event's group, copied once per block and group.
            let table = events.strings(ofEvent: Int(header.position))
            let strings: HeldSessionEvents.BlockStrings
            if let copied = blockStrings.first(where: { $0.base == table.bytes.baseAddress }) {
                strings = copied.strings
            } else {
                strings = HeldSessionEvents.BlockStrings(table)
                blockStrings.append((table.bytes.baseAddress, strings))
                heldTables.append(strings)
                heldBytes += strings.size
            }
            let body = events.tokens(of: header)
            held[slot]!.append(header, lsn: lsn, body: body, strings: strings)
            lastLSN[slot] = lsn
            heldBytes += HeldSessionEvents.size(ofEventWithBody: body.count)
        }

        /// Lets go of `slot`'s held events.
        mutating func letGoHeld(_ slot: Int) {
            guard let events = held[slot] else { return }
            heldBytes -= events.size
            held[slot] = nil
        }

        /// Starts holding `slot`'s events (its first event is the next).
        mutating func startHolding(_ slot: Int) {
            held[slot] = HeldSessionEvents()
            heldSlots.append(slot)
        }

        /// Before the block whose first LSN is `firstLSN`: lets go of the sessions idle for
        /// ``heldIdleLimit`` LSNs, forgets the last block's string tables, and counts out
        /// those no held event refers to any more.
        mutating func startBlock(firstLSN: UInt64) {
            var stillHeld = 0
            for position in heldSlots.indices {
                let slot = heldSlots[position]
                guard held[slot] != nil else { continue }
                if lastLSN[slot] > 0, firstLSN &- lastLSN[slot] > heldIdleLimit {
                    letGoHeld(slot)
                } else {
                    heldSlots[stillHeld] = slot
                    stillHeld += 1
                }
            }
            heldSlots.removeSubrange(stillHeld...)
            blockStrings.removeAll(keepingCapacity: true)
            var kept = 0
            for index in heldTables.indices {
                if isKnownUniquelyReferenced(&heldTables[index]) {
                    heldBytes -= heldTables[index].size
                } else {
                    heldTables.swapAt(kept, index)
                    kept += 1
                }
            }
            heldTables.removeSubrange(kept...)
        }

        /// Moves `slot`'s held events to ``waiting`` as its session is marked to be re-derived
        /// (nothing when they are not held, or one does not copy: it is then re-derived by
        /// reading the log again).
        mutating func keepForRederivation(_ slot: Int) {
            guard let events = held[slot] else { return }
            heldBytes -= events.size
            held[slot] = nil
            var copy = CopiedSessionEvents()
            var copied = true
            events.forEachReplayEvent { event, _ in
                if copied {
                    copied = copy.append(type: event.type, sequence: event.sequence, timestamp: event.timestamp, lsn: event.lsn ?? 0, body: event.body)
                }
            }
            guard copied else { return }
            heldBytes += copy.size
            waiting[slot] = copy
        }

        /// Adds an event of `slot`'s session, marked to be re-derived, to ``waiting``.
        mutating func addWaiting(_ header: DecodedBlock.EventHeader, lsn: UInt64, body: StoredBody, for slot: Int) {
            guard waiting[slot] != nil else { return }
            if waiting[slot]!.append(type: header.type, sequence: header.sequence, timestamp: header.timestamp, lsn: lsn, body: body) {
                heldBytes += HeldSessionEvents.size(ofEventWithBody: body.tokens.count)
            } else {
                waiting[slot] = nil
            }
        }

        /// Replays `slot`'s session again from its held events, now that its last event proved
        /// one of its navigation-only gestures cancelled (E7): its journal records are made
        /// again, knowing every gesture they prove, and its state becomes the true one, on
        /// which its later events are replayed as any session's. Its events stay held: a later
        /// event may prove another gesture.
        mutating func rederiveNow(_ slot: Int) {
            let known = states[slot].gesturesCancelledInHindsight
            let session = sessionNumbers.withString(UInt32(slot)) { Array($0) }
            // In log order (the caller checks it has no late event), so the sort moves nothing.
            var events = held[slot]!
            states[slot] = session.withUnsafeBytes { session in
                ReplayIndex.rederive(session, events: &events, provedGesture: true, knowing: known, journal: &journal)
            }
        }

        /// Compresses the journal so far into a frame of its own and starts a new one.
        mutating func flushJournal(_ compressor: borrowing ZstdCompressor) throws {
            guard !journal.isEmpty else { return }
            _ = try journal.finished().withBytes { (raw) throws(ZstdError) in try compressor.compress(raw, appendingTo: &compressedJournal) }
            journal = FocusJournal.Writer()
            for slot in journalKeys.indices { journalKeys[slot] = -1 }
        }
    }

    /// A worker compressing at zstd `level`.
    init(residue: Int, modulus: Int, level: Int32) throws {
        (self.residue, self.modulus) = (residue, modulus)
        writer = try ReplayIndexFile.Writer(level: level)
        compressor = try ZstdCompressor(level: level, contentChecksum: false)
        reader = try LocatedBlockReader()
    }

    /// How many times a pass re-derives a session at the event that proved a gesture (each
    /// replays all its events so far); past that, once more at the end of the pass, so that a
    /// session proving gestures all along costs a few replays of itself, not one per proof.
    static let rederivationsAtOnce: UInt8 = 4

    /// Whether `session` is this worker's.
    func owns(_ session: UnsafeRawBufferPointer) -> Bool {
        modulus == 1 || Int(StringHash.hash(session) % UInt64(modulus)) == residue
    }

    /// Compresses the journal so far into a frame of its own.
    func flushJournal() throws { try live.flushJournal(compressor) }

    /// Reads block `block` of segment `segment` of `log` with this worker's reader (a
    /// re-derivation's copy pass, E4/E7): of a grouped block only this worker's groups unless
    /// `whole`; its damage is recorded in the log's. False when damaged or gone.
    func read(segment: Int, block: Int, whole: Bool, of log: LogReader, into decoded: inout DecodedBlock) throws -> Bool {
        guard let located = try log.locateBlocks(segment: segment, block..<(block + 1)), !located.numbers.isEmpty else { return false }
        let damage = whole ? try reader.readWhole(located, at: 0, into: &decoded) : try reader.read(located, at: 0, into: &decoded, residue: residue, modulus: modulus)
        if let damage {
            log.recordDamage(damage)
            return false
        }
        return true
    }

    /// Whether the end pieces of the sessions not re-derived are written (at the end of ``run``).
    private(set) var wroteSettledEnds = false

    /// Writes the end pieces of the sessions live at the end of the pass that were not
    /// re-derived (those are written as their re-derivation ends: ``writeEndPiece(of:in:)``).
    func writeSettledEndPieces(of live: inout LiveSessions, shared: ReplayIndexBuildContext) throws {
        for slot in live.states.indices where !live.late[slot] && !live.ended[slot] {
            if let carried = live.carriedEnd[slot] {
                // Untouched in this pass: its end piece as the file had it, its state as encoded.
                if carried.hasEndState, carried.frame != ReplayPiece.noState {
                    let encoded = try shared.carriedEncodedState(carried)
                    try live.sessionNumbers.withString(UInt32(slot)) { raw in try writer.add(session: raw, piece: carried, encodedState: encoded) }
                } else {
                    let state = carried.hasEndState ? SessionReplayer() : nil
                    try live.sessionNumbers.withString(UInt32(slot)) { raw in try writer.add(session: raw, piece: carried, state: state) }
                }
                continue
            }
            try writeEndPiece(of: slot, in: &live)
        }
    }

    /// Writes the end piece of `slot`'s session from its state.
    func writeEndPiece(of slot: Int, in live: inout LiveSessions) throws {
        let state = live.states[slot]
        try live.sessionNumbers.withString(UInt32(slot)) { raw in try writer.add(session: raw, piece: ReplayIndex.endPiece(state), state: state) }
    }

    /// Replays this worker's sessions through `blocks` (segment `segment`), checkpointing and
    /// journaling them; stops early (``failure``) on an error or when `shared` says another
    /// worker failed. `progress` (the build's own thread only) is told the events replayed by
    /// every worker so far, after each block.
    func run(_ blocks: LogReader.LocatedBlocks, segment: Int, shared: ReplayIndexBuildContext, progress: ((Int) -> Void)?) {
        // The block and the sessions in locals while the loop runs: a call on a property of
        // this class would copy the whole block for each event (its closure may change the
        // class), and each access to one is checked for exclusivity.
        var decoded = DecodedBlock()
        var live = LiveSessions()
        swap(&decoded, &self.decoded)
        swap(&live, &self.live)
        live.heldByteLimit = shared.heldByteLimit
        live.heldIdleLimit = shared.heldIdleLimit
        defer {
            swap(&decoded, &self.decoded)
            swap(&live, &self.live)
        }
        do {
            try replay(blocks, segment: segment, shared: shared, progress: progress, decoded: &decoded, live: &live)
            // What needs neither the log nor another worker, here rather than on the build's
            // thread after the join: the end pieces of the sessions not re-derived, and the
            // journal so far compressed (together ~9% of a 2M-event build).
            if !shared.stopped {
                try rederiveHeld(&live)
                try writeSettledEndPieces(of: &live, shared: shared)
                try live.flushJournal(compressor)
                wroteSettledEnds = true
            }
        } catch {
            failure = error
            shared.stopAll()
        }
    }

    /// Re-derives the late sessions whose events this worker holds (``LiveSessions/waiting``),
    /// here on its own thread, as no read of the log is needed, and writes their end pieces;
    /// the others stay in ``LiveSessions/lateSlots`` for ``ReplayIndex`` to re-derive after
    /// the join, reading the log again.
    private func rederiveHeld(_ live: inout LiveSessions) throws {
        var left: [Int] = []
        for slot in live.lateSlots {
            guard var events = live.waiting[slot] else {
                left.append(slot)
                continue
            }
            live.waiting[slot] = nil
            let session = live.sessionNumbers.withString(UInt32(slot)) { Array($0) }
            let proved = live.provedGesture.contains(slot)
            live.states[slot] = session.withUnsafeBytes { session in
                ReplayIndex.rederive(session, events: &events, provedGesture: proved, knowing: [], journal: &live.journal)
            }
            try writeEndPiece(of: slot, in: &live)
            live.states.letGo(slot)
            rederivedFromHeldEvents += 1
        }
        live.lateSlots = left
    }

    /// Replays this worker's sessions in `blocks` of `segment`: checkpoints, end pieces and
    /// journal records, late and re-derived sessions set aside (E4, E7).
    private func replay(
        _ blocks: LogReader.LocatedBlocks, segment: Int, shared: ReplayIndexBuildContext, progress: ((Int) -> Void)?, decoded: inout DecodedBlock,
        live: inout LiveSessions
    ) throws {
        // Per session of the block: its slot, -1 before it is looked up, -2 when it is another
        // worker's (each is looked up once per block, not per event).
        var slotOfBlockSession: [Int32] = []
        var order: [Int32] = []
        var headers: [DecodedBlock.EventHeader] = []
        for position in blocks.numbers.indices {
            if shared.stopped { return }
            guard try readOwnSessions(blocks, at: position, into: &decoded, slots: &slotOfBlockSession) else { continue }
            var replayedHere = 0
            live.startBlock(firstLSN: decoded.firstLSN)
            // Session by session (sessions do not interact; each one's events in log order).
            decoded.decodedPositionsBySession(into: &order)
            decoded.gatherHeaders(at: order, into: &headers)
            try decoded.withEvents { events in
                for header in headers {
                    let blockSession = Int(header.session)
                    // Only decoded events are in `order`; of a block read whole, other workers' too.
                    var slot = Int(slotOfBlockSession[blockSession])
                    guard slot != -2 else { continue }
                    let session = events.session(ofEvent: Int(header.position))
                    if slot < 0 {
                        if let reference = live.sessionNumbers.reference(of: session) {
                            slot = Int(reference)
                        } else {
                            slot = try Self.addNewSession(session, before: segment, shared: shared, to: &live)
                        }
                        slotOfBlockSession[blockSession] = Int32(slot)
                    }
                    replayedHere += 1
                    try indexEvent(header, of: events, lsn: decoded.lsn(Int(header.position)), slot: slot, block: blocks.numbers[position], shared: shared, live: &live)
                }
            }
            replayed += replayedHere
            let total = shared.addReplayed(replayedHere)
            progress?(total)
            // Journal frames of about 8 MB (all workers together), compressed as they fill.
            if live.journal.recordBytes >= (8 << 20) / modulus { try live.flushJournal(compressor) }
        }
    }

    /// Reads block `position` for this worker's sessions (whole when another writer grouped
    /// them otherwise) and marks each of its sessions as this worker's (-1) or not (-2) in
    /// `slots`; false when the block is damaged (noted in ``damage``).
    private func readOwnSessions(
        _ blocks: LogReader.LocatedBlocks, at position: Int, into decoded: inout DecodedBlock, slots: inout [Int32]
    ) throws -> Bool {
        if let damaged = try reader.read(blocks, at: position, into: &decoded, residue: residue, modulus: modulus) {
            damage.append((position, damaged))
            return false
        }
        var regrouped = false
        slots.removeAll(keepingCapacity: true)
        decoded.withStrings { table in
            for number in 0..<table.count {
                let mine = table[number].map(owns) ?? false
                slots.append(mine ? -1 : -2)
                // A block another writer grouped otherwise: one of this worker's sessions in
                // a group it did not read.
                if mine && !decoded.isSessionDecoded(number) { regrouped = true }
            }
        }
        if regrouped, let damaged = try reader.readWhole(blocks, at: position, into: &decoded) {
            damage.append((position, damaged))
            return false
        }
        return true
    }

    /// Indexes one event of the session in `slot`: resumes a session carried from an earlier
    /// segment, sets the event aside for a late or ended session, else applies it and settles
    /// what it did (``ReplayIndex/Indexed``).
    private func indexEvent(
        _ header: DecodedBlock.EventHeader, of events: DecodedBlock.Events, lsn: UInt64, slot: Int, block: Int,
        shared: ReplayIndexBuildContext, live: inout LiveSessions
    ) throws {
        let index = Int(header.position)
        if let end = live.carriedEnd[slot] {
            live.carriedEnd[slot] = nil
            if end.hasEndState {
                live.states[slot] = try shared.carriedState(end)
            } else {
                // Ended, its state let go: an event after its end is replayed with all of its events.
                live.ended[slot] = true
                live.copiedEvents[slot] = Int(end.startIndex)
                live.states.letGo(slot)
            }
        }
        if live.late[slot] {
            live.copiedEvents[slot] += 1
            let body = StoredBody(tokens: events.tokens(of: header), strings: events.strings(ofEvent: index))
            live.addWaiting(header, lsn: lsn, body: body, for: slot)
            return
        }
        if live.ended[slot] {
            // After its session.end (its state let go): replayed again at the end.
            live.late[slot] = true
            live.lateSlots.append(slot)
            live.copiedEvents[slot] += 1
            return
        }
        let session = events.session(ofEvent: index)
        if live.journalKeys[slot] < 0 { live.journalKeys[slot] = live.journal.key(of: session) }
        live.hold(header, lsn: lsn, of: events, for: slot)
        let indexed = try ReplayIndex.index(
            header.type, sequence: header.sequence, timestamp: header.timestamp, lsn: lsn, block: block,
            session: session, strings: events.strings(ofEvent: index), tokens: events.tokens(of: header), state: &live.states[slot],
            lastCheckpoint: &live.lastCheckpoint[slot], checkpointInterval: shared.checkpointInterval, writer: &writer, journal: &live.journal,
            journalKey: live.journalKeys[slot])
        settle(indexed, slot: slot, live: &live)
    }

    /// What the session in `slot` becomes after an event was indexed.
    private func settle(_ indexed: ReplayIndex.Indexed, slot: Int, live: inout LiveSessions) {
        switch indexed {
        case .applied:
            if live.held[slot] != nil, !live.states.read(slot, fallback: true, { $0.mayStillProveGestureCancelled }) {
                live.letGoHeld(slot)
            }
        case .provedCancelledGesture
        where live.held[slot] != nil && live.rederivedNow[slot] < ReplayIndexWorker.rederivationsAtOnce
            && live.states.read(slot, fallback: 1, { $0.lateEvents }) == 0:
            // Its events held, in order: re-derived here, and replayed on.
            live.rederiveNow(slot)
            live.rederivedNow[slot] += 1
            rederivedFromHeldEvents += 1
        case .late(let events), .provedCancelledGesture(let events):
            live.late[slot] = true
            live.lateSlots.append(slot)
            live.copiedEvents[slot] = events
            live.keepForRederivation(slot)
            if case .provedCancelledGesture = indexed { live.provedGesture.insert(slot) }
            // Re-derived from its first event at the end of the pass: its state
            // until then is of no use, and the build holds live sessions' only.
            live.states.letGo(slot)
        case .ended(let events):
            live.ended[slot] = true
            live.copiedEvents[slot] = events
            live.states.letGo(slot)
            live.letGoHeld(slot)
        }
    }

    /// Starts a slot for a session first met in this pass, with its state at the end of the
    /// segments before (or as an ended session to replay with all its events).
    private static func addNewSession(
        _ session: UnsafeRawBufferPointer, before segment: Int, shared: ReplayIndexBuildContext, to live: inout LiveSessions
    ) throws -> Int {
        let previous = try shared.previousState(of: session, before: segment)
        if case .state(let state) = previous { return live.addSlot(session, state: state) }
        let slot = live.addSlot(session, state: SessionReplayer())
        // Its first event: its events are held from here while a gesture may be proved.
        if case .none = previous, live.heldByteLimit > 0 { live.startHolding(slot) }
        if case .ended(let events) = previous {
            // Its state was let go at its end in an earlier segment: replayed with all its events.
            live.copiedEvents[slot] = events
            live.ended[slot] = true
            live.states.letGo(slot)
        }
        return slot
    }
}

/// What the workers of one segment's build share: the lookups into index files (earlier
/// segments' end states, the extended file's carried states), one at a time; the count of
/// events replayed; whether a worker failed.
///
/// `@unchecked Sendable`: `index` and `existing` are used only while `lock` is held (their
/// file readers cache a frame and share a zstd context); the rest is atomic or immutable.
final class ReplayIndexBuildContext: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private let index: ReplayIndex
    private let existing: ReplayIndexFile.Reader?
    private let segment: Int
    private let replayedSoFar = Atomic<Int>(0)
    private let failed = Atomic<Bool>(false)
    /// See ``ReplayIndex/checkpointInterval``.
    let checkpointInterval: Int
    /// See ``ReplayIndex/heldBytesPerWorker``.
    let heldByteLimit: Int
    /// See ``ReplayIndex/heldSessionIdleLSNs``.
    let heldIdleLimit: UInt64

    init(index: ReplayIndex, segment: Int, extending existing: ReplayIndexFile.Reader?) {
        (self.index, self.segment, self.existing) = (index, segment, existing)
        checkpointInterval = index.checkpointInterval
        heldByteLimit = index.heldBytesPerWorker
        heldIdleLimit = index.heldSessionIdleLSNs
    }

    /// Whether a worker failed (the others stop at their next block).
    var stopped: Bool { failed.load(ordering: .relaxed) }

    func stopAll() { failed.store(true, ordering: .relaxed) }

    /// Adds `count` events to those replayed; returns the total so far.
    func addReplayed(_ count: Int) -> Int { replayedSoFar.add(count, ordering: .relaxed).newValue }

    /// The state of `session` at the end of the last segment before `segment` that holds it.
    func previousState(of session: UnsafeRawBufferPointer, before segment: Int) throws -> ReplayIndex.PreviousEnd {
        let id = String(decoding: session, as: UTF8.self)
        return try lock.withLock { _ in try index.previousState(of: id, before: segment) }
    }

    /// The end state an extended file holds at `piece`, as encoded (a session the pass left
    /// untouched keeps it as it is); a damaged one is handled as ``carriedState(_:)`` does.
    func carriedEncodedState(_ piece: ReplayPiece) throws -> ArraySlice<UInt8> {
        guard let encoded = lock.withLock({ _ in existing?.encodedState(piece) }) else { throw rebuildingFromThisSegment() }
        return encoded
    }

    /// The end state an extended file holds at `piece`; a damaged one removes the file and
    /// has the build start again from this segment (a session started afresh would make
    /// every later checkpoint of it wrong).
    func carriedState(_ piece: ReplayPiece) throws -> SessionReplayer {
        guard piece.frame != ReplayPiece.noState else { return SessionReplayer() }
        guard let state = try carriedEncodedState(piece).withUnsafeBytes({ SessionReplayer(checkpoint: $0) }) else { throw rebuildingFromThisSegment() }
        return state
    }

    /// Removes this segment's damaged file; the error that has the build start again from it.
    private func rebuildingFromThisSegment() -> ReplayIndex.RebuildFrom {
        lock.withLock { _ in index.discard(segment) }
        return ReplayIndex.RebuildFrom(segment: segment)
    }
}

/// The replay states of a worker's sessions, by slot, held only for sessions that have one: a
/// session whose state was let go at its end gives its place to the next session, so the build
/// holds as many states as sessions live at once, not one per session of the segment (a state
/// is about 900 bytes inline, and a segment sees thousands of short sessions).
struct SlotStates {
    /// The states, and which of them are free.
    private var pool: [SessionReplayer] = []
    private var free: [Int32] = []
    /// Per slot, its state's place in `pool` (-1: let go).
    private var place: [Int32] = []

    /// The slots, in order.
    var indices: Range<Int> { 0..<place.count }

    /// Adds a slot holding `state`.
    mutating func append(_ state: SessionReplayer) {
        place.append(-1)
        self[place.count - 1] = state
    }

    /// The state of `slot` (a fresh one for a slot whose state was let go); set to give it one.
    subscript(slot: Int) -> SessionReplayer {
        get { place[slot] >= 0 ? pool[Int(place[slot])] : SessionReplayer() }
        _modify {
            if place[slot] < 0 { place[slot] = take() }
            yield &pool[Int(place[slot])]
        }
    }

    /// Reads the state of `slot` in place (the getter above copies the whole state: ~900 bytes
    /// and a retain of each of its arrays); `fallback` for a slot whose state was let go.
    mutating func read<R>(_ slot: Int, fallback: R, _ body: (inout SessionReplayer) -> R) -> R {
        let position = Int(place[slot])
        guard position >= 0 else { return fallback }
        // In place, as `inout`: a borrowing read of an array's element still loads a copy of
        // it (perf: 4% of the index build in copies and releases of the state).
        return body(&pool[position])
    }

    /// Lets the state of `slot` go (its session ended; it has no state until one is set).
    mutating func letGo(_ slot: Int) {
        guard place[slot] >= 0 else { return }
        pool[Int(place[slot])] = SessionReplayer()
        free.append(place[slot])
        place[slot] = -1
    }

    /// A free place in `pool`.
    private mutating func take() -> Int32 {
        if let reused = free.popLast() { return reused }
        pool.append(SessionReplayer())
        return Int32(pool.count - 1)
    }
}
