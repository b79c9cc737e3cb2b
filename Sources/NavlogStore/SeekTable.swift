import NavlogEvents

/// The zstd seekable-format seek table that ends a sealed segment.
///
/// A skippable frame (magic `0x184D2A5E`) holding one entry per block, then a 9-byte footer:
/// frame count, descriptor (0: no per-frame checksums, blocks carry their own), and the
/// seekable magic `0x8F92EAB1`. Each entry's compressed size spans the block's header frame and
/// data frame together, so cumulative sizes give each block's offset; its decompressed size is
/// the block payload's (the header frame decompresses to nothing).
struct SeekTable: Equatable {
    static let skippableMagic: UInt32 = 0x184D_2A5E
    static let seekableMagic: UInt32 = 0x8F92_EAB1
    static let footerSize = 9

    struct Entry: Equatable {
        var compressedSize: UInt32
        var decompressedSize: UInt32
    }

    var entries: [Entry]
    /// The footer's descriptor byte as read (navlog writes 0: no per-frame checksums; bit 7 is
    /// the checksum flag, bits 6–2 are reserved).
    var descriptor: UInt8 = 0

    /// The size of the whole skippable frame.
    var encodedSize: Int { 8 + entries.count * 8 + Self.footerSize }

    func encode(into buffer: inout [UInt8]) {
        Varint.appendUInt32(Self.skippableMagic, to: &buffer)
        Varint.appendUInt32(UInt32(entries.count * 8 + Self.footerSize), to: &buffer)
        for entry in entries {
            Varint.appendUInt32(entry.compressedSize, to: &buffer)
            Varint.appendUInt32(entry.decompressedSize, to: &buffer)
        }
        Varint.appendUInt32(UInt32(entries.count), to: &buffer)
        buffer.append(0)
        Varint.appendUInt32(Self.seekableMagic, to: &buffer)
    }

    /// The number of frames a footer (the last 9 bytes of a file) announces, or `nil` when the
    /// bytes are not a seekable footer.
    static func frameCount(footer: UnsafeRawBufferPointer) -> Int? {
        guard footer.count == footerSize else { return nil }
        var reader = ByteReader(footer)
        guard let count = reader.readUInt32(), let descriptor = reader.readByte(), let magic = reader.readUInt32(),
            magic == seekableMagic, descriptor & 0x7C == 0
        else { return nil }
        return Int(count)
    }

    /// Decodes a seek table frame (the last `8 + count * 8 + 9` bytes of a file).
    static func decode(_ bytes: UnsafeRawBufferPointer, frameCount: Int) -> SeekTable? {
        var reader = ByteReader(bytes)
        guard reader.readUInt32() == skippableMagic, reader.readUInt32() == UInt32(frameCount * 8 + footerSize) else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(frameCount)
        for _ in 0..<frameCount {
            guard let compressed = reader.readUInt32(), let decompressed = reader.readUInt32() else { return nil }
            entries.append(Entry(compressedSize: compressed, decompressedSize: decompressed))
        }
        return SeekTable(entries: entries)
    }

    /// What the end of a segment file says about sealing.
    enum Ending {
        /// No seekable footer: the segment is not sealed (active, or its seal was torn).
        case unsealed
        /// A footer whose table does not decode or does not fit the file.
        case damaged
        /// A consistent seek table of `size` bytes at the end of the file.
        case sealed(SeekTable, size: Int)
    }

    /// Reads the seek table at the end of a segment file of `size` bytes.
    static func read(from file: borrowing StoreFile, size: Int) throws(StoreError) -> Ending {
        guard size >= footerSize + 8 else { return .unsealed }
        var buffer: [UInt8] = []
        try file.read(at: size - footerSize, count: footerSize, into: &buffer)
        guard let frames = buffer.withUnsafeBytes({ frameCount(footer: $0) }) else { return .unsealed }
        let tableSize = 8 + frames * 8 + footerSize
        guard frames < (1 << 27), tableSize <= size else { return .damaged }
        try file.read(at: size - tableSize, count: tableSize, into: &buffer)
        guard var table = buffer.withUnsafeBytes({ decode($0, frameCount: frames) }) else { return .damaged }
        table.descriptor = buffer[buffer.count - 5]
        return .sealed(table, size: tableSize)
    }
}
