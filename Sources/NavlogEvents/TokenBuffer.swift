/// The tokenizer's output: a growable byte buffer without `Array`'s per-append uniqueness
/// check (parsing appends a few bytes at a time, hundreds of times per line).
///
/// Copies share storage. ``JSONTokenizer`` takes the buffer from its ``TokenizerStorage`` and
/// checks once per line that it is the only owner (else it starts a new buffer), so a parser
/// that was copied never writes into another copy's bytes.
struct TokenBuffer: @unchecked Sendable {
    // `@unchecked`: the storage is mutated only by the tokenizer that owns it uniquely for the
    // duration of one line (checked with `isKnownUniquelyReferenced` before every line); the
    // parser's `parse` is mutating, so the buffer cannot be copied while a line is parsed.
    final class Storage {
        var pointer: UnsafeMutablePointer<UInt8>
        var capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            pointer = .allocate(capacity: capacity)
        }

        deinit { pointer.deallocate() }

        func grow(toAtLeast needed: Int, keeping count: Int) {
            var newCapacity = capacity * 2
            while newCapacity < needed { newCapacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
            bigger.update(from: pointer, count: count)
            pointer.deallocate()
            pointer = bigger
            capacity = newCapacity
        }
    }

    var storage = Storage(capacity: 4096)
    private(set) var count = 0

    /// Makes sure this buffer owns its storage alone (call before writing a new line).
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(capacity: storage.capacity) }
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == storage.capacity { storage.grow(toAtLeast: count + 1, keeping: count) }
        storage.pointer[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > storage.capacity { storage.grow(toAtLeast: count + bytes.count, keeping: count) }
        (storage.pointer + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes.bindMemory(to: UInt8.self))
    }

    @inline(__always)
    subscript(index: Int) -> UInt8 {
        get {
            precondition(index >= 0 && index < count, "token buffer index out of range")
            return storage.pointer[index]
        }
        set {
            precondition(index >= 0 && index < count, "token buffer index out of range")
            storage.pointer[index] = newValue
        }
    }

    /// Drops everything from `range.lowerBound` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        precondition(range.lowerBound <= count)
        count = range.lowerBound
    }

    mutating func removeAll() { count = 0 }

    /// The bytes written so far.
    @inline(__always)
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: count))
    }

    /// Appends `value` as an unsigned LEB128 varint.
    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    /// Appends a little-endian `u32`.
    @inline(__always)
    mutating func appendUInt32(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 24))
    }
}
