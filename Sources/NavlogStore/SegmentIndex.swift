import NavlogEvents

/// The sparse index of one sealed segment (`<base>.idx`): one entry per block and the session
/// postings, so LSN, time and session seeks are binary searches instead of scans.
///
/// Derived data: it is checked against its own CRC and against the segment (file size, block
/// count, contiguous offsets and LSNs) before use, rebuilt from the segment when missing or
/// wrong, and a reader still checks each block header it lands on.
///
/// Layout (little endian): magic `NIDX`, version (1 byte), the lowest zstd level the segment's
/// blocks were written at (1 byte, 0: a block did not record it), 2 zero bytes, segment size (8),
/// block count (4), posting count (4); per block: offset (8), block size (4), first LSN (8),
/// event count (4), min/max event time, min/max receive time (8 each); per posting: session
/// hash (8), block number (4), sorted by hash then block; CRC-32C of all of the above (4).
public struct SegmentIndex: Equatable, Sendable {
    /// One block of the segment.
    public struct Entry: Equatable, Sendable {
        /// Byte offset of the block in the segment.
        public var offset: Int
        /// Size of the block (header frame + data frame).
        public var size: Int
        /// First LSN.
        public var firstLSN: UInt64
        /// Number of events.
        public var count: Int
        /// Event-time bounds.
        public var minTimestamp: Int64, maxTimestamp: Int64
        /// Receive-time bounds.
        public var minReceived: Int64, maxReceived: Int64

        /// Last LSN.
        public var lastLSN: UInt64 { BlockHeader.lastLSN(first: firstLSN, count: count) }
    }

    /// A session's presence in a block.
    public struct Posting: Comparable, Sendable {
        /// ``StringHash`` of the session id.
        public var sessionHash: UInt64
        /// Block number in ``entries``.
        public var block: UInt32
        public static func < (a: Posting, b: Posting) -> Bool {
            (a.sessionHash, a.block) < (b.sessionHash, b.block)
        }
    }

    static let magic: UInt32 = 0x5844_494E  // "NIDX"

    /// The segment's size when the index was made.
    public var segmentSize: Int
    /// Blocks in file order.
    public var entries: [Entry]
    /// Session postings, sorted.
    public var postings: [Posting]
    /// The lowest zstd level the segment's blocks were written at (their headers'
    /// ``BlockHeader/compressionLevel``); 0 when one of them did not record it.
    public var compressionLevel: Int
    /// For each block, the largest event time in it and every block before it (for `since`).
    public private(set) var runningMaxTimestamp: [Int64] = []
    /// For each block, the smallest event time in it and every block after it (for `until`).
    public private(set) var suffixMinTimestamp: [Int64] = []

    /// An index of `entries` and `postings`, which it sorts where they are when the caller
    /// hands them over (`consume`): a segment's postings are millions of bytes, and sealing
    /// should not hold a second sorted copy of them.
    init(segmentSize: Int, entries: [Entry], postings: consuming [Posting], compressionLevel: Int) {
        self.segmentSize = segmentSize
        self.compressionLevel = compressionLevel
        self.entries = entries
        self.postings = postings
        self.postings.sort()
        computeBounds()
    }

    /// The index of scanned `blocks`: their entries, and their headers' lowest level.
    init(segmentSize: Int, blocks: [BlockLocation], postings: consuming [Posting]) {
        self.init(
            segmentSize: segmentSize, entries: blocks.map(Entry.init), postings: postings,
            compressionLevel: Self.lowestLevel(blocks))
    }

    private mutating func computeBounds() {
        runningMaxTimestamp = []
        suffixMinTimestamp = [Int64](repeating: .max, count: entries.count)
        var running = Int64.min
        for entry in entries {
            running = max(running, entry.maxTimestamp)
            runningMaxTimestamp.append(running)
        }
        var suffix = Int64.max
        for index in entries.indices.reversed() {
            suffix = min(suffix, entries[index].minTimestamp)
            suffixMinTimestamp[index] = suffix
        }
    }

    /// The block holding `lsn`, by binary search.
    public func block(containing lsn: UInt64) -> Int? {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].lastLSN < lsn { low = mid + 1 } else { high = mid }
        }
        return low < entries.count && entries[low].firstLSN <= lsn ? low : nil
    }

    /// The blocks that may hold events with `since ≤ ts ≤ until`, by two binary searches.
    public func blocks(since: Int64?, until: Int64?) -> Range<Int> {
        var start = 0
        if let since {
            var low = 0, high = entries.count
            while low < high {
                let mid = (low + high) / 2
                if runningMaxTimestamp[mid] < since { low = mid + 1 } else { high = mid }
            }
            start = low
        }
        var end = entries.count
        if let until {
            var low = start, high = entries.count
            while low < high {
                let mid = (low + high) / 2
                if suffixMinTimestamp[mid] <= until { low = mid + 1 } else { high = mid }
            }
            end = low
        }
        return start..<max(start, end)
    }

    /// The blocks that hold events of the session whose hash is `hash`, by binary search.
    public func blocks(forSession hash: UInt64) -> [Int] {
        var low = 0, high = postings.count
        while low < high {
            let mid = (low + high) / 2
            if postings[mid].sessionHash < hash { low = mid + 1 } else { high = mid }
        }
        var result: [Int] = []
        while low < postings.count && postings[low].sessionHash == hash {
            result.append(Int(postings[low].block))
            low += 1
        }
        return result
    }

    /// The index's bytes.
    func encode() -> [UInt8] {
        var buffer: [UInt8] = []
        // Its exact size, so that encoding a big index does not regrow (and copy) the buffer.
        buffer.reserveCapacity(28 + entries.count * 56 + postings.count * 12 + 4)
        Varint.appendUInt32(Self.magic, to: &buffer)
        buffer.append(contentsOf: [1, UInt8(clamping: max(0, compressionLevel)), 0, 0] as [UInt8])
        appendUInt64(UInt64(segmentSize), to: &buffer)
        Varint.appendUInt32(UInt32(entries.count), to: &buffer)
        Varint.appendUInt32(UInt32(postings.count), to: &buffer)
        for entry in entries {
            appendUInt64(UInt64(entry.offset), to: &buffer)
            Varint.appendUInt32(UInt32(entry.size), to: &buffer)
            appendUInt64(entry.firstLSN, to: &buffer)
            Varint.appendUInt32(UInt32(entry.count), to: &buffer)
            for value in [entry.minTimestamp, entry.maxTimestamp, entry.minReceived, entry.maxReceived] {
                appendUInt64(UInt64(bitPattern: value), to: &buffer)
            }
        }
        for posting in postings {
            appendUInt64(posting.sessionHash, to: &buffer)
            Varint.appendUInt32(posting.block, to: &buffer)
        }
        Varint.appendUInt32(CRC32C.checksum(buffer), to: &buffer)
        return buffer
    }

    /// Decodes index bytes; `nil` when the bytes are damaged or not an index.
    static func decode(_ bytes: [UInt8]) -> SegmentIndex? {
        bytes.withUnsafeBytes { raw -> SegmentIndex? in
            guard raw.count >= 28 else { return nil }
            var crcReader = ByteReader(raw, offset: raw.count - 4)
            guard crcReader.readUInt32() == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 4)])) else { return nil }
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 4)]))
            guard reader.readUInt32() == magic, reader.readByte() == 1, let level = reader.readByte() else { return nil }
            reader.offset += 2
            guard let size = reader.readUInt64(), let blockCount = reader.readUInt32(), let postingCount = reader.readUInt32(),
                reader.remaining == Int(blockCount) * 56 + Int(postingCount) * 12
            else { return nil }
            var entries: [Entry] = []
            entries.reserveCapacity(Int(blockCount))
            for _ in 0..<blockCount {
                guard let offset = reader.readUInt64(), let blockSize = reader.readUInt32(), let first = reader.readUInt64(),
                    let count = reader.readUInt32(), let a = reader.readUInt64(), let b = reader.readUInt64(),
                    let c = reader.readUInt64(), let d = reader.readUInt64()
                else { return nil }
                entries.append(
                    Entry(
                        offset: Int(truncatingIfNeeded: offset), size: Int(blockSize), firstLSN: first, count: Int(count),
                        minTimestamp: Int64(bitPattern: a), maxTimestamp: Int64(bitPattern: b),
                        minReceived: Int64(bitPattern: c), maxReceived: Int64(bitPattern: d)
                    ))
            }
            var postings: [Posting] = []
            postings.reserveCapacity(Int(postingCount))
            for _ in 0..<postingCount {
                guard let hash = reader.readUInt64(), let block = reader.readUInt32(), block < blockCount else { return nil }
                postings.append(Posting(sessionHash: hash, block: block))
            }
            return SegmentIndex(segmentSize: Int(truncatingIfNeeded: size), entries: entries, postings: postings, compressionLevel: Int(level))
        }
    }

    /// The lowest level of `blocks`' headers (0 for none, or when one did not record it).
    static func lowestLevel(_ blocks: some Sequence<BlockLocation>) -> Int {
        blocks.lazy.map(\.header.compressionLevel).min() ?? 0
    }

    /// Whether the index describes a segment of `size` bytes whose seek table is `table`:
    /// same size, one entry per seek-table frame with the same sizes, contiguous offsets and LSNs.
    func agrees(withSegmentSize size: Int, seekTable table: SeekTable?) -> Bool {
        guard segmentSize == size, !entries.isEmpty, entries[0].offset == 0 else { return false }
        if let table {
            guard table.entries.count == entries.count else { return false }
            for (entry, frame) in zip(entries, table.entries) where Int(frame.compressedSize) != entry.size { return false }
        }
        for index in 1..<entries.count {
            let previous = entries[index - 1]
            guard entries[index].offset == previous.offset + previous.size, entries[index].firstLSN == previous.lastLSN + 1,
                entries[index].count > 0
            else { return false }
        }
        return entries[0].count > 0
    }
}

// In an extension, so that Swift still makes the memberwise initializer the index reader uses.
extension SegmentIndex.Entry {
    /// The entry of a block just written.
    init(_ location: BlockLocation) {
        offset = location.offset
        size = location.header.blockSize
        firstLSN = location.header.firstLSN
        count = location.header.eventCount
        minTimestamp = location.header.minTimestamp
        maxTimestamp = location.header.maxTimestamp
        minReceived = location.header.minReceived
        maxReceived = location.header.maxReceived
    }
}
