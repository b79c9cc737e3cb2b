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
    ///   data is damaged is rewritten with its valid blocks (the damage quarantined) and resealed.
    /// - A block that fails its checksum by one flipped bit (header or data) is corrected in place.
    /// - An unsealed segment is read completely, every block checked against its checksum. A torn
    ///   or corrupt tail (nothing valid after it) is cut off, keeping the exact valid prefix; the
    ///   bytes cut are kept in a quarantine file beside the segment. Damage followed by valid
    ///   blocks (garbage, an unrepairable block, a copy of a block: LSNs that do not advance) is
    ///   quarantined and the segment rewritten with every valid block, so damage costs only the
    ///   damaged bytes. An unsealed segment that is not the last one is then sealed.
    /// - A sealed segment whose seek table is damaged but whose blocks are intact is resealed.
    /// - The next LSN is one past the highest LSN found anywhere, set-aside segments included,
    ///   so LSNs are never reused.
    static func recover(_ files: LogDirectory, _ report: inout RecoveryReport, _ state: inout RecoveredState) throws(StoreError) {
        let segments = try files.segments()
        var highest: UInt64 = 0
        for (position, segment) in segments.enumerated() {
            let isLast = position == segments.count - 1
            highest = max(highest, segment.base > 0 ? segment.base - 1 : 0)
            var file = try StoreFile(path: segment.path, writable: true)
            var size = try file.size()
            let quick = try BlockScanner.scan(file, verifyFrames: false)
            if quick.seekTable != nil && quick.damage.isEmpty && quick.blocks.last?.end == quick.dataEnd
                && quick.blocks.count == quick.seekTable!.entries.count
            {
                // Sealed and structurally sound.
                highest = max(highest, quick.blocks.last?.header.lastLSN ?? 0)
                continue
            }
            // A single flipped bit in a block is corrected first: a complete block that fails its
            // checksum is damage, not a torn write, and must not be cut as one.
            let repairs = try repairSingleBitFlips(file, dataEnd: quick.dataEnd)
            if !repairs.isEmpty {
                report.repaired.append(contentsOf: repairs)
                try file.sync()
            }
            var full = try BlockScanner.scan(file, verifyFrames: true)
            highest = max(highest, full.blocks.map(\.header.lastLSN).max() ?? 0)
            report.damage.append(contentsOf: full.damage)
            let sealedButDamagedData = full.seekTable != nil && !full.damage.isEmpty
            if full.damageInMiddle || sealedButDamagedData {
                // Damage with valid blocks after it (garbage, an unrepairable block, a repeated
                // block): keep every valid block, quarantine the rest, and go on with the result.
                report.quarantined.append(contentsOf: try rewriteKeepingValidBlocks(file, files, segment, full))
                report.rewritten.append(segment.name)
                try files.remove(SegmentName.index(segment.base))
                file = try StoreFile(path: segment.path, writable: true)
                size = try file.size()
                full = try BlockScanner.scan(file, verifyFrames: true)
            }
            // Only a torn tail (or a torn or damaged seek table): keep the exact valid prefix; the
            // bytes cut go to a quarantine file first (a torn write costs a few bytes of disk; a
            // damaged block that could not be repaired is kept for a later look).
            let keep = full.validPrefixEnd
            if keep < size {
                report.quarantined.append(try quarantine(file, files, name: segment.name, keep..<size))
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
