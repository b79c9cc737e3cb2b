/// The binary token grammar event bodies are stored in.
///
/// A body is one `object` token holding the event's own fields (everything but `type`,
/// `session`, `ts` and `seq`, which live in the event header). The grammar comes in two forms
/// that differ only in how strings and counts are written:
/// - ``BodyForm/inline``: strings carry their bytes (`u32` length + bytes) and counts are `u32`;
///   this is what the parser produces, self-contained, in an ``EventBatch``.
/// - ``BodyForm/interned``: strings are varint references into a block's string table and
///   counts are varints; this is what the log stores.
///
/// Keys are one byte: a ``FieldName`` raw value (1–127), or ``BodyToken/unknownKey`` followed by
/// a string. The tag values are written to disk: never change them.
public enum BodyToken: UInt8, Sendable {
    case object = 1, array, string, integer, number, `true`, `false`, null
    /// Key byte announcing a key that is not a ``FieldName``; a string follows.
    public static let unknownKey: UInt8 = 0x80
}

/// Which of the two encodings of ``BodyToken`` a buffer uses.
public enum BodyForm: Sendable {
    /// Strings inline, counts as `u32`.
    case inline
    /// Strings as references into a string table, counts as varints.
    case interned
}

/// Little helpers for the integer encodings used by tokens and blocks.
public enum Varint {
    /// Appends `value` as an unsigned LEB128 varint.
    @inlinable
    public static func append(_ value: UInt64, to buffer: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.append(UInt8(value))
    }

    /// Writes `value` as an unsigned LEB128 varint at `destination` and returns how many bytes
    /// it took: up to 10, at most 5 for a value below 2^32.
    @inlinable
    @inline(__always)
    public static func write(_ value: UInt64, to destination: UnsafeMutableRawPointer) -> Int {
        var value = value
        var written = 0
        while value >= 0x80 {
            destination.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: written, as: UInt8.self)
            written += 1
            value >>= 7
        }
        destination.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: written, as: UInt8.self)
        return written + 1
    }

    /// Zig-zag maps a signed value so small magnitudes get short varints.
    @inlinable
    public static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// Inverse of ``zigzag(_:)``.
    @inlinable
    public static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// Appends a little-endian `u32`.
    @inlinable
    public static func appendUInt32(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
    }
}

/// A bounds-checked reader over bytes that never traps on damaged input.
///
/// Every read returns `nil` past the end or on a malformed varint; decoders turn that into an
/// error that names what was being read.
public struct ByteReader {
    /// The bytes being read.
    public let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public var offset: Int

    /// Creates a reader positioned at `offset`.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Whether every byte has been read.
    @inlinable public var isAtEnd: Bool { offset >= bytes.count }

    /// Bytes left to read.
    @inlinable public var remaining: Int { bytes.count - offset }

    /// Reads one byte.
    @inlinable
    public mutating func readByte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    @inlinable @inline(__always)
    public mutating func readVarint() -> UInt64? {
        // Most varints in a block are one byte: that case inline, the rest in a call.
        if offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return readLongVarint()
    }

    /// ``readVarint()`` for a varint of any length.
    @inlinable
    public mutating func readLongVarint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// Moves past `count` varints without decoding them (a reader of one run of a column);
    /// false when the bytes end first.
    @inlinable
    public mutating func skipVarints(_ count: Int) -> Bool {
        var left = count
        var position = offset
        while left > 0 {
            guard position < bytes.count else { return false }
            if bytes[position] < 0x80 { left -= 1 }
            position += 1
        }
        offset = position
        return true
    }

    /// Reads a varint that must fit in an `Int` no larger than `limit`.
    @inlinable
    public mutating func readCount(limit: Int) -> Int? {
        guard let value = readVarint(), value <= UInt64(limit) else { return nil }
        return Int(value)
    }

    /// Reads a little-endian `u32`.
    @inlinable
    public mutating func readUInt32() -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        defer { offset += 4 }
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    /// Reads a little-endian `u64`.
    @inlinable
    public mutating func readUInt64() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        defer { offset += 8 }
        return bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    /// Returns the next `count` bytes and moves past them.
    @inlinable
    public mutating func readBytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }
}
