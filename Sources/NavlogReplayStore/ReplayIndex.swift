import Dispatch
import NavlogEvents
public import NavlogReplay
public import NavlogStore
import NavlogZstd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The replay index of a data directory: per segment, every session's serialized replay state
/// at its first event there and then every ``checkpointInterval`` of its events (checkpoints),
/// so that replaying any point of a session applies fewer than that many events after the
/// nearest checkpoint.
///
/// Checkpoints are derived data: built from the log on demand (``refresh()``), checked
/// (versions, CRC-32C, the segment blocks they were built from) and rebuilt when missing or
/// stale, never trusted over the events. Works while navlogd appends: only complete blocks are
/// indexed, and the active segment's file is extended as blocks are added.
public final class ReplayIndex {
    /// Where the index files are, or nil when no writable place was found (replays then read
    /// sessions from their first event).
    public let directory: String?
    /// The log.
    public let log: LogReader

    /// What the last ``refresh()`` did.
    public private(set) var lastRefresh = RefreshReport()

    /// What a refresh built.
    public struct RefreshReport: Sendable, Equatable {
        /// Segment files written (new, extended or rebuilt).
        public var filesWritten = 0
        /// Events replayed to write them.
        public var eventsReplayed = 0
        /// Stale files removed (their segment is gone).
        public var filesRemoved = 0
        /// Files another navlog version wrote (another index format or checkpoint version),
        /// rebuilt for this one: commands say so once.
        public var filesOfAnotherVersion = 0
        /// The index format of those files (the first one met).
        public var otherFormat: Int?
    }

    private var readers: [String: ReplayIndexFile.Reader] = [:]

    /// Opens the index of `log`'s directory: `<data-dir>/replay`, or `directory` when given
    /// (relative paths from the working directory). ``directory`` is nil when that place
    /// cannot be created or written.
    public init(log: LogReader, directory: String? = nil) {
        self.log = log
        // Only the data directory, or the place the user named: nothing is written elsewhere.
        // When neither can be used the index is nil; commands that need it say so.
        let place = ReplayFiles.absolute(directory ?? log.directory + "/replay")
        self.directory = ReplayFiles.makeWritableDirectory(place) ? place : nil
    }

    static func fileName(ofSegment segment: String) -> String { segment + ".nrx" }

    private func path(_ segment: String) -> String? { directory.map { $0 + "/" + Self.fileName(ofSegment: segment) } }

    /// The checked index file of segment `number` when it covers exactly the segment's current blocks.
    private func reader(_ number: Int) -> ReplayIndexFile.Reader? {
        let segment = log.segments[number]
        if let cached = readers[segment.name], cached.coverage.isPrefix(of: segment.blocks) { return cached }
        guard let path = path(segment.name), let reader = ReplayIndexFile.Reader(path: path),
            reader.coverage.isPrefix(of: segment.blocks)
        else { return nil }
        readers[segment.name] = reader
        return reader
    }

    // MARK: Building

    /// Brings the index up to date with the log: writes files for new segments and blocks,
    /// rebuilds missing or damaged ones, removes those whose segment is gone.
    /// - Parameter progress: told the events replayed so far, now and then (for a progress line).
    public func refresh(progress: ((Int) -> Void)? = nil) throws {
        var report = RefreshReport()
        guard let directory else {
            lastRefresh = report
            return
        }
        // One refresh at a time (`navlog index --follow` and the commands that refresh on their
        // own): a second one waits for the first, rather than replaying the same events beside
        // it, and then reads the log again, since the file the first wrote may cover blocks
        // this view of the log had not seen (such a file would look stale to it, and the whole
        // segment would be built again).
        let lock = ReplayFiles.lockForRefresh(directory, patience: refreshLockPatience)
        defer { if let lock { close(lock) } }
        try? log.refresh()
        // Files a build that crashed was writing.
        DurableFile.removeAbandonedTemporaries(inDirectory: directory)
        let segments = log.segments
        let wanted = Set(segments.map { Self.fileName(ofSegment: $0.name) })
        for name in ReplayFiles.names(in: directory) where name.hasSuffix(".nrx") && !wanted.contains(name) {
            ReplayFiles.remove(directory + "/" + name)
            report.filesRemoved += 1
        }
        // Damage records of segments that are gone (retention, recovery) go with them.
        let wantedDamage = Set(segments.map { Self.damageFileName(ofSegment: $0.name) })
        for name in ReplayFiles.names(in: directory) where name.hasSuffix(".damage") && !wantedDamage.contains(name) {
            ReplayFiles.remove(directory + "/" + name)
        }
        var number = 0
        // Each rebuild from an earlier segment removes a damaged file; there are only so many.
        var rebuildsLeft = segments.count + 1
        while number < segments.count {
            defer { number += 1 }
            let existing = reader(number)
            if existing == nil, let path = path(segments[number].name), let other = ReplayIndexFile.Reader.otherVersion(path: path) {
                report.filesOfAnotherVersion += 1
                report.otherFormat = report.otherFormat ?? Int(other.format)
            }
            let covered = Int(existing?.coverage.blockCount ?? 0)
            if existing != nil, covered == segments[number].blocks.count { continue }
            let before = report.eventsReplayed
            do {
                report.eventsReplayed += try build(segment: number, extending: existing) { progress?(before + $0) }
                report.filesWritten += 1
            } catch let rebuild as RebuildFrom where rebuildsLeft > 0 {
                rebuildsLeft -= 1
                number = rebuild.segment - 1  // the loop's step makes it that segment
            }
        }
        lastRefresh = report
    }

    /// The damage the index builds met, as the reader described it, for the log's current
    /// segments: commands that answer from the index without reading those blocks again say
    /// it every time, not only the command that built the index.
    public func recordedDamage() -> [String] {
        guard let directory else { return [] }
        return log.segments.flatMap { Self.damageLines(directory + "/" + Self.damageFileName(ofSegment: $0.name)) }
    }

    static func damageFileName(ofSegment segment: String) -> String { segment + ".damage" }

    /// The lines of a damage record (none when it is missing or unreadable).
    private static func damageLines(_ path: String) -> [String] {
        guard let file = try? StoreFile(path: path, writable: false), let size = try? file.size(), let bytes = try? file.read(at: 0, count: size) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Keeps the damage met while building segment `name`'s file beside it (merged with what an
    /// earlier build of its first blocks met), or removes the record when there is none.
    private func recordDamage(segment name: String, met: [String], extending: Bool) {
        guard let directory else { return }
        let fileName = Self.damageFileName(ofSegment: name)
        var lines = extending ? Self.damageLines(directory + "/" + fileName) : []
        for line in met where !lines.contains(line) { lines.append(line) }
        if lines.isEmpty {
            ReplayFiles.remove(directory + "/" + fileName)
        } else {
            _ = ReplayFiles.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), directory: directory, name: fileName)
        }
    }

    /// The zstd level of a segment's index file: 3 while the segment may grow or be compacted,
    /// 9 once compaction wrote it again above the writer's level
    /// (``LogOptions/sealedCompressionLevel``): that file is built once more and then kept as
    /// long as the segment, so it is worth 4–6× the compression time for checkpoint states ~10%
    /// and journals ~3% smaller (docs/BENCHMARKS.md, issue 14, seventh part).
    static func compressionLevel(of segment: LogReader.SegmentSummary) -> Int32 {
        segment.sealed && segment.compressionLevel > Int(LogOptions().compressionLevel) ? 9 : 3
    }

    /// Writes segment `number`'s file: from its first block, or after the blocks `existing` covers.
    ///
    /// ``workers`` workers replay the segment's new blocks at once, each the sessions whose id
    /// hash falls to it (``ReplayIndexWorker``); their checkpoints and journals are then merged
    /// into the file: a session's pieces and journal records all come from one worker, in
    /// the order of its events.
    private func build(segment number: Int, extending existing: ReplayIndexFile.Reader?, progress: ((Int) -> Void)? = nil) throws -> Int {
        let damageBefore = log.damage.count
        let segmentName = log.segments[number].name
        defer {
            let met = log.damage.count > damageBefore ? log.damage[damageBefore...].map(\.description) : []
            recordDamage(segment: segmentName, met: met, extending: existing != nil)
        }
        let segment = log.segments[number]
        let firstBlock = Int(existing?.coverage.blockCount ?? 0)
        let level = Self.compressionLevel(of: segment)
        var writer = try ReplayIndexFile.Writer(level: level)
        var compressedJournal: [UInt8] = []
        let modulus = max(1, workers)
        let team = try (0..<modulus).map { try ReplayIndexWorker(residue: $0, modulus: modulus, level: level) }
        let shared = ReplayIndexBuildContext(index: self, segment: number, extending: existing)

        if let existing {
            guard let kept = existing.compressedJournal() else { return try build(segment: number, extending: nil, progress: progress) }
            compressedJournal = kept
            // Keep what the file has: its block pieces as they are; its end pieces start the
            // sessions that continue (or are copied when they do not), each in its worker.
            for session in existing.sessions() {
                guard let pieces = existing.pieces(of: session) else { continue }
                for piece in pieces where piece.block != ReplayPiece.endOfSegment {
                    guard piece.frame != ReplayPiece.noState else {
                        try withUTF8(session) { raw in try writer.add(session: raw, piece: piece, state: nil) }
                        continue
                    }
                    guard let encoded = existing.encodedState(piece) else { return try build(segment: number, extending: nil, progress: progress) }
                    try withUTF8(session) { raw in try writer.add(session: raw, piece: piece, encodedState: encoded) }
                }
                if let end = pieces.last, end.block == ReplayPiece.endOfSegment {
                    withUTF8(session) { raw in
                        let worker = team.first { $0.owns(raw) } ?? team[0]
                        worker.live.addSlot(raw, state: SessionReplayer(), carrying: end)
                    }
                }
            }
        }
        if let blocks = try log.locateBlocks(segment: number, firstBlock..<segment.blocks.count) {
            // The other workers on threads of their own, the first on this one (which alone
            // reports progress).
            let group = DispatchGroup()
            for worker in team.dropFirst() {
                DispatchQueue.global(qos: .userInitiated).async(group: group) { worker.run(blocks, segment: number, shared: shared, progress: nil) }
            }
            team[0].run(blocks, segment: number, shared: shared, progress: progress)
            group.wait()
            // The damage every worker met, once, in block order (workers reading the same
            // block meet the same damage).
            for (_, damage) in team.flatMap(\.damage).sorted(by: { $0.position < $1.position }) { log.recordDamage(damage) }
        }
        if let failure = team.lazy.compactMap(\.failure).first { throw failure }
        var replayed = 0
        for worker in team {
            rederivedFromHeldEvents += worker.rederivedFromHeldEvents
            rederivedByReading += worker.live.lateSlots.count
            try finish(worker, throughSegment: number, shared: shared)
            // The last frame (an extended file keeps its old frames and adds its workers').
            try worker.flushJournal()
            try writer.append(&worker.writer)
            compressedJournal.append(contentsOf: worker.live.compressedJournal)
            replayed += worker.replayed
        }
        let bytes = try writer.finish(coverage: ReplayIndexFile.Coverage(blocks: segment.blocks[...]), journal: compressedJournal)
        if let directory, !ReplayFiles.writeAtomically(bytes, directory: directory, name: Self.fileName(ofSegment: segment.name)) {
            throw ReplayIndexError(code: .unwritable, message: "Could not write the replay index file in \(directory). Check its permissions and free space.")
        }
        readers[segment.name] = nil
        return replayed
    }

    /// Ends `worker`'s part of a build: re-derives its late sessions (E4) and writes their end
    /// pieces (and those of the others, when the worker did not: it had no blocks to read).
    private func finish(_ worker: ReplayIndexWorker, throughSegment number: Int, shared: ReplayIndexBuildContext) throws {
        // The worker's sessions and block in locals: a re-derivation changes both the states and
        // the journal, two fields of the same property of a class.
        var live = ReplayIndexWorker.LiveSessions()
        var decoded = DecodedBlock()
        swap(&live, &worker.live)
        swap(&decoded, &worker.decoded)
        defer {
            swap(&live, &worker.live)
            swap(&decoded, &worker.decoded)
        }
        // In groups of about a million events (about 100 MB of copies): a pass over the blocks
        // per group, and memory that does not grow with the number of late sessions.
        var group: [Int] = []
        var groupEvents = 0
        for (position, slot) in live.lateSlots.enumerated() {
            group.append(slot)
            groupEvents += live.copiedEvents[slot]
            if groupEvents >= rederivedEventsPerPass || position == live.lateSlots.count - 1 {
                try rederive(
                    group, sessionNumbers: live.sessionNumbers, states: &live.states, throughSegment: number, journal: &live.journal, decoded: &decoded,
                    proved: live.provedGesture,
                    read: { segment, block, whole, decoded in try worker.read(segment: segment, block: block, whole: whole, of: self.log, into: &decoded) })
                // Their end pieces now, and their states let go: a build holds one group's.
                for slot in group {
                    try worker.writeEndPiece(of: slot, in: &live)
                    live.states.letGo(slot)
                }
                group.removeAll()
                groupEvents = 0
            }
        }
        if !worker.wroteSettledEnds { try worker.writeSettledEndPieces(of: &live, shared: shared) }
    }

    /// How long a refresh waits for another one (``refresh(progress:)``) before it goes on
    /// without the lock: a refresher stopped or hung must not stop every reader.
    public var refreshLockPatience = Duration.seconds(120)

    /// Workers a build uses, each on a core of its own (a build is CPU-bound): 1, 2 or 4, as
    /// many as there are processors online (a grouped block's group count is a multiple of 2,
    /// and of 4 from 4 groups on, so that each worker reads whole groups).
    public var workers = ReplayIndex.defaultWorkers

    /// See ``workers``.
    public static var defaultWorkers: Int {
        let processors = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return processors >= 4 ? 4 : processors >= 2 ? 2 : 1
    }

    /// A session gets a checkpoint every this many of its events (and at its first event in each
    /// segment): the size of the index follows the events, not sessions × blocks (issue 14),
    /// and a replay from a checkpoint applies fewer than this many events.
    ///
    /// Measured on 2M production-shaped events (docs/BENCHMARKS.md): a state takes ~1.8 KB
    /// compressed, and a process replaying a point spends about half of its ~40 ms starting;
    /// 256 gave a 15.8 MB index and 42 ms at the end of the longest sessions, 1024 a 7.0 MB
    /// index and 65 ms there (91 ms at most), no checkpoint at all 5.7 MB and 41 ms on random
    /// points but a replay as long as the session.
    public var checkpointInterval = 1024

    /// Events whose copies one E4 re-derivation pass holds at most (one session more than
    /// this): about 100 MB. Tests set it small to make several passes.
    public var rederivedEventsPerPass = 1 << 20

    /// How many times this index's builds re-derived a session (E4, E7) from the events their
    /// pass held (once per event that proved a gesture cancelled), and how many sessions by
    /// reading the log again after the pass (``heldBytesPerWorker``): what tests and
    /// benchmarks look at.
    public private(set) var rederivedFromHeldEvents = 0
    public private(set) var rederivedByReading = 0

    /// The bytes each worker of a build may take at most to hold events for re-derivation (E7,
    /// E4), copied as its pass meets them (``ReplayIndexWorker/LiveSessions/held``) with the
    /// string tables of their blocks. A session whose events are not held (past this, or met
    /// first in an earlier segment) is re-derived by reading the log again after the pass.
    /// Tests set it to 0 to take that road.
    public var heldBytesPerWorker = 24 << 20

    /// How many LSNs a session whose events a build holds (``heldBytesPerWorker``) may go
    /// without an event before they are let go: ~450 times the mean gap between a session's
    /// events with 560 sessions live (workload.md). Most sessions that stop without a
    /// `session.end` are gone for good; one proved later is re-derived by reading the log
    /// again. Tests set it small to take that road.
    public var heldSessionIdleLSNs: UInt64 = 1 << 18

    /// Replays the sessions in `slots` again from their first event, with their events in `seq`
    /// order (E4) and the navigation-only gestures their events prove cancelled rolled back at
    /// their own events (E7), through segment `lastSegment`: their states become the sessions'
    /// true states and their journal records replace every earlier record of theirs (see
    /// ``FocusJournal/Writer/beginRederived(session:)``). One pass over the blocks copies the
    /// events of all of them out, so each block is read once however scattered they are.
    private func rederive(
        _ slots: [Int], sessionNumbers: ByteStringTable, states: inout SlotStates, throughSegment lastSegment: Int,
        journal: inout FocusJournal.Writer, decoded: inout DecodedBlock, proved: Set<Int>, read: @escaping SessionEventOrder.BlockRead
    ) throws {
        let ids = slots.map { slot in sessionNumbers.withString(UInt32(slot)) { String(decoding: $0, as: UTF8.self) } }
        // Through the worker's reader: of a grouped block, only its groups, into the buffers the
        // pass used (a reader of whole blocks would add its own, several times as large).
        let copies = try SessionEventOrder.copyEvents(of: ids, log: log, throughSegment: lastSegment, decoded: &decoded, read: read)
        for (number, slot) in slots.enumerated() {
            var events = copies[number]
            states[slot] = withUTF8(ids[number]) { session in
                Self.rederive(session, events: &events, provedGesture: proved.contains(slot), knowing: [], journal: &journal)
            }
        }
    }

    /// Replays `session` again from its first event with `events` (all of its events, in log
    /// order; sorted here) in `seq` order (E4), its navigation-only gestures that its events
    /// prove cancelled rolled back at their own events (E7), journaling it afresh; returns its
    /// true state. `provedGesture`: one of its events proved a gesture cancelled (rather than
    /// only arriving late); `known`: the gestures a straight replay of all of its events
    /// proved cancelled, when the build followed it (empty when it did not).
    static func rederive<Events: SessionEventsForReplay>(
        _ session: UnsafeRawBufferPointer, events: inout Events, provedGesture: Bool, knowing known: [SessionReplayer.CancelledGesture], journal: inout FocusJournal.Writer
    ) -> SessionReplayer {
        events.sortForReplay()
        func journaled(knowing cancelled: [SessionReplayer.CancelledGesture]) -> SessionReplayer {
            var state = SessionReplayer(gesturesCancelledInHindsight: cancelled)
            journal.beginRederived(session: session)
            let key = journal.key(of: session)
            events.forEachReplayEvent { event, late in
                if late { state.noteLateEvent() }
                let before = FocusJournal.Before(state)
                state.apply(event)
                journal.record(event.type, key: key, before: before, after: state, timestamp: event.timestamp)
            }
            return state
        }
        func gesturesFound(knowing cancelled: [SessionReplayer.CancelledGesture]) -> [SessionReplayer.CancelledGesture] {
            SessionReplayer.replayingWithHindsight(knowing: cancelled) { state in
                events.forEachReplayEvent { event, late in
                    if late { state.noteLateEvent() }
                    state.apply(event)
                }
            }.gesturesCancelledInHindsight
        }
        // A session re-derived for a proved gesture (E7) whose straight replay the build did
        // not follow: the gestures first, then the one replay that journals. One it followed,
        // or a late one (E4): the journaling replay knowing what is known, then, only if that
        // replay proves more (a rolled-back gesture changed what a later call acts through, or
        // a late event a gesture), its records made again knowing them all (the first ones
        // are void: ``FocusJournal/Writer/beginRederived(session:)``).
        var state = journaled(knowing: provedGesture && known.isEmpty ? gesturesFound(knowing: []) : known)
        if state.gesturesCancelledInHindsight.count > known.count, !(provedGesture && known.isEmpty) {
            state = journaled(knowing: gesturesFound(knowing: state.gesturesCancelledInHindsight))
        }
        return state
    }

    /// The state of `session` at the end of the last segment before `segment` that holds it.
    /// - Throws: ``RebuildFrom`` when that segment's file turns out damaged where the state is
    ///   (it is removed): starting the session afresh would make every checkpoint after it wrong.
    func previousState(of session: String, before segment: Int) throws -> PreviousEnd {
        var number = segment - 1
        while number >= 0 {
            if let reader = reader(number) {
                switch reader.lookup(session) {
                case .absent: break
                case .damaged:
                    discard(number)
                    throw RebuildFrom(segment: number)
                case .found(let pieces):
                    if let end = pieces.last, end.block == ReplayPiece.endOfSegment {
                        guard end.hasEndState else { return .ended(events: Int(end.startIndex)) }
                        guard let state = reader.state(end) else {
                            discard(number)
                            throw RebuildFrom(segment: number)
                        }
                        return .state(state)
                    }
                }
            }
            number -= 1
        }
        return .none
    }

    /// What an earlier segment's file says about a session.
    enum PreviousEnd {
        /// The session has no events before.
        case none
        /// Its state at the end of the last earlier segment holding it.
        case state(SessionReplayer)
        /// It ended there (after this many events) and its state was let go.
        case ended(events: Int)
    }

    /// The piece that marks a session's state at the end of a segment.
    static func endPiece(_ state: borrowing SessionReplayer) -> ReplayPiece {
        var piece = ReplayPiece(
            block: ReplayPiece.endOfSegment, startIndex: UInt64(state.eventCount), firstSequence: state.position?.sequence,
            firstTimestamp: state.position?.timestamp ?? 0)
        if isOutOfOrder(state) { piece.flags |= ReplayPiece.outOfOrder }
        if !state.gesturesCancelledInHindsight.isEmpty { piece.flags |= ReplayPiece.hindsight }
        return piece
    }

    /// What indexing one event did to its session.
    enum Indexed {
        /// Applied (journaled, and checkpointed first when one was due).
        case applied
        /// Not applied: its seq is not above the session's highest (E4), so the session is
        /// re-derived at the end of the pass; `events` counts its events so far with this one.
        case late(events: Int)
        /// Applied, and it was the session's `session.end`: its end piece is written and its
        /// state let go; `events` is its event count.
        case ended(events: Int)
        /// Applied, and it proved a navigation-only gesture cancelled that the replay had taken
        /// as done (E7): what was derived since that gesture is wrong, so the session is
        /// re-derived: at once from the events its worker holds, else at the end of the pass,
        /// as for a late event; `events` counts its events.
        case provedCancelledGesture(events: Int)
    }

    /// Indexes one event of the session whose state is `state` (updated in place in the array
    /// of live states) and whose number in `journal` is `journalKey` (``FocusJournal/Writer/key(of:)``).
    static func index(
        _ type: EventType, sequence: UInt64?, timestamp: Int64, lsn: UInt64, block: Int, session: UnsafeRawBufferPointer, strings: StringTable,
        tokens: UnsafeRawBufferPointer, state: inout SessionReplayer, lastCheckpoint: inout Int, checkpointInterval: Int,
        writer: inout ReplayIndexFile.Writer, journal: inout FocusJournal.Writer, journalKey: Int
    ) throws -> Indexed {
        if let sequence, let highest = state.highestSequence, sequence <= highest { return .late(events: state.eventCount + 1) }
        // A checkpoint at the session's first event in this pass, then every checkpointInterval
        // of its events (`lastCheckpoint` holds the event count at the last one, -1 before the first).
        if lastCheckpoint < 0 || state.eventCount - lastCheckpoint >= checkpointInterval {
            lastCheckpoint = state.eventCount
            let piece = ReplayPiece(block: UInt32(block), startIndex: UInt64(state.eventCount), firstSequence: sequence, firstTimestamp: timestamp, firstLSN: lsn)
            try writer.add(session: session, piece: piece, state: state.eventCount > 0 ? state : nil)
        }
        let body = StoredBody(tokens: tokens, strings: strings)
        let before = FocusJournal.Before(state)
        let knownCancelled = state.gesturesCancelledInHindsight.count
        state.apply(ReplayEvent(type: type, sequence: sequence, timestamp: timestamp, lsn: lsn, body: body))
        journal.record(type, key: journalKey, before: before, after: state, timestamp: timestamp)
        if state.gesturesCancelledInHindsight.count > knownCancelled { return .provedCancelledGesture(events: state.eventCount) }
        guard type == .sessionEnd else { return .applied }
        var piece = endPiece(state)
        piece.flags |= ReplayPiece.ended
        try writer.add(session: session, piece: piece, state: nil)
        let events = state.eventCount
        state = SessionReplayer()
        return .ended(events: events)
    }

    /// Whether a replay of the session must sort its events (E4): some arrived late or twice.
    static func isOutOfOrder(_ state: SessionReplayer) -> Bool {
        state.lateEvents > 0 || state.anomalies.contains { $0.code == .seqDuplicate }
    }

    /// A build found the file of an earlier segment damaged (and removed it): the refresh
    /// builds again from that segment.
    struct RebuildFrom: Error {
        var segment: Int
    }

    // MARK: Looking up

    /// Where a replay of a session starts: a state and, unless the state is already the answer
    /// (the session's end), the block whose events of the session follow it.
    public struct Start {
        /// The state to resume from.
        public var state: SessionReplayer
        /// The segment (index into the log's segments) and block to decode next, nil for none.
        public var block: (segment: Int, block: Int)?
        /// The LSN of the first event to apply (the checkpoint may be inside the block): the
        /// session's events in the block below it are already in ``state``.
        public var firstLSN: UInt64 = 0
        /// Whether the session's events arrived out of `seq` order or twice (E4): its
        /// checkpoints, built in log order, do not hold, and a replay sorts its events.
        public var outOfOrder = false
        /// Whether an event of the session proved a navigation-only gesture cancelled (E7): its
        /// checkpoints do not hold, and a replay starts from its first event knowing them.
        public var hindsight = false
    }

    /// Where to start replaying `session` to reach `target`: the nearest checkpoint at or before
    /// it. Nil when the index does not know the session (replay it from the start instead).
    public func start(session: String, for target: ReplayTarget) -> Start? {
        var candidates: [(segment: Int, piece: ReplayPiece)] = []
        var end: (segment: Int, piece: ReplayPiece)?
        for number in log.segments.indices {
            guard let reader = reader(number) else { return nil }
            switch reader.lookup(session) {
            case .absent: continue
            case .damaged:
                discard(number)
                return nil
            case .found(let pieces):
                for piece in pieces {
                    if piece.block == ReplayPiece.endOfSegment { end = (number, piece) } else { candidates.append((number, piece)) }
                }
            }
        }
        guard let end else { return nil }
        let outOfOrder = end.piece.flags & ReplayPiece.outOfOrder != 0
        let hindsight = end.piece.flags & ReplayPiece.hindsight != 0
        func load(_ choice: (segment: Int, piece: ReplayPiece)) -> SessionReplayer? {
            guard let state = reader(choice.segment)?.state(choice.piece) else {
                discard(choice.segment)
                return nil
            }
            return state
        }
        let chosen: (segment: Int, piece: ReplayPiece)?
        switch target {
        case .end:
            // An ended session's end state was let go: replay from its last checkpoint.
            if end.piece.hasEndState { return load(end).map { Start(state: $0, block: nil, outOfOrder: outOfOrder, hindsight: hindsight) } }
            chosen = candidates.last
        case .index(let index):
            chosen = candidates.last { $0.piece.startIndex <= UInt64(index) }
        case .sequence(let sequence):
            chosen = candidates.last { ($0.piece.firstSequence ?? 0) <= sequence }
        case .time(let time):
            chosen = candidates.last { $0.piece.firstTimestamp <= time }
        }
        guard let chosen = chosen ?? candidates.first, let state = load(chosen) else { return nil }
        return Start(state: state, block: (chosen.segment, Int(chosen.piece.block)), firstLSN: chosen.piece.firstLSN, outOfOrder: outOfOrder, hindsight: hindsight)
    }

    /// Removes segment `number`'s file, found damaged after it was opened: the caller falls
    /// back to the events, and the next refresh rebuilds it.
    func discard(_ number: Int) {
        let name = log.segments[number].name
        readers[name] = nil
        if let path = path(name) { ReplayFiles.remove(path) }
    }

    /// Calls `visit` with the focus journal of every segment, in log order (see ``FocusJournal``).
    /// - Returns: false when a segment has no usable journal (the index could not be built there,
    ///   or it is damaged): the caller then replays the log instead.
    public func forEachJournalRecord(_ visit: (FocusJournal.Record) throws -> Void) throws -> Bool {
        try forEachJournalRecord(frameStarted: {}) { record, _ in try visit(record) }
    }

    /// The same, telling when each journal (frame) starts, and each record's session number in
    /// its journal's string table; `controllerIDs`: false leaves each visit's controller id
    /// empty (``FocusJournal/decode(_:controllerIDs:_:)``).
    public func forEachJournalRecord(
        controllerIDs: Bool = true, frameStarted: () -> Void, _ visit: (FocusJournal.Record, Int) throws -> Void
    ) throws -> Bool {
        guard let journals = focusJournals() else { return false }
        do {
            try journals.forEachRecord(controllerIDs: controllerIDs, frameStarted: frameStarted, visit)
        } catch let malformed as FocusJournals.Malformed {
            throw unreadableJournal(malformed)
        }
        return true
    }

    /// The focus journal of every segment, read and CRC-checked before any record is given, so
    /// that a caller falling back on a nil never has half its rows; nil when a segment has no
    /// usable journal (the index could not be built there, or it is damaged: its file is
    /// removed, to be built again).
    public func focusJournals() -> FocusJournals? {
        var frames: [FocusJournals.Frame] = []
        for number in log.segments.indices {
            guard let reader = reader(number), let journal = reader.journal() else {
                discard(number)
                return nil
            }
            frames.append(contentsOf: journal.map { FocusJournals.Frame(segment: number, bytes: $0) })
        }
        return FocusJournals(frames: frames)
    }

    /// The error for a journal whose CRC and version are right but that does not decode (a bug
    /// in this navlog, not damage); its segment's index file is removed, to be built again.
    public func unreadableJournal(_ malformed: FocusJournals.Malformed) -> ReplayIndexError {
        let name = log.segments[malformed.segment].name
        discard(malformed.segment)
        return ReplayIndexError(
            code: .unreadableJournal,
            message:
                "The focus journal of \(name)'s replay index does not decode although its checksum is right (a bug in this navlog); it was deleted and will be rebuilt: run the command again."
        )
    }

    /// Every session once, with its state at the end of the last segment holding it when the
    /// index keeps it, nil for a session that ended there (its state was let go: its figures
    /// are in the focus journal's `session.end` record), in no particular order.
    public func endStates(_ visit: (String, SessionReplayer?) throws -> Void) rethrows {
        var seen = Set<String>()
        for number in log.segments.indices.reversed() {
            guard let reader = reader(number) else { continue }
            var damaged = false
            for session in reader.sessions() where !seen.contains(session) {
                guard case .found(let pieces) = reader.lookup(session), let end = pieces.last, end.block == ReplayPiece.endOfSegment else {
                    damaged = true
                    continue
                }
                if !end.hasEndState {
                    seen.insert(session)
                    try visit(session, nil)
                    continue
                }
                guard let state = reader.state(end) else {
                    damaged = true
                    continue
                }
                seen.insert(session)
                try visit(session, state)
            }
            // Found damaged while read: removed, so that the next refresh rebuilds it.
            if damaged { discard(number) }
        }
    }

    /// Every session's final state, in no particular order: the kept end states, and the
    /// others replayed from their last checkpoint.
    /// - Throws: ``StoreError`` for I/O failures reading the log.
    public func finalStates(_ visit: (String, SessionReplayer) throws -> Void) throws {
        let seeker = SessionSeeker(index: self)
        try endStates { session, state in
            if let state {
                try visit(session, state)
            } else if let state = try seeker.replay(session: session, to: .end) {
                try visit(session, state)
            }
        }
    }

    /// The bytes the index files take.
    public var sizeOnDisk: Int {
        guard let directory else { return 0 }
        return ReplayFiles.names(in: directory).filter { $0.hasSuffix(".nrx") }.reduce(0) { total, name in
            guard let file = try? StoreFile(path: directory + "/" + name, writable: false) else { return total }
            return total + ((try? file.size()) ?? 0)
        }
    }
}

/// What a replay should stop at.
public enum ReplayTarget: Sendable, Hashable {
    /// After the event at this 0-based position in the session.
    case index(Int)
    /// After the event with this `seq`.
    case sequence(UInt64)
    /// After the last event at or before this time (µs since the epoch).
    case time(Int64)
    /// After the session's last event.
    case end
}

/// A replay index failure.
public struct ReplayIndexError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable {
        let name: String
        /// The index directory cannot be written.
        public static let unwritable = Code(name: "unwritable")
        /// A focus journal passed its checks but does not decode.
        public static let unreadableJournal = Code(name: "unreadableJournal")
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence saying what happened and what to do.
    public var message: String

    public var description: String { message }
}

/// Calls `body` with the UTF-8 bytes of `text`.
func withUTF8<R>(_ text: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var text = text
    return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
}
