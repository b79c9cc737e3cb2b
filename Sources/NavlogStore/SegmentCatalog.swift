/// What a reader knows about one segment before reading any event: its blocks (from the
/// index for a sealed segment, from block headers for the active one) and any damage seen.
struct SegmentCatalog {
    var segment: LogDirectory.Segment
    /// Whether the segment ends with a seek table.
    var sealed: Bool
    /// The blocks, with the index's search structures.
    var index: SegmentIndex
    /// Block headers (with session filters), for the active segment only.
    var headers: [BlockHeader]
    /// Whether ``SegmentIndex/postings`` are complete (sealed segments).
    var hasPostings: Bool
    /// Damage found while cataloguing.
    var damage: [SegmentDamage]
    /// Whether the index on disk was missing or wrong and had to be rebuilt.
    var rebuiltIndex = false

    var entries: [SegmentIndex.Entry] { index.entries }

    /// Catalogues `segment`. A sealed segment's index is loaded and checked against the
    /// segment (size, seek table, contiguity); when missing or wrong it is rebuilt from the
    /// segment and, if the directory is writable, saved again.
    static func load(_ files: LogDirectory, _ segment: LogDirectory.Segment) throws(StoreError) -> SegmentCatalog {
        let file = try StoreFile(path: segment.path, writable: false)
        let size = try file.size()
        let scanFooterOnly = try footer(file, size: size)
        if let table = scanFooterOnly {
            var buffer: [UInt8] = []
            if let indexFile = try? StoreFile(path: files.file(SegmentName.index(segment.base)), writable: false) {
                let indexSize = try indexFile.size()
                try indexFile.read(at: 0, count: indexSize, into: &buffer)
                if let index = SegmentIndex.decode(buffer), index.agrees(withSegmentSize: size, seekTable: table),
                    index.entries.first?.firstLSN ?? 0 >= segment.base
                {
                    return SegmentCatalog(segment: segment, sealed: true, index: index, headers: [], hasPostings: true, damage: [])
                }
            }
            // Missing or wrong: rebuild from the segment itself.
            let scan = try BlockScanner.scan(file, verifyFrames: false)
            var damage = scan.damage
            var index: SegmentIndex
            do {
                index = try SegmentIndexBuilder.build(file, segmentSize: size)
            } catch {
                damage.append(SegmentDamage(path: segment.path, offset: error.offset ?? 0, reason: error.message))
                index = SegmentIndex(segmentSize: size, entries: scan.blocks.map(SegmentIndex.Entry.init), postings: [])
                return SegmentCatalog(segment: segment, sealed: true, index: index, headers: scan.blocks.map(\.header), hasPostings: false, damage: damage, rebuiltIndex: true)
            }
            if damage.isEmpty { try? files.writeAtomically(SegmentName.index(segment.base), index.encode()) }
            return SegmentCatalog(segment: segment, sealed: true, index: index, headers: scan.blocks.map(\.header), hasPostings: damage.isEmpty, damage: damage, rebuiltIndex: true)
        }
        // The active segment: headers only. An incomplete last block is a write in progress.
        let scan = try BlockScanner.scan(file, verifyFrames: false)
        let damage = scan.damageInMiddle ? scan.damage : []
        let index = SegmentIndex(segmentSize: size, entries: scan.blocks.map(SegmentIndex.Entry.init), postings: [])
        return SegmentCatalog(segment: segment, sealed: false, index: index, headers: scan.blocks.map(\.header), hasPostings: false, damage: damage)
    }

    /// The seek table when the file is sealed, else `nil`.
    private static func footer(_ file: borrowing StoreFile, size: Int) throws(StoreError) -> SeekTable? {
        guard size >= SeekTable.footerSize + 8 else { return nil }
        var buffer: [UInt8] = []
        try file.read(at: size - SeekTable.footerSize, count: SeekTable.footerSize, into: &buffer)
        guard let frames = buffer.withUnsafeBytes({ SeekTable.frameCount(footer: $0) }), frames < (1 << 27) else { return nil }
        let tableSize = 8 + frames * 8 + SeekTable.footerSize
        guard tableSize <= size else { return nil }
        try file.read(at: size - tableSize, count: tableSize, into: &buffer)
        return buffer.withUnsafeBytes { SeekTable.decode($0, frameCount: frames) }
    }
}
