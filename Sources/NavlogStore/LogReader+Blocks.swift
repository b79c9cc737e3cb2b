import NavlogEvents

/// Block-level access for derived data (replay checkpoints): which segments and blocks exist,
/// which blocks hold a session, and reading one chosen block.
extension LogReader {
    /// A segment as a reader sees it.
    public struct SegmentSummary: Sendable, Equatable {
        /// The segment file's name.
        public var name: String
        /// Whether the segment is sealed (it will never change).
        public var sealed: Bool
        /// Its complete blocks, in LSN order.
        public var blocks: [SegmentIndex.Entry]
        /// The lowest zstd level its blocks were written at (0: a block did not record it).
        public var compressionLevel: Int
    }

    /// The segments, in LSN order (damaged ones included, with the blocks that could be catalogued).
    public var segments: [SegmentSummary] {
        catalogs.map { SegmentSummary(name: $0.segment.name, sealed: $0.sealed, blocks: $0.entries, compressionLevel: $0.index.compressionLevel) }
    }

    /// The blocks of segment `segment` (an index into ``segments``) that may hold events of
    /// `session`: the index's postings for a sealed segment, the block headers' session filters
    /// for the active one.
    public func blocks(ofSegment segment: Int, mayHoldSession session: String) -> [Int] {
        let catalog = catalogs[segment]
        let hash = StringHash.hash(session)
        if catalog.hasPostings { return catalog.index.blocks(forSession: hash) }
        return catalog.headers.indices.filter { catalog.headers[$0].mayContain(sessionHash: hash) }
    }

    /// The blocks `query` must read, as (segment, block) in log order: those ``scan(_:_:)``
    /// reads, for a reader that pulls them one at a time with ``readBlock(segment:block:into:)``.
    /// The segment is an index into ``segments``.
    public func blocks(matching query: LogQuery) -> [(segment: Int, block: Int)] {
        plan(query).flatMap { catalog, blocks in blocks.map { (catalog, $0) } }
    }

    /// Reads, checks and decodes block `block` of segment `segment` into `decoded`;
    /// `locatingBodies` false for a reader of no body (see ``DecodedBlock/decode(payload:header:locatingBodies:)``).
    /// - Returns: false when the block is damaged or its segment is gone (damage is recorded in ``damage``).
    /// - Throws: ``StoreError`` for I/O failures.
    public func readBlock(segment: Int, block: Int, into decoded: inout DecodedBlock, locatingBodies: Bool = true) throws(StoreError) -> Bool {
        try readBlock(segment: segment, block: block, into: &decoded, part: .whole(locatingBodies: locatingBodies))
    }

    /// Reads what a reader of `session` needs of block `block` of segment `segment`: of a grouped
    /// block (``BlockHeader/frames``) only its spine and the session's group, so only the
    /// session's events are sure to be decoded (``DecodedBlock/isDecoded(_:)``); of any other
    /// block, all of it. `receiveTimesAndPeers` false: a grouped block's receive times and peers
    /// may be left undecoded (``DecodedBlock/receiveTimesAndPeersDecoded``), which a replay
    /// does not need.
    /// - Returns: false when the block is damaged or its segment is gone (damage is recorded in ``damage``).
    /// - Throws: ``StoreError`` for I/O failures.
    public func readBlock(
        segment: Int, block: Int, into decoded: inout DecodedBlock, session: [UInt8], receiveTimesAndPeers: Bool = true
    ) throws(StoreError) -> Bool {
        try readBlock(segment: segment, block: block, into: &decoded, part: .session(session, receiveTimesAndPeers: receiveTimesAndPeers))
    }

    /// What part of a block a read decodes.
    private enum BlockPart {
        /// All of it; bodies located unless a reader reads none.
        case whole(locatingBodies: Bool)
        /// What a reader of one session needs.
        case session([UInt8], receiveTimesAndPeers: Bool)
    }

    private func readBlock(segment: Int, block: Int, into decoded: inout DecodedBlock, part: BlockPart) throws(StoreError) -> Bool {
        if let held = catalogs[segment].held {
            return try readBlock(block, of: segment, from: held.file, into: &decoded, part: part)
        }
        guard let file = try Self.openIfPresent(catalogs[segment].segment.path) else { return false }
        return try readBlock(block, of: segment, from: file, into: &decoded, part: part)
    }

    private func readBlock(
        _ block: Int, of segment: Int, from file: borrowing StoreFile, into decoded: inout DecodedBlock, part: BlockPart
    ) throws(StoreError)
        -> Bool
    {
        guard let location = try verifiedLocation(file, catalogs[segment], block) else { return false }
        do {
            switch part {
            case .whole(let locatingBodies): try blockReader.read(location, from: file, into: &decoded, locatingBodies: locatingBodies)
            case .session(let id, let receiveTimesAndPeers):
                try blockReader.read(location, from: file, into: &decoded, session: id, receiveTimesAndPeers: receiveTimesAndPeers)
            }
            return true
        } catch {
            guard error.code == .damaged else { throw error }
            damage.append(SegmentDamage(error, at: location, in: file.path))
            return false
        }
    }
}

extension LogReader {
    /// Starts reading, on `prefetcher`'s thread, what a reader of `session` needs of block
    /// `block` of segment `segment` (as ``readBlock(segment:block:into:session:receiveTimesAndPeers:)``
    /// reads it); ``finishReadingAhead(_:into:)`` takes the block. Meanwhile this reader may read
    /// other blocks.
    /// - Returns: false when the block cannot be located (its damage is recorded in ``damage``,
    ///   or its segment is gone): nothing was started.
    /// - Throws: ``StoreError`` for I/O failures.
    public func startReadingAhead(
        segment: Int, block: Int, session: [UInt8], receiveTimesAndPeers: Bool, with prefetcher: BlockPrefetcher
    ) throws(StoreError) -> Bool {
        let catalog = catalogs[segment]
        // The file the block is checked in is the one the worker reads.
        guard let file = try fileForOtherThreads(segment), let location = try verifiedLocation(file.file, catalog, block) else { return false }
        prefetcher.start(BlockPrefetcher.Ticket(file: file, location: location, session: session, receiveTimesAndPeers: receiveTimesAndPeers))
        return true
    }

    /// Waits for the read ``startReadingAhead(segment:block:session:receiveTimesAndPeers:with:)``
    /// started and puts its block in `decoded`.
    /// - Returns: false when the block is damaged (recorded in ``damage``) or its segment is gone.
    /// - Throws: ``StoreError`` for I/O failures, or when the segment was written again.
    public func finishReadingAhead(_ prefetcher: BlockPrefetcher, into decoded: inout DecodedBlock) throws(StoreError) -> Bool {
        switch prefetcher.finish(into: &decoded) {
        case .read: return true
        case .damaged(let damage):
            self.damage.append(damage)
            return false
        case .failed(let error): throw error
        }
    }

    /// Waits for a read ahead no longer needed and drops it: its block, and any damage or
    /// failure it met (a reader of the blocks it needs reports those).
    public func dropReadingAhead(_ prefetcher: BlockPrefetcher, scratch: inout DecodedBlock) {
        _ = prefetcher.finish(into: &scratch)
    }
}

extension LogReader {
    /// Blocks of one segment, located and checked against the segment's index by the reader
    /// that owns them (``locateBlocks(segment:_:)``), to be read on several threads at once
    /// with a ``LocatedBlockReader`` each (a ``LogReader`` reads on one thread only).
    public struct LocatedBlocks: Sendable {
        /// The segment file as the owner opened and checked it.
        let file: HeldSegmentFile
        /// The blocks found sound, in order: their numbers in the segment.
        public let numbers: [Int]
        /// Their locations.
        let locations: [BlockLocation]
    }

    /// Locates blocks `range` of segment `segment` for readers on other threads; blocks whose
    /// header or index entry is damaged are left out (their damage is recorded in ``damage``).
    /// - Returns: nil when the segment is gone.
    /// - Throws: ``StoreError`` for I/O failures, or when the segment was written again.
    public func locateBlocks(segment: Int, _ range: Range<Int>) throws(StoreError) -> LocatedBlocks? {
        let catalog = catalogs[segment]
        guard let file = try fileForOtherThreads(segment) else { return nil }
        var numbers: [Int] = []
        var locations: [BlockLocation] = []
        for block in range {
            guard let location = try verifiedLocation(file.file, catalog, block) else { continue }
            numbers.append(block)
            locations.append(location)
        }
        return LocatedBlocks(file: file, numbers: numbers, locations: locations)
    }

    /// Segment `segment`'s file for readers on other threads: the held one, or one opened here
    /// to be handed over; nil when the segment is gone.
    private func fileForOtherThreads(_ segment: Int) throws(StoreError) -> HeldSegmentFile? {
        if let held = catalogs[segment].held { return held }
        guard let opened = try Self.openIfPresent(catalogs[segment].segment.path) else { return nil }
        return HeldSegmentFile(opened)
    }

    /// Records damage a ``LocatedBlockReader`` met, once (several readers of the same block
    /// meet the same damage).
    public func recordDamage(_ met: SegmentDamage) {
        if !damage.contains(met) { damage.append(met) }
    }
}

/// Reads blocks a ``LogReader`` located (``LogReader/locateBlocks(segment:_:)``) on a thread of
/// its own: one per thread, each with its own buffers and zstd context.
public struct LocatedBlockReader: ~Copyable {
    private var reader: BlockReader

    /// A reader.
    /// - Throws: ``StoreError`` when zstd cannot allocate a context.
    public init() throws(StoreError) {
        reader = try BlockReader()
    }

    /// Reads block `position` of `blocks` (an index into ``LogReader/LocatedBlocks/numbers``)
    /// for the worker `residue` of `modulus` building derived data: of a grouped block whose
    /// group count is a multiple of `modulus`, only the groups that hold the sessions whose id
    /// hash is `residue` modulo `modulus` (the others' events are not decoded:
    /// ``DecodedBlock/isDecoded(_:)``); else the whole block.
    /// - Returns: nil when the block was read, else its damage (the caller has the owner record
    ///   it with ``LogReader/recordDamage(_:)`` and skips the block).
    /// - Throws: ``StoreError`` for I/O failures.
    public mutating func read(
        _ blocks: LogReader.LocatedBlocks, at position: Int, into decoded: inout DecodedBlock, residue: Int, modulus: Int
    ) throws(StoreError) -> SegmentDamage? {
        let location = blocks.locations[position]
        do {
            try reader.read(location, from: blocks.file.file, into: &decoded, groupResidue: residue, modulus: modulus)
            return nil
        } catch {
            guard error.code == .damaged else { throw error }
            return SegmentDamage(error, at: location, in: blocks.file.file.path)
        }
    }

    /// Reads the whole of block `position` of `blocks` (after a read for one worker found a
    /// session in a group its hash does not lead to: a block another writer grouped otherwise).
    /// - Returns: nil when the block was read, else its damage.
    /// - Throws: ``StoreError`` for I/O failures.
    public mutating func readWhole(_ blocks: LogReader.LocatedBlocks, at position: Int, into decoded: inout DecodedBlock) throws(StoreError) -> SegmentDamage? {
        try read(blocks, at: position, into: &decoded, residue: 0, modulus: 1)
    }
}
