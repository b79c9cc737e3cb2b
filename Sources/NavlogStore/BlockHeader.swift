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
/// | 1 | format version (1) |
/// | 3 | reserved, zero |
/// | 8 | first LSN |
/// | 4 | event count |
/// | 4 | data frame size (compressed) |
/// | 4 | payload size (decompressed) |
/// | 4 | CRC-32C of the data frame |
/// | 8 × 4 | min/max event time, min/max receive time (µs) |
/// | 2 | session filter size in bytes (power of two) |
/// | 2 | reserved, zero |
/// | n | session filter: a Bloom filter of the block's session ids (4 probes) |
/// | 4 | CRC-32C of the header bytes above (from the block magic on) |
public struct BlockHeader: Hashable, Sendable {
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
    /// Upper bound on a header's size, to refuse absurd sizes in damaged files.
    public static let maximumSize = 8 + fixedSize + 65_536 + 4
    /// Upper bound on a data frame and a payload, to refuse absurd sizes in damaged files.
    public static let maximumFrameSize = 1 << 28

    /// Size of the whole skippable frame on disk.
    public var encodedSize: Int { 8 + Self.fixedSize + sessionFilter.count + 4 }

    /// Size of the block on disk: header frame plus data frame.
    public var blockSize: Int { encodedSize + frameSize }

    /// Appends the header's skippable frame to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        Varint.appendUInt32(Self.skippableMagic, to: &buffer)
        Varint.appendUInt32(UInt32(Self.fixedSize + sessionFilter.count + 4), to: &buffer)
        let start = buffer.count
        Varint.appendUInt32(Self.blockMagic, to: &buffer)
        buffer.append(contentsOf: [1, 0, 0, 0] as [UInt8])
        appendUInt64(firstLSN, to: &buffer)
        Varint.appendUInt32(UInt32(eventCount), to: &buffer)
        Varint.appendUInt32(UInt32(frameSize), to: &buffer)
        Varint.appendUInt32(UInt32(payloadSize), to: &buffer)
        Varint.appendUInt32(frameChecksum, to: &buffer)
        for value in [minTimestamp, maxTimestamp, minReceived, maxReceived] { appendUInt64(UInt64(bitPattern: value), to: &buffer) }
        buffer.append(UInt8(truncatingIfNeeded: sessionFilter.count))
        buffer.append(UInt8(truncatingIfNeeded: sessionFilter.count >> 8))
        buffer.append(contentsOf: [0, 0] as [UInt8])
        buffer.append(contentsOf: sessionFilter)
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
        guard reader.readByte() == 1 else { return .failure(.malformed("unknown block format version")) }
        reader.offset += 3
        guard let firstLSN = reader.readUInt64(), let count = reader.readUInt32(), let frameSize = reader.readUInt32(),
            let payloadSize = reader.readUInt32(), let frameChecksum = reader.readUInt32(),
            let minTs = reader.readUInt64(), let maxTs = reader.readUInt64(),
            let minRecv = reader.readUInt64(), let maxRecv = reader.readUInt64(),
            let filterLow = reader.readByte(), let filterHigh = reader.readByte()
        else { return .failure(.truncated(needed: total)) }
        reader.offset += 2
        let filterSize = Int(filterLow) | Int(filterHigh) << 8
        // LSNs up to 2^63: a header claiming more (its last LSN would not even fit) is damaged.
        guard count > 0, firstLSN > 0, firstLSN <= UInt64(Int64.max) - UInt64(count), Int(frameSize) <= maximumFrameSize, Int(payloadSize) <= maximumFrameSize,
            filterSize == reader.remaining, filterSize >= 8, filterSize & (filterSize - 1) == 0
        else { return .failure(.malformed("the header's sizes are inconsistent")) }
        let filter = Array(UnsafeRawBufferPointer(rebasing: body[reader.offset...]))
        return .success(
            BlockHeader(
                firstLSN: firstLSN, eventCount: Int(count), frameSize: Int(frameSize), payloadSize: Int(payloadSize),
                frameChecksum: frameChecksum,
                minTimestamp: Int64(bitPattern: minTs), maxTimestamp: Int64(bitPattern: maxTs),
                minReceived: Int64(bitPattern: minRecv), maxReceived: Int64(bitPattern: maxRecv),
                sessionFilter: filter
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
