import NavlogEvents
import NavlogZstd

/// Repairs that recovery makes before it decides what to keep: a single flipped bit in a block
/// (header or data) is corrected from its CRC-32C, and bytes recovery must take out of a
/// segment are kept in a quarantine file beside it, never just deleted.
extension EventLog {
    /// Walks `file`'s blocks from the start and corrects every block whose header or data frame
    /// fails its checksum by exactly one bit (a bit flip on disk or in transit), writing the
    /// corrected byte in place. Stops at the first damage it cannot correct (recovery then
    /// judges the rest). Returns the repairs made, as damage reports saying what was fixed.
    static func repairSingleBitFlips(_ file: borrowing StoreFile, dataEnd: Int) throws(StoreError) -> [SegmentDamage] {
        var repairs: [SegmentDamage] = []
        var offset = 0
        var buffer: [UInt8] = []
        while offset + 8 <= dataEnd {
            try file.read(at: offset, count: 8, into: &buffer)
            guard case .success(let headerSize) = buffer.withUnsafeBytes({ BlockHeader.encodedSize(prefix: $0) }), offset + headerSize <= dataEnd else {
                return repairs
            }
            try file.read(at: offset, count: headerSize, into: &buffer)
            var decoded = buffer.withUnsafeBytes { BlockHeader.decode($0) }
            if case .failure(.checksumMismatch) = decoded {
                let stored = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: headerSize - 4, as: UInt32.self).littleEndian }
                guard
                    let (byte, bit) = buffer.withUnsafeBytes({
                        CRC32C.locateSingleBitError(in: UnsafeRawBufferPointer(rebasing: $0[8..<(headerSize - 4)]), expected: stored)
                    })
                else { return repairs }
                let position = byte < 0 ? headerSize - 4 + Int(bit / 8) : 8 + byte
                buffer[position] ^= 1 << (byte < 0 ? bit % 8 : bit)
                decoded = buffer.withUnsafeBytes { BlockHeader.decode($0) }
                guard case .success = decoded else { return repairs }
                try [buffer[position]].withBytes { (raw) throws(StoreError) in try file.write(raw, at: offset + position) }
                repairs.append(SegmentDamage(path: file.path, offset: offset + position, reason: "a flipped bit in a block header was corrected from its checksum"))
            }
            guard case .success(let header) = decoded, offset + header.blockSize <= dataEnd else { return repairs }
            try file.read(at: offset + header.encodedSize, count: header.frameSize, into: &buffer)
            if buffer.withUnsafeBytes({ CRC32C.checksum($0) }) != header.frameChecksum {
                guard let (byte, bit) = buffer.withUnsafeBytes({ CRC32C.locateSingleBitError(in: $0, expected: header.frameChecksum) }), byte >= 0 else {
                    return repairs
                }
                buffer[byte] ^= 1 << bit
                // Several damaged bits can match a one-bit pattern by chance: write only what
                // also decompresses to the payload the header announces, else leave the damage
                // (and its original bytes) for quarantine.
                guard buffer.withUnsafeBytes({ CRC32C.checksum($0) }) == header.frameChecksum,
                    Self.decompresses(buffer, header: header)
                else { return repairs }
                try [buffer[byte]].withBytes { (raw) throws(StoreError) in try file.write(raw, at: offset + header.encodedSize + byte) }
                repairs.append(
                    SegmentDamage(
                        path: file.path, offset: offset + header.encodedSize + byte,
                        reason: "a flipped bit in the data of the block with LSNs \(header.firstLSN)–\(header.lastLSN) was corrected from its checksum"))
            }
            offset += header.blockSize
        }
        return repairs
    }

    /// Copies bytes `range` of segment `name` to `<name>.quarantine-<offset>` beside it (synced),
    /// before recovery takes them out of the segment: nothing is deleted that a later look
    /// (or `navlog verify`, or a person with zstd) might still read.
    static func quarantine(_ file: borrowing StoreFile, _ files: LogDirectory, name: String, _ range: Range<Int>) throws(StoreError) -> String {
        var bytes: [UInt8] = []
        try file.read(at: range.lowerBound, count: range.count, into: &bytes)
        let quarantined = name + SegmentName.quarantineInfix + String(range.lowerBound)
        try files.writeAtomically(quarantined, bytes)
        return quarantined
    }

    /// Whether a block's data (all its frames) decompresses to the payload size its header says.
    private static func decompresses(_ data: [UInt8], header: BlockHeader) -> Bool {
        guard let decompressor = try? ZstdDecompressor() else { return false }
        var payload: [UInt8] = []
        let decompressed: Bool = data.withUnsafeBytes { raw in
            do throws(ZstdError) {
                try BlockReader.decompressData(raw, header: header, decompressor: decompressor, into: &payload)
                return true
            } catch {
                return false
            }
        }
        return decompressed && payload.count == header.payloadSize
    }
}

extension EventLog {
    /// Rewrites segment `segment` with only its valid blocks, in order: every damaged region
    /// (garbage, an unreadable block, a block that repeats LSNs) is quarantined and left out, so
    /// damage costs only the damaged bytes, never the valid blocks around it. The new file
    /// replaces the old one atomically (temporary file, fsync, rename).
    static func rewriteKeepingValidBlocks(
        _ file: borrowing StoreFile, _ files: LogDirectory, _ segment: LogDirectory.Segment, _ scan: SegmentScan
    ) throws(StoreError) -> [String] {
        var quarantined: [String] = []
        var kept: [UInt8] = []
        var buffer: [UInt8] = []
        var position = 0
        for block in scan.blocks {
            if block.offset > position { quarantined.append(try quarantine(file, files, name: segment.name, position..<block.offset)) }
            try file.read(at: block.offset, count: block.header.blockSize, into: &buffer)
            kept.append(contentsOf: buffer)
            position = block.end
        }
        if position < scan.dataEnd { quarantined.append(try quarantine(file, files, name: segment.name, position..<scan.dataEnd)) }
        try files.writeAtomically(segment.name, kept)
        return quarantined
    }
}
