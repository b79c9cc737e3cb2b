import NavlogEvents

/// Reads a data directory, also while a writer appends to it; needs no lock.
///
/// Blocks are chosen from the indexes (LSN, time, session) and block headers before anything
/// is decompressed; only the chosen blocks are read, checked and decoded. Damage does not stop
/// a read: the damaged block is skipped and reported in ``damage``.
public final class LogReader {
    /// The data directory.
    public let directory: String
    /// Damage met so far (segments and blocks that could not be read), in the order met.
    public internal(set) var damage: [SegmentDamage] = []

    private let files: LogDirectory
    var catalogs: [SegmentCatalog] = []
    var blockReader: BlockReader
    private var block = DecodedBlock()

    /// How many sealed segments this reader holds open, so that a read that began before a
    /// compaction finishes on the files it catalogued (and retention deleting one does not cut
    /// it short). Past this many, a segment is opened per read, and one written again since it
    /// was catalogued stops the read with ``StoreError/Code/changed``.
    public let maximumHeldSegments: Int

    /// Opens the directory and catalogues its segments.
    /// - Parameter maximumHeldSegments: see ``maximumHeldSegments``.
    /// - Throws: ``StoreError`` when the directory does not exist or cannot be read.
    public init(directory: String, maximumHeldSegments: Int = 256) throws(StoreError) {
        self.maximumHeldSegments = maximumHeldSegments
        guard LogDirectory.exists(directory) else {
            throw StoreError(code: .badDirectory, message: "There is no data directory at \(directory). Check --data-dir (navlog ingest creates one).", path: directory)
        }
        self.directory = directory
        files = LogDirectory(path: directory)
        blockReader = try BlockReader()
        try refresh()
    }

    /// Re-reads the directory's segment list (new blocks and segments written since).
    ///
    /// Sealed segments never change, so their catalogues are kept while their size is the same;
    /// only new segments and the active one are read again (`navlog tail -f` calls this often).
    public func refresh() throws(StoreError) {
        var known: [String: SegmentCatalog] = [:]
        for catalog in catalogs where catalog.sealed { known[catalog.segment.name] = catalog }
        var catalogs: [SegmentCatalog] = []
        // Sealed segments held open so far (see maximumHeldSegments).
        var held = 0
        let writerActive = (try? StoreFile(path: files.file(SegmentName.lockFile), writable: false))?.isLockedExclusively() ?? false
        for segment in try files.segments() {
            // A stat, not an open: `navlog tail -f` refreshes often, over every sealed segment.
            if let cached = known[segment.name], LogDirectory.fileSize(segment.path) == cached.index.segmentSize {
                if cached.held != nil { held += 1 }
                catalogs.append(cached)
                continue
            }
            let catalog: SegmentCatalog
            do {
                catalog = try SegmentCatalog.load(files, segment, writerActive: writerActive, holding: held < maximumHeldSegments)
            } catch  where error.code == .io && error.errno == 2 {
                continue  // deleted by retention meanwhile
            }
            if catalog.held != nil { held += 1 }
            damage.append(contentsOf: catalog.damage)
            catalogs.append(catalog)
        }
        self.catalogs = catalogs
    }

    /// The number of events in the log (from the indexes; nothing is decompressed).
    public var eventCount: Int { catalogs.reduce(0) { $0 + $1.entries.reduce(0) { $0 + $1.count } } }

    /// The LSN range of the log, or `nil` when it is empty.
    public var lsnRange: ClosedRange<UInt64>? {
        // The lowest and highest, not the first and last: a damaged log may hold blocks out of order.
        let entries = catalogs.lazy.flatMap(\.entries)
        guard let first = entries.map(\.firstLSN).min(), let last = entries.map(\.lastLSN).max() else { return nil }
        return first...max(first, last)
    }

    static func openIfPresent(_ path: String) throws(StoreError) -> StoreFile? {
        do {
            return try StoreFile(path: path, writable: false)
        } catch {
            if error.errno == 2 { return nil }
            throw error
        }
    }

    /// The blocks `query` must read, per segment, chosen by binary searches over the indexes.
    func plan(_ query: LogQuery) -> [(catalog: Int, blocks: [Int])] {
        let sessionHash = query.session.map { StringHash.hash($0) }
        var plan: [(Int, [Int])] = []
        for (number, catalog) in catalogs.enumerated() {
            let index = catalog.index
            guard !index.entries.isEmpty else { continue }
            if let from = query.fromLSN, index.entries.last!.lastLSN < from { continue }
            var candidates = index.blocks(since: query.since, until: query.until)
            if let from = query.fromLSN, let start = index.block(containing: from) {
                candidates = max(candidates.lowerBound, start)..<max(candidates.upperBound, max(candidates.lowerBound, start))
            }
            var chosen: [Int]
            if let sessionHash {
                if catalog.hasPostings {
                    chosen = index.blocks(forSession: sessionHash).filter { candidates.contains($0) }
                } else {
                    chosen = candidates.filter { catalog.headers.indices.contains($0) && catalog.headers[$0].mayContain(sessionHash: sessionHash) }
                }
            } else {
                chosen = Array(candidates)
            }
            if !chosen.isEmpty { plan.append((number, chosen)) }
        }
        return plan
    }

    /// Calls `visit` for every event matching `query`, in LSN order, with the decoded block and
    /// the event's position in it. Return `false` from `visit` to stop early.
    /// - Throws: ``StoreError`` for I/O failures, or what `visit` throws; damaged blocks are
    ///   skipped and recorded in ``damage``.
    public func scan(_ query: LogQuery, _ visit: (borrowing DecodedBlock, Int) throws -> Bool) throws {
        let sessionBytes = query.session.map { Array($0.utf8) }
        for (catalogNumber, blocks) in plan(query) {
            if let held = catalogs[catalogNumber].held {
                if try !scanSegment(held.file, catalogNumber, blocks, query, sessionBytes, visit) { return }
                continue
            }
            // A segment deleted by retention since the catalogue was made is simply gone.
            guard let file = try Self.openIfPresent(catalogs[catalogNumber].segment.path) else { continue }
            if try !scanSegment(file, catalogNumber, blocks, query, sessionBytes, visit) { return }
        }
    }

    private func scanSegment(
        _ file: borrowing StoreFile,
        _ catalogNumber: Int,
        _ blocks: [Int],
        _ query: LogQuery,
        _ sessionBytes: [UInt8]?,
        _ visit: (borrowing DecodedBlock, Int) throws -> Bool
    ) throws -> Bool {
        // Work on a local block: a class property cannot be lent to `visit` without copying
        // it for every event. It goes back to the reader (capacity and all) afterwards.
        var block = DecodedBlock()
        swap(&block, &self.block)
        defer { swap(&block, &self.block) }
        for blockNumber in blocks {
            guard let location = try verifiedLocation(file, catalogs[catalogNumber], blockNumber) else { continue }
            if let since = query.since, location.header.maxTimestamp < since { continue }
            if let until = query.until, location.header.minTimestamp > until { continue }
            do {
                try blockReader.read(location, from: file, into: &block, locatingBodies: query.readsBodies)
            } catch {
                guard error.code == .damaged else { throw error }
                damage.append(SegmentDamage(path: file.path, offset: error.offset ?? location.offset, reason: error.message))
                continue
            }
            var sessionRef: Int? = nil
            if let sessionBytes {
                sessionRef = block.withStrings { strings in
                    sessionBytes.withUnsafeBytes { wanted in
                        (0..<strings.count).first { ref in strings[ref].map { $0.elementsEqual(wanted) } ?? false }
                    }
                }
                if sessionRef == nil { continue }
            }
            for index in 0..<block.count {
                if let sessionRef, Int(block.sessions[index]) != sessionRef { continue }
                if let from = query.fromLSN, block.lsn(index) < from { continue }
                let ts = block.timestamps[index]
                if let since = query.since, ts < since { continue }
                if let until = query.until, ts > until { continue }
                if let types = query.types, !types.contains(block.types[index]) { continue }
                if try !visit(block, index) { return false }
            }
        }
        return true
    }

    /// The block's location after checking that the header found at the index's offset says
    /// what the index says (the index is never trusted blindly); `nil` (and damage recorded) if not.
    /// - Throws: ``StoreError/Code/changed`` when a sealed segment is not the size it was
    ///   catalogued at: compaction wrote it again, and the catalogue's blocks are not its blocks
    ///   (reading on would report damage that is not there).
    /// The error for a sealed segment found written again since it was catalogued.
    static func writtenAgain(_ path: String) -> StoreError {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return StoreError(
            code: .changed,
            message: "Segment \(name) was written again (navlogd compacts sealed segments with small blocks) while this command read it; run the command again.",
            path: path)
    }

    func verifiedLocation(_ file: borrowing StoreFile, _ catalog: SegmentCatalog, _ blockNumber: Int) throws(StoreError) -> BlockLocation? {
        if catalog.sealed, try file.size() != catalog.index.segmentSize { throw Self.writtenAgain(file.path) }
        let entry = catalog.entries[blockNumber]
        var buffer: [UInt8] = []
        let read = try BlockScanner.readHeader(file, at: entry.offset, limit: entry.offset + entry.size, buffer: &buffer)
        guard case .header(let header) = read else {
            if case .invalid(let reason) = read { damage.append(SegmentDamage(path: file.path, offset: entry.offset, reason: reason)) }
            return nil
        }
        guard header.firstLSN == entry.firstLSN, header.eventCount == entry.count, header.blockSize == entry.size else {
            damage.append(
                SegmentDamage(
                    path: file.path, offset: entry.offset,
                    reason: "the index disagrees with the block header here; delete \(SegmentName.index(catalog.segment.base)) to have it rebuilt"))
            return nil
        }
        return BlockLocation(offset: entry.offset, header: header)
    }
}
