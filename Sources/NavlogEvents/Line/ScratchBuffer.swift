/// The tokenizer's output bytes.
typealias TokenBuffer = ScratchBuffer<UInt8>

/// A growable buffer of plain values for the tokenizer (its output bytes, the line's members)
/// without `Array`'s per-append uniqueness check: parsing appends a few bytes at a time,
/// hundreds of times per line.
///
/// The pointer, capacity and count live in the struct itself, so an append is a bounds check
/// and a store, with no load through the owning object. Copies share storage. ``JSONTokenizer``
/// checks once per line (``makeUnique()``) that it is the only owner, else it copies the values
/// into storage of its own, so a parser that was copied never writes into another copy's values.
struct ScratchBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    // `@unchecked`: the storage is mutated only by the tokenizer that owns it uniquely for the
    // duration of one line (checked with `isKnownUniquelyReferenced` before every line); the
    // parser's `parse` is mutating, so the buffer cannot be copied while a line is parsed.

    /// Owns the allocation (frees it when the last copy of the buffer goes away). Elements are
    /// bitwise copyable, so nothing needs deinitializing.
    final class Storage {
        let pointer: UnsafeMutablePointer<Element>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            pointer = .allocate(capacity: capacity)
        }

        deinit { pointer.deallocate() }
    }

    private var storage: Storage
    private var pointer: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    /// An empty buffer with room for `capacity` elements.
    init(capacity: Int = 4096) {
        storage = Storage(capacity: capacity)
        pointer = storage.pointer
        self.capacity = capacity
    }

    /// Makes sure this buffer owns its storage alone (call before writing a new line).
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            let own = Storage(capacity: capacity)
            own.pointer.update(from: pointer, count: count)
            storage = own
            pointer = own.pointer
        }
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(toAtLeast: count + extra) }
    }

    @inline(never)
    private mutating func grow(toAtLeast needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = Storage(capacity: newCapacity)
        bigger.pointer.update(from: pointer, count: count)
        storage = bigger
        pointer = bigger.pointer
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        reserve(1)
        (pointer + count).initialize(to: element)
        count += 1
    }

    @inline(__always)
    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "scratch buffer index out of range")
            return pointer[index]
        }
        set {
            precondition(index >= 0 && index < count, "scratch buffer index out of range")
            pointer[index] = newValue
        }
    }

    /// Drops everything from `range.lowerBound` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        precondition(range.lowerBound <= count)
        count = range.lowerBound
    }

    mutating func removeAll() { count = 0 }

    /// The elements, valid until the buffer is next changed.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: pointer, count: count) }
}

extension ScratchBuffer where Element == UInt8 {
    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (pointer + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes.bindMemory(to: UInt8.self))
    }

    /// The bytes written so far.
    @inline(__always)
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Appends `value` as an unsigned LEB128 varint.
    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        reserve(10)
        count += Varint.write(value, to: UnsafeMutableRawPointer(pointer + count))
    }

    /// Appends a little-endian `u32`.
    @inline(__always)
    mutating func appendUInt32(_ value: UInt32) {
        reserve(4)
        UnsafeMutableRawPointer(pointer + count).storeBytes(of: value.littleEndian, as: UInt32.self)
        count += 4
    }

    /// Overwrites the little-endian `u32` at `position` (written earlier by ``appendUInt32(_:)``).
    @inline(__always)
    mutating func patchUInt32(_ value: UInt32, at position: Int) {
        precondition(position >= 0 && position + 4 <= count, "token buffer index out of range")
        UnsafeMutableRawPointer(pointer + position).storeBytes(of: value.littleEndian, as: UInt32.self)
    }
}
