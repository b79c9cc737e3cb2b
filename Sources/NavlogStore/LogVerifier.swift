/// Checks a whole data directory: every block's header and data checksums, that every block
/// decompresses and decodes, LSN continuity within and across segments, seek tables, and that
/// each index agrees with its segment.
public enum LogVerifier {
    /// What verification found.
    public struct Report: Sendable {
        /// Segments checked.
        public var segments = 0
        /// Valid blocks.
        public var blocks = 0
        /// Events in valid blocks.
        public var events = 0
        /// The LSN range seen.
        public var lsns: ClosedRange<UInt64>?
        /// Every problem, each naming a file and byte offset.
        public var problems: [SegmentDamage] = []
        /// Whether nothing is wrong.
        public var isClean: Bool { problems.isEmpty }
    }

    /// Verifies `directory`.
    /// - Throws: ``StoreError`` when the directory cannot be read at all.
    public static func verify(directory: String) throws(StoreError) -> Report {
        guard LogDirectory.exists(directory) else {
            throw StoreError(code: .badDirectory, message: "There is no data directory at \(directory). Check --data-dir.", path: directory)
        }
        let files = LogDirectory(path: directory)
        // If no writer holds the lock, an incomplete last block is crash damage, not a write in progress.
        let writerActive = (try? StoreFile(path: files.file(SegmentName.lockFile), writable: false))?.isLockedExclusively() ?? false
        var report = Report()
        var reader = try BlockReader()
        var previousLast: UInt64?
        let segments = try files.segments()
        for name in try files.names().sorted() where name.hasSuffix(SegmentName.damagedSuffix) {
            report.problems.append(
                SegmentDamage(path: files.file(name), offset: 0, reason: "recovery set this segment aside because its data is damaged; its events are not readable by navlog"))
        }
        for (position, segment) in segments.enumerated() {
            report.segments += 1
            let file = try StoreFile(path: segment.path, writable: false)
            let scan = try BlockScanner.scan(file, verifyFrames: true)
            let isLast = position == segments.count - 1
            for damage in scan.damage {
                // The last segment's incomplete tail while a writer holds the lock is a write in progress.
                if isLast && writerActive && !scan.hasFooter && !scan.damageInMiddle && damage.offset >= scan.validPrefixEnd { continue }
                report.problems.append(damage)
            }
            checkSegmentStart(segment, scan, after: previousLast, &report)
            let blocks = checkBlocks(segment, file, scan, after: previousLast, &reader, &report)
            previousLast = scan.blocks.last?.header.lastLSN ?? previousLast
            // A sealed segment: the seek table must list exactly the blocks, and its index agree.
            if let table = scan.seekTable {
                checkSeekTable(table, segment, scan, &report)
                try checkIndex(files.file(SegmentName.index(segment.base)), segment: file, scan, table, postings: blocks.everyBlockDecoded ? blocks.postings : nil, &report)
            }
        }
        return report
    }

    /// The segment's name against its first block, and against the segment before it.
    private static func checkSegmentStart(_ segment: LogDirectory.Segment, _ scan: SegmentScan, after previousLast: UInt64?, _ report: inout Report) {
        if let first = scan.blocks.first, first.header.firstLSN != segment.base {
            report.problems.append(
                SegmentDamage(
                    path: segment.path, offset: first.offset, reason: "the segment is named for LSN \(segment.base) but its first block starts at LSN \(first.header.firstLSN)"))
        }
        if let previousLast, segment.base != previousLast + 1 {
            report.problems.append(
                SegmentDamage(path: segment.path, offset: 0, reason: "LSNs \(previousLast + 1)–\(segment.base - 1) are missing between this segment and the one before"))
        }
    }

    /// Reads every block of a segment: LSNs continue from block to block, each block
    /// decompresses and decodes, and each event's body prints. Returns the session postings of
    /// the blocks read, to check the index against without decoding the segment again.
    private static func checkBlocks(
        _ segment: LogDirectory.Segment, _ file: borrowing StoreFile, _ scan: SegmentScan, after previousLast: UInt64?, _ reader: inout BlockReader,
        _ report: inout Report
    ) -> (postings: [SegmentIndex.Posting], everyBlockDecoded: Bool) {
        var expected = previousLast.map { $0 + 1 } ?? segment.base
        var postings: [SegmentIndex.Posting] = []
        var everyBlockDecoded = true
        var block = DecodedBlock()
        var line: [UInt8] = []
        for (blockNumber, location) in scan.blocks.enumerated() {
            let header = location.header
            if header.firstLSN != expected && !(location == scan.blocks.first) {
                report.problems.append(
                    SegmentDamage(path: segment.path, offset: location.offset, reason: "the block starts at LSN \(header.firstLSN) where \(expected) was expected"))
            }
            expected = header.lastLSN + 1
            do {
                try reader.read(location, from: file, into: &block)
            } catch {
                report.problems.append(SegmentDamage(path: segment.path, offset: error.offset ?? location.offset, reason: error.message))
                everyBlockDecoded = false
                continue
            }
            postings.append(contentsOf: SegmentIndexBuilder.postings(of: block, number: blockNumber))
            var bodiesOK = true
            for index in 0..<block.count {
                line.removeAll(keepingCapacity: true)
                do { try block.appendJSONLine(index, to: &line) } catch {
                    report.problems.append(SegmentDamage(path: segment.path, offset: location.offset, reason: "event LSN \(block.lsn(index)) has a malformed body"))
                    bodiesOK = false
                    break
                }
            }
            guard bodiesOK else {
                everyBlockDecoded = false
                continue
            }
            report.blocks += 1
            report.events += header.eventCount
            // Lowest and highest: a damaged log may hold blocks out of order (reported above).
            let low = min(report.lsns?.lowerBound ?? header.firstLSN, header.firstLSN)
            report.lsns = low...max(report.lsns?.upperBound ?? header.lastLSN, header.lastLSN, low)
        }
        return (postings, everyBlockDecoded)
    }

    /// A sealed segment's seek table against its blocks: every field, each entry's compressed
    /// size (header and data frames) and decompressed size (the payload), the entry count, and
    /// the descriptor byte.
    private static func checkSeekTable(_ table: SeekTable, _ segment: LogDirectory.Segment, _ scan: SegmentScan, _ report: inout Report) {
        let sizes = scan.blocks.map { UInt32($0.header.blockSize) }
        if table.entries.map(\.compressedSize) != sizes || scan.blocks.last?.end != scan.dataEnd {
            report.problems.append(SegmentDamage(path: segment.path, offset: scan.dataEnd, reason: "the seek table does not match the segment's blocks"))
        } else if let wrong = zip(table.entries, scan.blocks).enumerated().first(where: { Int($0.element.0.decompressedSize) != $0.element.1.header.payloadSize }) {
            report.problems.append(
                SegmentDamage(
                    path: segment.path, offset: scan.dataEnd,
                    reason:
                        "seek table entry \(wrong.offset) says block \(wrong.offset) decompresses to \(wrong.element.0.decompressedSize) bytes, but it holds \(wrong.element.1.header.payloadSize): readers that seek by the table would misplace data"
                ))
        }
        if table.descriptor != 0 {
            let flag = table.descriptor & 0x80 != 0 ? "the checksum flag is set (each entry would then be 12 bytes, not 8)" : "reserved or unused bits are set"
            report.problems.append(
                SegmentDamage(
                    path: segment.path, offset: scan.dataEnd,
                    reason: "the seek table's footer descriptor is 0x\(String(table.descriptor, radix: 16)) where navlog writes 0x0: \(flag)"))
        }
    }

    /// A sealed segment's index, if present, against the segment: its entries, compression
    /// level and (when every block decoded: `postings`) session postings.
    private static func checkIndex(
        _ path: String, segment file: borrowing StoreFile, _ scan: SegmentScan, _ table: SeekTable, postings: [SegmentIndex.Posting]?, _ report: inout Report
    ) throws(StoreError) {
        guard let indexFile = try? StoreFile(path: path, writable: false) else { return }
        var buffer: [UInt8] = []
        try indexFile.read(at: 0, count: try indexFile.size(), into: &buffer)
        let size = try file.size()
        guard let index = SegmentIndex.decode(buffer) else {
            report.problems.append(SegmentDamage(path: indexFile.path, offset: 0, reason: "the index is damaged (readers rebuild it; delete it to rebuild now)"))
            return
        }
        let expectedEntries = scan.blocks.map(SegmentIndex.Entry.init)
        if !index.agrees(withSegmentSize: size, seekTable: table) || index.entries != expectedEntries {
            report.problems.append(
                SegmentDamage(path: indexFile.path, offset: 0, reason: "the index disagrees with its segment (readers rebuild it; delete it to rebuild now)"))
        } else if index.compressionLevel != SegmentIndex.lowestLevel(scan.blocks) {
            // Compaction picks segments by this level: a wrong one would make it compress a
            // segment again for nothing, or never.
            report.problems.append(
                SegmentDamage(
                    path: indexFile.path, offset: 0,
                    reason:
                        "the index says its segment's blocks are compressed at zstd level \(index.compressionLevel) where the lowest of their headers says \(SegmentIndex.lowestLevel(scan.blocks)); compaction goes by it (delete it: readers rebuild a missing index from the segment)"
                ))
        } else if scan.damage.isEmpty, let postings, postings.sorted() != index.postings {
            report.problems.append(
                SegmentDamage(
                    path: indexFile.path, offset: 0, reason: "the index's session postings disagree with the segment (readers rebuild it; delete it to rebuild now)"))
        }
    }
}
