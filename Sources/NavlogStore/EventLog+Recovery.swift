import NavlogEvents

/// What recovery leaves for the writer.
struct RecoveredState {
    /// The segment to keep appending to (the last one, unsealed and healthy).
    struct ActiveSegment {
        var base: UInt64
        var size: Int
        var blocks: [BlockLocation]
    }

    var nextLSN: UInt64 = 1
    var active: ActiveSegment?
}

extension EventLog {
    /// Brings a data directory back to a consistent state after any crash, like Kafka's
    /// `LogLoader.recoverLog`:
    ///
    /// - A sealed segment (seekable footer) is checked block header by block header; one whose
    ///   data is damaged is renamed to `*.damaged` and never appended to again.
    /// - An unsealed segment is read completely, every block checked against its checksum. A torn
    ///   or corrupt tail (nothing valid after it) is cut off, keeping the exact valid prefix;
    ///   damage followed by valid blocks sets the segment aside instead (cutting would lose them).
    ///   An unsealed segment that is not the last one is then sealed.
    /// - A sealed segment whose seek table is damaged but whose blocks are intact is resealed.
    /// - The next LSN is one past the highest LSN found anywhere, set-aside segments included,
    ///   so LSNs are never reused.
    static func recover(_ files: LogDirectory, _ report: inout RecoveryReport, _ state: inout RecoveredState) throws(StoreError) {
        let segments = try files.segments()
        var highest: UInt64 = 0
        for (position, segment) in segments.enumerated() {
            let isLast = position == segments.count - 1
            highest = max(highest, segment.base > 0 ? segment.base - 1 : 0)
            let file = try StoreFile(path: segment.path, writable: true)
            let size = try file.size()
            let quick = try BlockScanner.scan(file, verifyFrames: false)
            if quick.seekTable != nil && quick.damage.isEmpty && quick.blocks.last?.end == quick.dataEnd
                && quick.blocks.count == quick.seekTable!.entries.count
            {
                // Sealed and structurally sound.
                highest = max(highest, quick.blocks.last?.header.lastLSN ?? 0)
                continue
            }
            let full = try BlockScanner.scan(file, verifyFrames: true)
            highest = max(highest, full.blocks.map(\.header.lastLSN).max() ?? 0)
            report.damage.append(contentsOf: full.damage)
            let sealedButDamagedData = full.seekTable != nil && !full.damage.isEmpty
            if full.damageInMiddle || sealedButDamagedData {
                try files.rename(segment.name, to: segment.name + SegmentName.damagedSuffix)
                try files.remove(SegmentName.index(segment.base))
                report.setAside.append(segment.name)
                continue
            }
            // Only a torn tail (or a torn or damaged seek table): keep the exact valid prefix.
            let keep = full.validPrefixEnd
            if keep < size {
                try file.truncate(to: keep)
                try file.sync()
                report.truncatedBytes += size - keep
                report.truncatedSegments.append(segment.name)
            }
            try files.remove(SegmentName.index(segment.base))
            if full.blocks.isEmpty {
                // Nothing valid: drop the file (its name still counts for the next LSN).
                try files.remove(segment.name)
                continue
            }
            if isLast && !full.hasFooter {
                state.active = RecoveredState.ActiveSegment(base: segment.base, size: keep, blocks: full.blocks)
            } else {
                try reseal(file, files, segment, full.blocks)
                report.resealed.append(segment.name)
            }
        }
        // Set-aside segments count too: their LSNs may have been seen by readers.
        for name in try files.names() where name.hasSuffix(SegmentName.segmentSuffix + SegmentName.damagedSuffix) {
            if let base = SegmentName.baseLSN(ofSegment: String(name.dropLast(SegmentName.damagedSuffix.count))) {
                highest = max(highest, base)
                let file = try StoreFile(path: files.file(name), writable: false)
                let scan = try BlockScanner.scan(file, verifyFrames: false)
                highest = max(highest, scan.blocks.map(\.header.lastLSN).max() ?? 0)
            }
        }
        // LSNs are limited to 2^63 (block headers above that are damage); a segment named past
        // that is not one navlog wrote.
        guard highest < UInt64(Int64.max) else {
            throw StoreError(
                code: .damaged,
                message:
                    "The data directory \(files.path) has a segment named for LSN \(highest), past the largest LSN navlog writes (2^63 − 1): it was not written by navlog. Move it out of the directory.",
                path: files.path)
        }
        state.nextLSN = highest + 1
        try syncDirectory(files.path)
    }

    /// Writes a fresh seek table and index for a segment whose blocks are `blocks` (already
    /// truncated to their end).
    private static func reseal(_ file: borrowing StoreFile, _ files: LogDirectory, _ segment: LogDirectory.Segment, _ blocks: [BlockLocation]) throws(StoreError) {
        let end = blocks.last!.end
        var table: [UInt8] = []
        SeekTable(entries: blocks.map { SeekTable.Entry(compressedSize: UInt32($0.header.blockSize), decompressedSize: UInt32($0.header.payloadSize)) }).encode(into: &table)
        try table.withBytes { (raw) throws(StoreError) in try file.write(raw, at: end) }
        try file.sync()
        let index = try SegmentIndexBuilder.build(file, segmentSize: end + table.count)
        try files.writeAtomically(SegmentName.index(segment.base), index.encode())
    }
}
