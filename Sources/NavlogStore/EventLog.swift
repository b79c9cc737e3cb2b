public import NavlogEvents
import NavlogZstd
import Synchronization
import SystemPackage

/// The writer of a data directory: appends validated events as compressed blocks to the active
/// segment, seals full segments, applies retention, and repairs the directory when opened.
///
/// One process writes a directory at a time (an `flock` on `navlog.lock` enforces it); any
/// number of ``LogReader``s may read it meanwhile. Not thread-safe: one task owns the writer.
///
/// Durability: ``append(_:)`` buffers events into the current block and writes full blocks;
/// ``flush()`` writes the partial block and fsyncs, after which everything appended survives a
/// crash. Every event gets a log sequence number (LSN), strictly increasing and never reused.
public final class EventLog {
    /// The data directory.
    public let directory: String
    /// The options it was opened with.
    public let options: LogOptions
    /// What recovery found and repaired when the log was opened.
    public let recovery: RecoveryReport
    /// The LSN the next appended event gets.
    public private(set) var nextLSN: UInt64

    private let files: LogDirectory
    /// Holds the directory's writer lock until ``close()``.
    private var lock: StoreFile?
    private var active: StoreFile?
    private var activeBase: UInt64 = 0
    private var activeSize = 0
    private var activeEntries: [SegmentIndex.Entry] = []
    /// The lowest zstd level of the active segment's blocks (blocks a crashed writer left may
    /// have been written at another level), for its index.
    private var activeLowestLevel = Int.max
    private var activeSeekEntries: [SeekTable.Entry] = []
    private var activePostings: [SegmentIndex.Posting] = []
    /// False when the active segment was reopened: its postings must be rebuilt when sealing.
    private var activePostingsComplete = true
    private var encoder = BlockEncoder()
    private var pendingFirstLSN: UInt64 = 0
    private let compressor: ZstdCompressor
    /// For grouped blocks' spines, when ``LogOptions/spineCompressionLevel`` differs.
    private let spineCompressor: ZstdCompressor?
    private var payload: [UInt8] = []
    private var output: [UInt8] = []
    private var needsSync = false
    private var directoryNeedsSync = false
    /// Set when writing a block failed; appends are refused until a write succeeds.
    private var writeFailure: StoreError?
    /// Why the last full segment could not be sealed (its seek table not written, or retention
    /// after it failed); nil once a seal succeeds. The events are stored either way: the
    /// segment stays active, grows past its size and is sealed after a later block.
    public private(set) var sealFailure: StoreError?

    /// Opens (creating if needed) the log in `directory`, recovering it from any crash.
    /// - Throws: ``StoreError`` when the directory cannot be used or another writer holds it.
    public convenience init(directory: String, options: LogOptions = LogOptions()) throws(StoreError) {
        try self.init(directory: directory, options: options, firstLSN: 1)
    }

    /// Opens the log; an empty one gives its first event `firstLSN` (a compacted copy of a
    /// segment keeps the segment's LSNs).
    init(directory: String, options: LogOptions, firstLSN: UInt64) throws(StoreError) {
        self.directory = directory
        self.options = options
        encoder.eventsPerGroup = options.eventsPerSessionGroup
        try LogDirectory.create(directory)
        files = LogDirectory(path: directory)
        lock = try StoreFile(path: files.file(SegmentName.lockFile), writable: true)
        // A reader probes the lock for an instant (to tell a write in progress from damage): a
        // lock that stays taken for 2 s is another writer.
        var locked = try lock!.tryLock()
        for _ in 0..<200 where !locked {
            usleep(10_000)
            locked = try lock!.tryLock()
        }
        guard locked else {
            throw StoreError(
                code: .locked,
                message: "Another process (probably navlogd) is writing to \(directory). Stop it first, or use read-only commands such as navlog cat, which need no lock.",
                path: directory)
        }
        do {
            compressor = try ZstdCompressor(level: options.compressionLevel)
            spineCompressor = try options.spineCompressionLevel.flatMap { level throws(ZstdError) in
                level == options.compressionLevel ? nil : try ZstdCompressor(level: level)
            }
        } catch {
            throw StoreError(code: .compression, message: error.message)
        }
        var report = RecoveryReport()
        var state = RecoveredState()
        // A compaction the last writer did not finish: the original segment is still in place.
        SegmentCompaction.removeUnfinishedCopies(in: directory)
        DurableFile.removeAbandonedTemporaries(inDirectory: directory)
        try Self.recover(files, &report, &state)
        recovery = report
        nextLSN = max(state.nextLSN, firstLSN)
        if let reopened = state.active {
            active = try StoreFile(path: files.file(SegmentName.segment(reopened.base)), writable: true)
            activeBase = reopened.base
            activeSize = reopened.size
            activeEntries = reopened.blocks.map(SegmentIndex.Entry.init)
            activeLowestLevel = reopened.blocks.isEmpty ? Int.max : SegmentIndex.lowestLevel(reopened.blocks)
            activeSeekEntries = reopened.blocks.map { SeekTable.Entry(compressedSize: UInt32($0.header.blockSize), decompressedSize: UInt32($0.header.payloadSize)) }
            activePostingsComplete = reopened.blocks.isEmpty
        }
        try applyRetention()
    }

    /// Flushes, then releases the directory (another writer may open it after this).
    public func close() throws(StoreError) {
        try flush()
        active = nil
        lock = nil
    }

    /// Appends `batch`, assigning LSNs in order.
    ///
    /// Events are buffered into the current block, and full blocks are written; call
    /// ``flush()`` to make them durable.
    /// - Returns: the LSNs given to the batch's events.
    /// - Throws: ``AppendError`` when a block could not be written; the events accepted before
    ///   the failure are kept (a later ``flush()`` retries writing them), the rest are refused.
    @discardableResult
    public func append(_ batch: EventBatch) throws(AppendError) -> Range<UInt64> {
        guard lock != nil else {
            throw AppendError(accepted: 0, cause: StoreError(code: .badDirectory, message: "The log of \(directory) was closed; open it again to append."))
        }
        let first = nextLSN
        if writeFailure != nil {
            do { try writePendingBlock() } catch { throw AppendError(accepted: 0, cause: error) }
        }
        var index = 0
        while index < batch.count {
            if encoder.count >= options.maximumEventsPerBlock || encoder.approximateSize >= options.maximumBlockBytes {
                do { try writePendingBlock() } catch { throw AppendError(accepted: index, cause: error) }
            }
            if encoder.count == 0 { pendingFirstLSN = nextLSN }
            let added = encoder.append(batch, from: index, maximumEvents: options.maximumEventsPerBlock, maximumBytes: options.maximumBlockBytes)
            index += added
            nextLSN += UInt64(added)
        }
        return first..<nextLSN
    }

    /// Writes the events buffered so far and fsyncs, so that everything appended is durable.
    /// - Returns: whether anything had to be synced (false when everything already was).
    /// - Throws: ``StoreError`` when writing or syncing fails (nothing appended is dropped; retry later).
    @discardableResult
    public func flush() throws(StoreError) -> Bool {
        guard let point = try writeForSync() else { return false }
        do throws(StoreError) {
            try point.sync()
        } catch {
            // Still not durable: the next flush must try again.
            needsSync = needsSync || point.syncsData
            directoryNeedsSync = directoryNeedsSync || point.syncsDirectory
            throw error
        }
        return true
    }

    /// Writes the events buffered so far and hands back what must be fsynced to make them
    /// durable, so another thread can do that while this one goes on appending (group commit
    /// pipelined with the next group). `nil` when everything is already durable.
    /// - Throws: ``StoreError`` when writing fails (nothing appended is dropped; retry later).
    public func writeForSync() throws(StoreError) -> SyncPoint? {
        try writePendingBlock()
        guard (needsSync && active != nil) || directoryNeedsSync else { return nil }
        var descriptor: Int32 = -1
        if needsSync, active != nil {
            descriptor = try active!.duplicateDescriptor()
        }
        let point = SyncPoint(descriptor: descriptor, path: SegmentName.segment(activeBase), directory: directoryNeedsSync ? directory : nil)
        needsSync = false
        directoryNeedsSync = false
        return point
    }

    /// Writes the partial block without fsync (the events become visible to readers).
    public func writeBufferedEvents() throws(StoreError) {
        try writePendingBlock()
    }

    /// The first LSN of the segment being appended to, nil between segments.
    var activeSegmentBase: UInt64? { active == nil ? nil : activeBase }

    /// The number of events buffered and not yet written.
    public var bufferedEventCount: Int { encoder.count }

    /// Seals the active segment now: writes its seek table and index and starts a new one on the next write.
    public func seal() throws(StoreError) {
        try writePendingBlock()
        try sealActiveSegment()
    }

    // MARK: - Writing

    private func writePendingBlock() throws(StoreError) {
        guard encoder.count > 0 else { return }
        let layout = encoder.encodePayload(into: &payload)
        output.removeAll(keepingCapacity: true)
        var frame: [UInt8] = []
        var frames: [BlockHeader.DataFrame] = []
        do {
            // One frame, or a grouped payload's frames one after another (each part its own).
            frame = try payload.withBytes { (raw) throws(ZstdError) -> [UInt8] in
                var frame: [UInt8] = []
                var start = 0
                for (part, sections) in layout.enumerated() {
                    let before = frame.count
                    var ends: [Int] = []
                    for size in sections { ends.append((ends.last ?? 0) + size) }
                    let size = ends.last ?? 0
                    if size > 0 {
                        let bytes = UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)])
                        if part == 0 && layout.count > 1, spineCompressor != nil {
                            try spineCompressor?.compress(bytes, sectionEnds: ends, appendingTo: &frame)
                        } else {
                            try compressor.compress(bytes, sectionEnds: ends, appendingTo: &frame)
                        }
                    }
                    if layout.count > 1 {
                        let checksum = frame.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[before...])) }
                        frames.append(BlockHeader.DataFrame(size: frame.count - before, payloadSize: size, checksum: checksum))
                    }
                    start += size
                }
                return frame
            }
        } catch {
            throw StoreError(code: .compression, message: error.message)
        }
        var filter = [UInt8](repeating: 0, count: SessionFilter.size(for: encoder.sessionHashes.count))
        for hash in encoder.sessionHashes { SessionFilter.insert(&filter, hash) }
        let header = BlockHeader(
            firstLSN: pendingFirstLSN, eventCount: encoder.count, frameSize: frame.count, payloadSize: payload.count,
            frameChecksum: CRC32C.checksum(frame),
            minTimestamp: encoder.minTimestamp, maxTimestamp: encoder.maxTimestamp,
            minReceived: encoder.minReceived, maxReceived: encoder.maxReceived,
            sessionFilter: filter, frames: frames, compressionLevel: Int(options.compressionLevel)
        )
        header.encode(into: &output)
        output.append(contentsOf: frame)
        if active == nil {
            do {
                try openSegment(base: pendingFirstLSN)
            } catch {
                writeFailure = error
                throw error
            }
        }
        do {
            try output.withBytes { (raw) throws(StoreError) in try active!.write(raw, at: activeSize) }
        } catch {
            // Take back whatever part of the block reached the file, so the segment stays a
            // sequence of whole blocks; the events stay buffered for a retry.
            try? active!.truncate(to: activeSize)
            writeFailure = error
            throw error
        }
        writeFailure = nil
        let block = UInt32(activeEntries.count)
        activeEntries.append(SegmentIndex.Entry(BlockLocation(offset: activeSize, header: header)))
        activeLowestLevel = min(activeLowestLevel, header.compressionLevel)
        activeSeekEntries.append(SeekTable.Entry(compressedSize: UInt32(output.count), decompressedSize: UInt32(payload.count)))
        for hash in encoder.sessionHashes { activePostings.append(SegmentIndex.Posting(sessionHash: hash, block: block)) }
        activeSize += output.count
        needsSync = true
        encoder.removeAll()
        if activeSize >= options.maximumSegmentBytes {
            // The block is written: a failed seal must not fail the events in it (the caller
            // would take them as not stored and store them again). The segment stays active,
            // and sealing is tried again after the next block.
            do {
                try sealActiveSegment()
                sealFailure = nil
            } catch {
                sealFailure = error
            }
        }
    }

    private func openSegment(base: UInt64) throws(StoreError) {
        active = try StoreFile(path: files.file(SegmentName.segment(base)), writable: true)
        try active!.truncate(to: 0)
        activeBase = base
        activeSize = 0
        activeEntries = []
        activeLowestLevel = .max
        activeSeekEntries = []
        activePostings = []
        activePostingsComplete = true
        directoryNeedsSync = true
    }

    private func sealActiveSegment() throws(StoreError) {
        guard active != nil, !activeEntries.isEmpty else { return }
        var table: [UInt8] = []
        SeekTable(entries: activeSeekEntries).encode(into: &table)
        do {
            try table.withBytes { (raw) throws(StoreError) in try active!.write(raw, at: activeSize) }
            try active!.sync()
        } catch {
            try? active!.truncate(to: activeSize)
            throw error
        }
        let size = activeSize + table.count
        let index: SegmentIndex
        if activePostingsComplete {
            let postings = activePostings
            activePostings = []
            index = SegmentIndex(segmentSize: size, entries: activeEntries, postings: consume postings, compressionLevel: activeLowestLevel)
        } else {
            index = try SegmentIndexBuilder.build(active!, segmentSize: size)
        }
        active = nil
        needsSync = false
        // The segment is sealed (its seek table is durable). Its index is derived data that
        // readers rebuild when it is missing, so failing to write it fails nothing; the
        // directory is then synced with the next flush.
        do {
            try files.writeAtomically(SegmentName.index(activeBase), index.encode())
            directoryNeedsSync = false
        } catch {
            directoryNeedsSync = true
        }
        try applyRetention()
    }

    // MARK: - Retention

    /// Deletes whole sealed segments, oldest first, while the log exceeds ``LogOptions/retentionBytes``
    /// or their newest event is older than ``LogOptions/retentionAge``.
    /// - Parameter now: the current time in µs (for age).
    /// - Returns: the names of the deleted segments.
    @discardableResult
    public func applyRetention(now: Int64 = currentMicroseconds()) throws(StoreError) -> [String] {
        guard options.retentionBytes != nil || options.retentionAge != nil else { return [] }
        let segments = try files.segments()
        var sizes: [Int] = []
        for segment in segments {
            let file = try StoreFile(path: segment.path, writable: false)
            sizes.append(try file.size())
        }
        var total = sizes.reduce(0, +)
        var removed: [String] = []
        for (segment, size) in zip(segments, sizes) {
            if active != nil && segment.base == activeBase { break }
            let tooBig = options.retentionBytes.map { total > $0 } ?? false
            var tooOld = false
            if let age = options.retentionAge {
                let catalog = try SegmentCatalog.load(files, segment)
                tooOld = (catalog.entries.map(\.maxReceived).max() ?? Int64.max) < now - age
            }
            guard tooBig || tooOld else { break }
            try files.remove(segment.name)
            try files.remove(SegmentName.index(segment.base))
            total -= size
            removed.append(segment.name)
        }
        if !removed.isEmpty { try syncDirectory(directory) }
        return removed
    }
}

/// What one fsync must cover to make written events durable: a segment (through its own
/// descriptor, valid after the log moves on to another segment) and maybe the directory.
public struct SyncPoint: Sendable {
    let descriptor: Int32
    let path: String
    let directory: String?

    /// Makes the writes durable, then releases the descriptor.
    /// - Throws: ``StoreError`` naming the file when fsync fails.
    public func sync() throws(StoreError) {
        defer { if descriptor >= 0 { _ = Glibc.close(descriptor) } }
        if descriptor >= 0 && FsyncFailpoint.shouldFail() { throw StoreError.errno(EIO, "fsync", path) }
        if descriptor >= 0 && fsync(descriptor) != 0 { throw StoreError.errno(errno, "fsync", path) }
        if let directory { try syncDirectory(directory) }
    }

    /// Releases the descriptor without syncing (a newer point of the same file covers it).
    public func discard() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// The segment file's name (two points of the same file: one fsync covers both).
    public var fileName: String { path }

    /// Whether this point syncs the segment's data (not only the directory).
    public var syncsData: Bool { descriptor >= 0 }

    /// Whether this point also syncs the directory (a new segment file).
    public var syncsDirectory: Bool { directory != nil }
}

/// The current wall-clock time in µs since the epoch.
public func currentMicroseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failpoint for tests of what happens when the disk fails: with
/// `NAVLOG_FAILPOINT_FSYNC_AFTER=N` in the environment, every data fsync after the first N fails
/// with EIO. Unset (always, outside tests), it costs one load per fsync.
enum FsyncFailpoint {
    static let allowed: Int? = getenv("NAVLOG_FAILPOINT_FSYNC_AFTER").flatMap { Int(String(cString: $0)) }
    static let count = Atomic<Int>(0)

    static func shouldFail() -> Bool {
        guard let allowed else { return false }
        return count.add(1, ordering: .relaxed).newValue > allowed
    }
}
