public import NavlogEvents

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sealed segment written again with full blocks at the sealed level, waiting to take the original's place
/// (``EventLog/install(_:)``).
public struct CompactedSegment: Sendable, Equatable {
    /// The segment's file name (the same before and after).
    public var name: String
    /// The original's size when it was read: installing checks that it did not change.
    public var originalBytes: Int
    /// The copy's size.
    public var compactedBytes: Int
    /// Blocks before and after.
    public var originalBlocks: Int
    public var compactedBlocks: Int
    /// Events in the segment (the same in both).
    public var events: Int
    /// Where the copy is (`<data-dir>/compaction/<name>/`).
    var workDirectory: String
}

/// Log compaction: a sealed segment written with small blocks (durable mode writes a block at
/// every fsync: 17–22 bytes per event), or at a zstd level below
/// ``LogOptions/sealedCompressionLevel`` (the writer's level, chosen to keep up with bursts),
/// is written again with blocks as large as the log's options make them, at the sealed level,
/// the same events with the same LSNs, times, peers and bodies in the same order, so it takes
/// what any segment takes (issue 14).
///
/// The copy is made beside the log (`<data-dir>/compaction/`) from the sealed segment, which
/// never changes, so it needs no lock and may run on any thread; only ``EventLog/install(_:)``
/// (on the writer) puts it in place, with one rename. A crash at any point leaves the original
/// or the copy, both whole: the copy is fsynced before the rename, and a writer opening the log
/// removes any unfinished copy.
public enum SegmentCompaction {
    /// The working directory's name inside the data directory.
    static let workDirectoryName = "compaction"

    /// Whether a sealed segment of `events` events in `blocks` blocks is worth compacting: its
    /// blocks average under a quarter of ``LogOptions/maximumEventsPerBlock``.
    public static func isWorthCompacting(events: Int, blocks: Int, options: LogOptions) -> Bool {
        blocks > 1 && events < blocks * max(1, options.maximumEventsPerBlock / 4)
    }

    /// Whether a sealed segment whose blocks were written at `level` at the lowest (0: not
    /// recorded) should be compressed again at ``LogOptions/sealedCompressionLevel``.
    public static func isBelowSealedLevel(_ level: Int, options: LogOptions) -> Bool {
        guard let sealed = options.sealedCompressionLevel else { return false }
        return level < Int(sealed)
    }

    /// The sealed segments of `reader`'s log worth compacting (small blocks, or a level below
    /// the sealed one), oldest first.
    public static func candidates(_ reader: LogReader, options: LogOptions) -> [String] {
        reader.segments.filter { segment in
            segment.sealed
                && (isBelowSealedLevel(segment.compressionLevel, options: options)
                    || isWorthCompacting(events: segment.blocks.reduce(0) { $0 + $1.count }, blocks: segment.blocks.count, options: options))
        }.map(\.name)
    }

    /// Writes the compacted copy of sealed segment `name` of `reader`'s log, fsynced, and checks
    /// it holds the same events.
    /// - Returns: nil when the segment is gone, not sealed, or has damaged blocks or a gap in its
    ///   LSNs (compaction leaves such a segment as it is: `navlog verify` reports it).
    /// - Throws: ``StoreError`` when the copy cannot be written (disk full…); nothing in the log
    ///   changed.
    /// - Parameter isCancelled: asked between blocks; true abandons the copy (nil is returned).
    public static func writeCopy(
        of name: String, reader: LogReader, options: LogOptions, isCancelled: () -> Bool = { false }
    ) throws(StoreError) -> CompactedSegment? {
        guard let number = reader.segments.firstIndex(where: { $0.name == name }), reader.segments[number].sealed,
            let base = SegmentName.baseLSN(ofSegment: name)
        else { return nil }
        let segment = reader.segments[number]
        let original = try StoreFile(path: reader.directory + "/" + name, writable: false)
        let originalBytes = try original.size()
        let work = reader.directory + "/" + workDirectoryName + "/" + name
        removeWorkDirectory(work)
        var copyOptions = options
        if let sealed = options.sealedCompressionLevel {
            copyOptions.compressionLevel = sealed
            copyOptions.spineCompressionLevel = options.spineCompressionLevel ?? options.compressionLevel
        }
        copyOptions.maximumSegmentBytes = Int.max / 4
        copyOptions.retentionBytes = nil
        copyOptions.retentionAge = nil
        let copy = try EventLog(directory: work, options: copyOptions, firstLSN: base)
        var decoded = DecodedBlock()
        var batch = EventBatch()
        var inline: [UInt8] = []
        var expected = base
        var events = 0
        for block in segment.blocks.indices {
            guard !isCancelled(), try reader.readBlock(segment: number, block: block, into: &decoded), decoded.firstLSN == expected else {
                try? copy.close()
                removeWorkDirectory(work)
                return nil
            }
            batch.removeAll()
            for index in 0..<decoded.count {
                let stored = decoded.withEvent(index) { strings, session, tokens -> Bool in
                    inline.removeAll(keepingCapacity: true)
                    guard BodyTranscoder.inline(tokens, strings: strings, appendingTo: &inline) else { return false }
                    inline.withUnsafeBytes { body in
                        batch.appendStored(
                            type: decoded.types[index], timestamp: decoded.timestamps[index], timestampWasMissing: decoded.flags[index] & 1 != 0,
                            sequence: decoded.sequence(index), receivedAt: decoded.receiveTimes[index],
                            peer: decoded.peers[Int(decoded.peerIndexes[index])], session: session, inlineBody: body)
                    }
                    return true
                }
                guard stored else {
                    try? copy.close()
                    removeWorkDirectory(work)
                    return nil
                }
            }
            do {
                _ = try copy.append(batch)
            } catch {
                try? copy.close()
                removeWorkDirectory(work)
                throw error.cause
            }
            expected += UInt64(decoded.count)
            events += decoded.count
        }
        try copy.seal()
        try copy.close()
        // The copy must be what the original is before it may replace it.
        let check = try LogReader(directory: work)
        guard check.segments.count == 1, check.segments[0].name == name, check.segments[0].sealed, check.eventCount == events,
            check.lsnRange == (events == 0 ? nil : base...(base + UInt64(events) - 1)), check.damage.isEmpty
        else {
            removeWorkDirectory(work)
            throw StoreError(
                code: .damaged,
                message: "The compacted copy of \(name) does not hold the same events (a bug in this navlog); the segment was left as it is.",
                path: work)
        }
        // Durable already: seal() fsynced the segment, then wrote its index as a durable
        // replace (fsync, rename, fsync of the directory, which also holds the segment's entry).
        let written = try StoreFile(path: work + "/" + name, writable: false)
        return CompactedSegment(
            name: name, originalBytes: originalBytes, compactedBytes: try written.size(), originalBlocks: segment.blocks.count,
            compactedBlocks: check.segments[0].blocks.count, events: events, workDirectory: work)
    }

    /// Drops a copy that will not be installed.
    public static func discard(_ copy: CompactedSegment) {
        removeWorkDirectory(copy.workDirectory)
    }

    /// Removes a copy's working directory and what is in it (files only: a segment, its index,
    /// the lock).
    static func removeWorkDirectory(_ path: String) {
        let files = LogDirectory(path: path)
        for name in (try? files.names()) ?? [] { try? files.remove(name) }
        rmdir(path)
        // And `compaction/` itself once no copy is left in it (rmdir leaves a non-empty one).
        if let slash = path.lastIndex(of: "/") { rmdir(String(path[..<slash])) }
    }

    /// Removes every unfinished copy of `directory` (a crash in the middle of one).
    static func removeUnfinishedCopies(in directory: String) {
        let work = directory + "/" + workDirectoryName
        guard LogDirectory.exists(work) else { return }
        for name in (try? LogDirectory(path: work).names()) ?? [] { removeWorkDirectory(work + "/" + name) }
        rmdir(work)
    }
}

extension EventLog {
    /// Puts a compacted copy in place of its segment: one rename of the copy over the original
    /// (the directory fsynced after it), then its index. Call it on the writer's thread.
    /// - Returns: false, leaving the log as it is and removing the copy, when the original
    ///   changed or went since the copy was made (retention deleted it, recovery rewrote it).
    /// - Throws: ``StoreError`` when the rename fails; the original is then still in place.
    public func install(_ copy: CompactedSegment) throws(StoreError) -> Bool {
        let files = LogDirectory(path: directory)
        let target = files.file(copy.name)
        guard let base = SegmentName.baseLSN(ofSegment: copy.name), base != activeSegmentBase,
            let original = try? StoreFile(path: target, writable: false), (try? original.size()) == copy.originalBytes
        else {
            SegmentCompaction.removeWorkDirectory(copy.workDirectory)
            return false
        }
        if rename(copy.workDirectory + "/" + copy.name, target) != 0 { throw StoreError.errno(errno, "rename", copy.workDirectory + "/" + copy.name) }
        // The old index no longer agrees with the segment (readers would rebuild it): replace it.
        let indexName = SegmentName.index(base)
        if rename(copy.workDirectory + "/" + indexName, files.file(indexName)) != 0 { try? files.remove(indexName) }
        try syncDirectory(directory)
        SegmentCompaction.removeWorkDirectory(copy.workDirectory)
        return true
    }
}
