/// A sealed segment file a reader keeps open (a class, so catalogues can share it).
/// Shared with a ``BlockPrefetcher``'s thread: the file is only read, with `pread` (no shared
/// file offset), and never closed while a reference to it lives.
final class HeldSegmentFile: Sendable {
    let file: StoreFile

    init(path: String) throws(StoreError) {
        file = try StoreFile(path: path, writable: false)
    }

    /// Holds a file already open.
    init(_ file: consuming StoreFile) {
        self.file = file
    }
}

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
    /// The sealed segment's file as it was catalogued, held open by the reader (see
    /// ``LogReader/maximumHeldSegments``): compaction renames a new file over the path, and
    /// this one still reads the blocks the catalogue describes.
    var held: HeldSegmentFile? = nil

    var entries: [SegmentIndex.Entry] { index.entries }

    /// Catalogues `segment`. A sealed segment's index is loaded and checked against the
    /// segment (size, seek table, contiguity); when missing or wrong it is rebuilt from the
    /// segment and, if the directory is writable, saved again.
    /// - Parameter writerActive: whether a writer holds the log's lock; without one, damage at
    ///   the end of the active segment is crash damage to report, not a write in progress.
    static func load(
        _ files: LogDirectory, _ segment: LogDirectory.Segment, writerActive: Bool = true, holding: Bool = false
    ) throws(StoreError) -> SegmentCatalog {
        // The file the catalogue is made from is the one a holding reader keeps: what the
        // catalogue says holds for it whatever is renamed over the path later.
        let opened = try HeldSegmentFile(path: segment.path)
        let size = try opened.file.size()
        if case .sealed(let table, _) = try SeekTable.read(from: opened.file, size: size) {
            var buffer: [UInt8] = []
            if let indexFile = try? StoreFile(path: files.file(SegmentName.index(segment.base)), writable: false) {
                let indexSize = try indexFile.size()
                try indexFile.read(at: 0, count: indexSize, into: &buffer)
                if let index = SegmentIndex.decode(buffer), index.agrees(withSegmentSize: size, seekTable: table),
                    index.entries.first?.firstLSN ?? 0 >= segment.base
                {
                    return SegmentCatalog(segment: segment, sealed: true, index: index, headers: [], hasPostings: true, damage: [], held: holding ? opened : nil)
                }
            }
            // Missing or wrong: rebuild from the segment itself.
            let scan = try BlockScanner.scan(opened.file, verifyFrames: false)
            var damage = scan.damage
            var index: SegmentIndex
            do {
                index = try SegmentIndexBuilder.build(opened.file, segmentSize: size)
            } catch {
                damage.append(SegmentDamage(path: segment.path, offset: error.offset ?? 0, reason: error.message))
                index = SegmentIndex(segmentSize: size, blocks: scan.blocks, postings: [])
                return SegmentCatalog(
                    segment: segment, sealed: true, index: index, headers: scan.blocks.map(\.header), hasPostings: false, damage: damage,
                    held: holding ? opened : nil)
            }
            if damage.isEmpty { try? files.writeAtomically(SegmentName.index(segment.base), index.encode()) }
            return SegmentCatalog(
                segment: segment, sealed: true, index: index, headers: scan.blocks.map(\.header), hasPostings: damage.isEmpty, damage: damage, held: holding ? opened : nil)
        }
        // The active segment: headers only. An incomplete last block is a write in progress while
        // a writer is active; without one it is damage (the next writer's recovery quarantines it).
        let scan = try BlockScanner.scan(opened.file, verifyFrames: false)
        let damage =
            scan.damageInMiddle || !writerActive
            ? scan.damage.map {
                SegmentDamage(path: $0.path, offset: $0.offset, reason: $0.reason + (scan.damageInMiddle ? "" : " (no writer is active: this is not a write in progress)"))
            }
            : []
        let index = SegmentIndex(segmentSize: size, blocks: scan.blocks, postings: [])
        return SegmentCatalog(segment: segment, sealed: false, index: index, headers: scan.blocks.map(\.header), hasPostings: false, damage: damage)
    }
}
