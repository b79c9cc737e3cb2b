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
        var block = DecodedBlock()
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
                if isLast && writerActive && !scan.hasFooter && !scan.damageInMiddle && damage.offset >= scan.validPrefixEnd { continue }
                report.problems.append(damage)
            }
            var expected = previousLast.map { $0 + 1 } ?? segment.base
            if let first = scan.blocks.first, first.header.firstLSN != segment.base {
                report.problems.append(
                    SegmentDamage(
                        path: segment.path, offset: first.offset, reason: "the segment is named for LSN \(segment.base) but its first block starts at LSN \(first.header.firstLSN)")
                )
            }
            if let previousLast, segment.base != previousLast + 1 {
                report.problems.append(
                    SegmentDamage(path: segment.path, offset: 0, reason: "LSNs \(previousLast + 1)–\(segment.base - 1) are missing between this segment and the one before"))
            }
            // Session postings of the decoded blocks, to check the index against without
            // decoding the segment a second time.
            var postings: [SegmentIndex.Posting] = []
            var everyBlockDecoded = true
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
                var line: [UInt8] = []
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
            previousLast = scan.blocks.last?.header.lastLSN ?? previousLast
            // A sealed segment: the seek table must list exactly the blocks.
            if let table = scan.seekTable {
                // Every field: each entry's compressed size (header and data frames) and
                // decompressed size (the payload), the entry count, and the descriptor byte.
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
                // Its index, if present, must agree with the segment.
                var buffer: [UInt8] = []
                if let indexFile = try? StoreFile(path: files.file(SegmentName.index(segment.base)), writable: false) {
                    try indexFile.read(at: 0, count: try indexFile.size(), into: &buffer)
                    let size = try file.size()
                    if let index = SegmentIndex.decode(buffer) {
                        let expectedEntries = scan.blocks.map(SegmentIndex.Entry.init)
                        if !index.agrees(withSegmentSize: size, seekTable: table) || index.entries != expectedEntries {
                            report.problems.append(
                                SegmentDamage(path: indexFile.path, offset: 0, reason: "the index disagrees with its segment (readers rebuild it; delete it to rebuild now)"))
                        } else if index.compressionLevel != SegmentIndex.lowestLevel(scan.blocks) {
                            // Compaction picks segments by this level: a wrong one would make it
                            // compress a segment again for nothing, or never.
                            report.problems.append(
                                SegmentDamage(
                                    path: indexFile.path, offset: 0,
                                    reason:
                                        "the index says its segment's blocks are compressed at zstd level \(index.compressionLevel) where the lowest of their headers says \(SegmentIndex.lowestLevel(scan.blocks)); compaction goes by it (delete it: readers rebuild a missing index from the segment)"
                                ))
                        } else if scan.damage.isEmpty, everyBlockDecoded, postings.sorted() != index.postings {
                            report.problems.append(
                                SegmentDamage(
                                    path: indexFile.path, offset: 0, reason: "the index's session postings disagree with the segment (readers rebuild it; delete it to rebuild now)"
                                ))
                        }
                    } else {
                        report.problems.append(SegmentDamage(path: indexFile.path, offset: 0, reason: "the index is damaged (readers rebuild it; delete it to rebuild now)"))
                    }
                }
            }
        }
        return report
    }
}
