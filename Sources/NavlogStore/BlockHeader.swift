public import NavlogEvents

/// What a reader needs to know about a block without decompressing it.
///
/// On disk a block is two zstd frames: this header in a *skippable* frame (so `zstd -d` passes
/// over it), then the data frame with the compressed payload. Layout of the skippable frame
/// (little endian):
///
/// | bytes | field |
/// |---|---|
/// | 4 | skippable frame magic `0x184D2A5B` |
/// | 4 | header size (everything below) |
/// | 4 | block magic `NBLK` |
/// | 1 | format version (1: one data frame; 2: a frame table follows the filter) |
/// | 1 | zstd level the data frames (a grouped block's group frames) were written at (0: not recorded) |
/// | 2 | reserved, zero |
/// | 8 | first LSN |
/// | 4 | event count |
/// | 4 | data frame size (compressed) |
/// | 4 | payload size (decompressed) |
/// | 4 | CRC-32C of the data frame |
/// | 8 × 4 | min/max event time, min/max receive time (µs) |
/// | 2 | session filter size in bytes (power of two) |
/// | 1 | version 1: zero; version 2: the number of data frames (2 to 65) |
/// | 1 | reserved, zero |
/// | n | session filter: a Bloom filter of the block's session ids (4 probes) |
/// | 12 × frames | version 2: per data frame its compressed size, payload size and CRC-32C (u32 each) |
/// | 4 | CRC-32C of the header bytes above (from the block magic on) |
///
/// A version 2 block is *grouped* (payload version 4 or 3, see ``BlockEncoder``): its data is a
/// spine frame and one frame per session group, one after another, so a reader of one session
/// decompresses two small frames instead of the whole block. ``frameSize``, ``payloadSize``
/// and ``frameChecksum`` still cover all of its data frames together.
public struct BlockHeader: Hashable, Sendable {
    /// One data frame of a grouped block.
    public struct DataFrame: Hashable, Sendable {
        /// Compressed size (0: an empty group, which has no frame).
        public var size: Int
        /// Decompressed size.
        public var payloadSize: Int
        /// CRC-32C of the frame's bytes.
        public var checksum: UInt32
    }

    /// LSN of the block's first event; the others follow without gaps.
    public var firstLSN: UInt64
    /// How many events the block holds.
    public var eventCount: Int
    /// Size of the zstd data frame after the header.
    public var frameSize: Int
    /// Size of the payload once decompressed.
    public var payloadSize: Int
    /// CRC-32C of the data frame's bytes.
    public var frameChecksum: UInt32
    /// Earliest and latest event time (device `ts`, µs).
    public var minTimestamp: Int64, maxTimestamp: Int64
    /// Earliest and latest receive time (µs).
    public var minReceived: Int64, maxReceived: Int64
    /// Bloom filter over the hashes of the block's session ids.
    public var sessionFilter: [UInt8]
    /// A grouped block's data frames (the spine first, then one per session group); empty for
    /// a block with one data frame.
    public var frames: [DataFrame] = []
    /// The zstd level the data frames were written at (1–22; a grouped block's group frames,
    /// its spine may be at ``LogOptions/spineCompressionLevel``), 0 when the writer did not
    /// record it (blocks written before navlog recorded levels). Log compaction rewrites sealed
    /// segments whose blocks were written below ``LogOptions/sealedCompressionLevel``.
    public var compressionLevel: Int = 0

    /// The number of session groups of a grouped block (0 for a block of one frame).
    public var groupCount: Int { max(0, frames.count - 1) }

    /// A header; `frames` empty for a block of one data frame.
    public init(
        firstLSN: UInt64, eventCount: Int, frameSize: Int, payloadSize: Int, frameChecksum: UInt32, minTimestamp: Int64, maxTimestamp: Int64,
        minReceived: Int64, maxReceived: Int64, sessionFilter: [UInt8], frames: [DataFrame] = [], compressionLevel: Int = 0
    ) {
        self.firstLSN = firstLSN
        self.eventCount = eventCount
        self.frameSize = frameSize
        self.payloadSize = payloadSize
        self.frameChecksum = frameChecksum
        self.minTimestamp = minTimestamp
        self.maxTimestamp = maxTimestamp
        self.minReceived = minReceived
        self.maxReceived = maxReceived
        self.sessionFilter = sessionFilter
        self.frames = frames
        self.compressionLevel = compressionLevel
    }

    /// Where data frame `index` starts, counted from the start of the block's data.
    public func offset(ofFrame index: Int) -> Int {
        var offset = 0
        for frame in frames[..<index] { offset += frame.size }
        return offset
    }

    /// LSN of the block's last event.
    public var lastLSN: UInt64 { Self.lastLSN(first: firstLSN, count: eventCount) }

    /// The last LSN of `count` events from `first`, saturating instead of trapping (damaged
    /// indexes can hold any numbers).
    public static func lastLSN(first: UInt64, count: Int) -> UInt64 {
        guard count > 0 else { return first }
        let (sum, overflow) = first.addingReportingOverflow(UInt64(count) - 1)
        return overflow ? .max : sum
    }

    /// The skippable-frame magic navlog block headers use.
    public static let skippableMagic: UInt32 = 0x184D_2A5B
    /// `NBLK` in little-endian byte order.
    public static let blockMagic: UInt32 = 0x4B4C_424E
    /// Size of the fixed part of the header payload, before the session filter.
    static let fixedSize = 4 + 1 + 3 + 8 + 4 + 4 + 4 + 4 + 32 + 2 + 2
    /// The most data frames a grouped block has (a spine and 64 groups).
    public static let maximumFrames = 65
    /// Upper bound on a header's size, to refuse absurd sizes in damaged files.
    public static let maximumSize = 8 + fixedSize + 65_536 + 12 * maximumFrames + 4
    /// Upper bound on a data frame and a payload, to refuse absurd sizes in damaged files.
    public static let maximumFrameSize = 1 << 28

    /// Size of the whole skippable frame on disk.
    public var encodedSize: Int { 8 + Self.fixedSize + sessionFilter.count + 12 * frames.count + 4 }

    /// Size of the block on disk: header frame plus data frame.
    public var blockSize: Int { encodedSize + frameSize }

    /// Appends the header's skippable frame to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        Varint.appendUInt32(Self.skippableMagic, to: &buffer)
        Varint.appendUInt32(UInt32(Self.fixedSize + sessionFilter.count + 12 * frames.count + 4), to: &buffer)
        let start = buffer.count
        Varint.appendUInt32(Self.blockMagic, to: &buffer)
        buffer.append(contentsOf: [frames.isEmpty ? 1 : 2, UInt8(clamping: max(0, compressionLevel)), 0, 0] as [UInt8])
        appendUInt64(firstLSN, to: &buffer)
        Varint.appendUInt32(UInt32(eventCount), to: &buffer)
        Varint.appendUInt32(UInt32(frameSize), to: &buffer)
        Varint.appendUInt32(UInt32(payloadSize), to: &buffer)
        Varint.appendUInt32(frameChecksum, to: &buffer)
        for value in [minTimestamp, maxTimestamp, minReceived, maxReceived] { appendUInt64(UInt64(bitPattern: value), to: &buffer) }
        buffer.append(UInt8(truncatingIfNeeded: sessionFilter.count))
        buffer.append(UInt8(truncatingIfNeeded: sessionFilter.count >> 8))
        buffer.append(contentsOf: [UInt8(truncatingIfNeeded: frames.count), 0] as [UInt8])
        buffer.append(contentsOf: sessionFilter)
        for frame in frames {
            Varint.appendUInt32(UInt32(frame.size), to: &buffer)
            Varint.appendUInt32(UInt32(frame.payloadSize), to: &buffer)
            Varint.appendUInt32(frame.checksum, to: &buffer)
        }
        let crc = buffer.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        Varint.appendUInt32(crc, to: &buffer)
    }

    /// Why bytes could not be read as a block header.
    public enum DecodingFailure: Error, Equatable, Sendable {
        /// Fewer bytes than a header needs (a torn tail, or a header still being written).
        case truncated(needed: Int)
        /// The bytes are not a navlog block header (wrong magic, version or sizes).
        case malformed(String)
        /// The header's checksum does not match its bytes.
        case checksumMismatch
    }

    /// How many bytes must be available to decode the header whose frame starts `bytes`
    /// (needs the first 8), or a failure when those 8 bytes are not a block header frame.
    public static func encodedSize(prefix bytes: UnsafeRawBufferPointer) -> Result<Int, DecodingFailure> {
        var reader = ByteReader(bytes)
        guard let magic = reader.readUInt32(), let size = reader.readUInt32() else { return .failure(.truncated(needed: 8)) }
        guard magic == skippableMagic else { return .failure(.malformed("no block header starts here (found 0x\(String(magic, radix: 16)))")) }
        guard Int(size) >= fixedSize + 4, Int(size) + 8 <= maximumSize else { return .failure(.malformed("the header claims an impossible size of \(size) bytes")) }
        return .success(Int(size) + 8)
    }

    /// Decodes a header frame from the start of `bytes`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<BlockHeader, DecodingFailure> {
        let total: Int
        switch encodedSize(prefix: bytes) {
        case .failure(let failure): return .failure(failure)
        case .success(let size): total = size
        }
        guard bytes.count >= total else { return .failure(.truncated(needed: total)) }
        let body = UnsafeRawBufferPointer(rebasing: bytes[8..<(total - 4)])
        var crcReader = ByteReader(bytes, offset: total - 4)
        guard crcReader.readUInt32() == CRC32C.checksum(body) else { return .failure(.checksumMismatch) }
        var reader = ByteReader(body)
        guard reader.readUInt32() == blockMagic else { return .failure(.malformed("the block magic is wrong")) }
        guard let version = reader.readByte(), version == 1 || version == 2 else { return .failure(.malformed("unknown block format version")) }
        // The level is a record, not something reading depends on: any byte is accepted.
        guard let level = reader.readByte() else { return .failure(.truncated(needed: total)) }
        reader.offset += 2
        guard let firstLSN = reader.readUInt64(), let count = reader.readUInt32(), let frameSize = reader.readUInt32(),
            let payloadSize = reader.readUInt32(), let frameChecksum = reader.readUInt32(),
            let minTs = reader.readUInt64(), let maxTs = reader.readUInt64(),
            let minRecv = reader.readUInt64(), let maxRecv = reader.readUInt64(),
            let filterLow = reader.readByte(), let filterHigh = reader.readByte(), let frameCount = reader.readByte(), let reserved = reader.readByte()
        else { return .failure(.truncated(needed: total)) }
        let filterSize = Int(filterLow) | Int(filterHigh) << 8
        let frameTableSize = 12 * Int(frameCount)
        // LSNs up to 2^63: a header claiming more (its last LSN would not even fit) is damaged.
        guard count > 0, firstLSN > 0, firstLSN <= UInt64(Int64.max) - UInt64(count), Int(frameSize) <= maximumFrameSize, Int(payloadSize) <= maximumFrameSize,
            filterSize + frameTableSize == reader.remaining, filterSize >= 8, filterSize & (filterSize - 1) == 0, reserved == 0,
            version == 1 ? frameCount == 0 : (2...maximumFrames).contains(Int(frameCount))
        else { return .failure(.malformed("the header's sizes are inconsistent")) }
        let filter = Array(UnsafeRawBufferPointer(rebasing: body[reader.offset..<(reader.offset + filterSize)]))
        reader.offset += filterSize
        var frames: [DataFrame] = []
        var framesTotal = 0, payloadsTotal = 0
        for _ in 0..<Int(frameCount) {
            guard let size = reader.readUInt32(), let payload = reader.readUInt32(), let checksum = reader.readUInt32() else { return .failure(.truncated(needed: total)) }
            frames.append(DataFrame(size: Int(size), payloadSize: Int(payload), checksum: checksum))
            framesTotal += Int(size)
            payloadsTotal += Int(payload)
        }
        // The frame table must add up to the data it divides; the spine is never empty, and an
        // empty group has no frame.
        guard
            frames.isEmpty
                || (framesTotal == Int(frameSize) && payloadsTotal == Int(payloadSize) && frames[0].size > 0 && frames.allSatisfy { ($0.size == 0) == ($0.payloadSize == 0) })
        else { return .failure(.malformed("the header's frame table does not add up to its data frame")) }
        return .success(
            BlockHeader(
                firstLSN: firstLSN, eventCount: Int(count), frameSize: Int(frameSize), payloadSize: Int(payloadSize),
                frameChecksum: frameChecksum,
                minTimestamp: Int64(bitPattern: minTs), maxTimestamp: Int64(bitPattern: maxTs),
                minReceived: Int64(bitPattern: minRecv), maxReceived: Int64(bitPattern: maxRecv),
                sessionFilter: filter, frames: frames, compressionLevel: Int(level)
            ))
    }

    /// Whether the block may hold events of the session whose ``StringHash`` is `hash`
    /// (false positives possible, false negatives not).
    public func mayContain(sessionHash hash: UInt64) -> Bool {
        SessionFilter.mayContain(sessionFilter, hash)
    }
}

/// The Bloom filter of a block's sessions: 4 probes by double hashing.
enum SessionFilter {
    /// A filter size (bytes) for `sessions` distinct sessions: about 16 bits each, 8 to 4096 bytes.
    static func size(for sessions: Int) -> Int {
        var bytes = 8
        while bytes < sessions * 2 && bytes < 4096 { bytes *= 2 }
        return bytes
    }

    static func insert(_ filter: inout [UInt8], _ hash: UInt64) {
        let bits = UInt64(filter.count * 8)
        let step = (hash >> 32) | 1
        var probe = hash
        for _ in 0..<4 {
            let bit = Int(probe & (bits - 1))
            filter[bit >> 3] |= 1 << UInt8(bit & 7)
            probe &+= step
        }
    }

    static func mayContain(_ filter: [UInt8], _ hash: UInt64) -> Bool {
        guard !filter.isEmpty else { return true }
        let bits = UInt64(filter.count * 8)
        let step = (hash >> 32) | 1
        var probe = hash
        for _ in 0..<4 {
            let bit = Int(probe & (bits - 1))
            if filter[bit >> 3] & (1 << UInt8(bit & 7)) == 0 { return false }
            probe &+= step
        }
        return true
    }
}

func appendUInt64(_ value: UInt64, to buffer: inout [UInt8]) {
    Varint.appendUInt32(UInt32(truncatingIfNeeded: value), to: &buffer)
    Varint.appendUInt32(UInt32(truncatingIfNeeded: value >> 32), to: &buffer)
}
