import NavlogEvents

/// Where a block is in a segment and what its header says.
public struct BlockLocation: Hashable, Sendable {
    /// Byte offset of the block's header frame in the segment file.
    public var offset: Int
    /// The decoded header.
    public var header: BlockHeader
    /// Offset just past the block.
    public var end: Int { offset + header.blockSize }
}

/// A problem found in a segment.
public struct SegmentDamage: Hashable, Sendable, CustomStringConvertible {
    /// The segment file.
    public var path: String
    /// Byte offset of the damage.
    public var offset: Int
    /// What is wrong.
    public var reason: String
    public var description: String { "\(path) at byte \(offset): \(reason)" }
}

/// What a scan of one segment file found.
struct SegmentScan {
    /// Valid blocks, in file order.
    var blocks: [BlockLocation] = []
    /// Damage, in file order.
    var damage: [SegmentDamage] = []
    /// End of the last valid block that is followed by nothing valid (the valid prefix).
    var validPrefixEnd = 0
    /// Whether valid blocks follow damage (damage in the middle, not a torn tail).
    var damageInMiddle = false
    /// The seek table, when the file is sealed and the table is consistent.
    var seekTable: SeekTable?
    /// Whether the file ends with a seekable footer (sealed), consistent or not.
    var hasFooter = false
    /// Where block data ends (file size, or the seek table's start).
    var dataEnd = 0
}

/// Reads a segment block by block, checking each header (and, when asked, each data frame's
/// checksum), finding a seek table, and resynchronizing after damage.
enum BlockScanner {
    /// Scans `file`.
    /// - Parameter verifyFrames: also read every data frame and check its CRC (full scan).
    static func scan(_ file: borrowing StoreFile, verifyFrames: Bool) throws(StoreError) -> SegmentScan {
        var scan = SegmentScan()
        let size = try file.size()
        var buffer: [UInt8] = []
        scan.dataEnd = size
        // A sealed segment ends with a consistent seek table.
        switch try SeekTable.read(from: file, size: size) {
        case .unsealed:
            break
        case .damaged:
            scan.hasFooter = true
            scan.damage.append(SegmentDamage(path: file.path, offset: size - SeekTable.footerSize, reason: "the seek table at the end of the segment is damaged"))
        case .sealed(let table, let tableSize):
            scan.hasFooter = true
            scan.seekTable = table
            scan.dataEnd = size - tableSize
        }
        var offset = 0
        var frame: [UInt8] = []
        while offset < scan.dataEnd {
            switch try readHeader(file, at: offset, limit: scan.dataEnd, buffer: &buffer) {
            case .header(let header):
                let location = BlockLocation(offset: offset, header: header)
                if location.end > scan.dataEnd {
                    scan.damage.append(
                        SegmentDamage(path: file.path, offset: offset, reason: "the block is cut short (needs \(header.blockSize) bytes, \(scan.dataEnd - offset) remain)"))
                    offset = scan.dataEnd
                    continue
                }
                if verifyFrames {
                    try file.read(at: offset + header.encodedSize, count: header.frameSize, into: &frame)
                    if frame.withUnsafeBytes({ CRC32C.checksum($0) }) != header.frameChecksum {
                        scan.damage.append(
                            SegmentDamage(
                                path: file.path, offset: offset + header.encodedSize,
                                reason: "the data frame of the block with LSNs \(header.firstLSN)–\(header.lastLSN) fails its checksum"))
                        offset = location.end
                        continue
                    }
                }
                // A block whose LSNs do not advance repeats earlier data (a copied block): damage.
                if verifyFrames, let previous = scan.blocks.last, header.firstLSN <= previous.header.lastLSN {
                    scan.damage.append(
                        SegmentDamage(
                            path: file.path, offset: offset,
                            reason: "the block with LSNs \(header.firstLSN)–\(header.lastLSN) repeats LSNs up to \(previous.header.lastLSN) of the block before it (a copied block)"
                        ))
                    offset = location.end
                    continue
                }
                // A valid block after damage means the damage is not a torn tail.
                if scan.damage.isEmpty { scan.validPrefixEnd = location.end } else { scan.damageInMiddle = true }
                scan.blocks.append(location)
                offset = location.end
            case .invalid(let reason):
                scan.damage.append(SegmentDamage(path: file.path, offset: offset, reason: reason))
                guard let next = try resynchronize(file, after: offset, limit: scan.dataEnd) else {
                    offset = scan.dataEnd
                    continue
                }
                offset = next
            }
        }
        return scan
    }

    /// A header read attempt: the header, or why there is none.
    enum HeaderRead {
        case header(BlockHeader)
        case invalid(String)
    }

    /// Reads and decodes the header at `offset`.
    static func readHeader(_ file: borrowing StoreFile, at offset: Int, limit: Int, buffer: inout [UInt8]) throws(StoreError) -> HeaderRead {
        let available = limit - offset
        try file.read(at: offset, count: min(available, 8), into: &buffer)
        let needed: Int
        switch buffer.withUnsafeBytes({ BlockHeader.encodedSize(prefix: $0) }) {
        case .failure(let failure): return .invalid(describe(failure))
        case .success(let size): needed = size
        }
        guard needed <= available else { return .invalid("the block header is cut short") }
        try file.read(at: offset, count: needed, into: &buffer)
        switch buffer.withUnsafeBytes({ BlockHeader.decode($0) }) {
        case .failure(let failure): return .invalid(describe(failure))
        case .success(let header): return .header(header)
        }
    }

    static func describe(_ failure: BlockHeader.DecodingFailure) -> String {
        switch failure {
        case .truncated: return "the block header is cut short"
        case .malformed(let what): return "the block header is malformed: \(what)"
        case .checksumMismatch: return "the block header fails its checksum"
        }
    }

    /// Finds the next offset after `offset` where a valid block header starts, if any.
    static func resynchronize(_ file: borrowing StoreFile, after offset: Int, limit: Int) throws(StoreError) -> Int? {
        var chunk: [UInt8] = []
        var header: [UInt8] = []
        var position = offset + 1
        let chunkSize = 1 << 20
        while position + 8 <= limit {
            try file.read(at: position, count: min(chunkSize + 3, limit - position), into: &chunk)
            let found: [Int] = chunk.withUnsafeBytes { raw in
                var hits: [Int] = []
                var i = 0
                while i + 4 <= raw.count {
                    if raw[i] == 0x5B && raw[i + 1] == 0x2A && raw[i + 2] == 0x4D && raw[i + 3] == 0x18 { hits.append(i) }
                    i += 1
                }
                return hits
            }
            for hit in found where hit < chunkSize {
                if case .header = try readHeader(file, at: position + hit, limit: limit, buffer: &header) { return position + hit }
            }
            position += chunkSize
        }
        return nil
    }
}

extension SegmentDamage {
    /// The damage a read of the block at `location` of the file at `path` failed with.
    init(_ error: StoreError, at location: BlockLocation, in path: String) {
        self.init(path: path, offset: error.offset ?? location.offset, reason: error.message)
    }
}
