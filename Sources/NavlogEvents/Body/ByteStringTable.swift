/// Gives each distinct byte string a small number (its reference), in order of first
/// appearance: the one hash table behind every "bytes → dense index" map of navlog — a
/// block's string table, the daemon's per-session sequence tracking, the replayer's
/// controllers.
///
/// Lookups and repeated inserts do not allocate; a new string is appended to one byte arena.
/// Open addressing over a power-of-two table keyed by ``StringHash``; ``removeAll()`` keeps
/// the capacity for reuse.
public struct ByteStringTable: Sendable {
    /// Concatenated bytes of every string, in reference order.
    public private(set) var bytes: [UInt8] = []
    /// End offset in ``bytes`` of each string (start = previous end).
    public private(set) var ends: [UInt32] = []
    private var slots = [UInt32](repeating: 0, count: 256)  // 0 = empty, else ref + 1
    private var hashes: [UInt64] = []

    /// An empty table.
    public init() {}

    /// The number of distinct strings.
    public var count: Int { ends.count }

    /// Forgets every string but keeps the storage.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        for index in slots.indices { slots[index] = 0 }
    }

    /// The reference of `string`, if it is in the table.
    public func reference(of string: UnsafeRawBufferPointer) -> UInt32? {
        reference(of: string, hash: StringHash.hash(string))
    }

    /// ``reference(of:)`` for a string whose ``StringHash`` is already known.
    public func reference(of string: UnsafeRawBufferPointer, hash: UInt64) -> UInt32? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let ref = Int(slots[slot] - 1)
            if hashes[ref] == hash && matches(ref, string) { return UInt32(ref) }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The reference of `string`, adding it if new; `inserted` says which.
    @discardableResult
    public mutating func insert(_ string: UnsafeRawBufferPointer) -> (reference: UInt32, inserted: Bool) {
        insert(string, hash: StringHash.hash(string))
    }

    /// ``insert(_:)`` for a string whose ``StringHash`` is already known.
    /// - Precondition: `hash` is `StringHash.hash(string)`.
    @discardableResult
    public mutating func insert(_ string: UnsafeRawBufferPointer, hash: UInt64) -> (reference: UInt32, inserted: Bool) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let ref = Int(slots[slot] - 1)
            if hashes[ref] == hash && matches(ref, string) { return (UInt32(ref), false) }
            slot = (slot + 1) & mask
        }
        let ref = UInt32(ends.count)
        bytes.append(contentsOf: string)
        ends.append(UInt32(bytes.count))
        hashes.append(hash)
        slots[slot] = ref + 1
        if ends.count * 2 > slots.count { grow() }
        return (ref, true)
    }

    /// The reference of `string`, adding it if new.
    @inline(__always)
    public mutating func intern(_ string: UnsafeRawBufferPointer) -> UInt32 {
        insert(string).reference
    }

    /// Calls `body` with the bytes of string `reference`.
    public func withString<R>(_ reference: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let index = Int(reference)
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<Int(ends[index])])) }
    }

    private func matches(_ ref: Int, _ string: UnsafeRawBufferPointer) -> Bool {
        let start = ref == 0 ? 0 : Int(ends[ref - 1])
        let end = Int(ends[ref])
        guard end - start == string.count else { return false }
        return bytes.withUnsafeBytes { all in
            string.count == 0 || memcmpBytes(all.baseAddress! + start, string.baseAddress!, string.count)
        }
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for ref in 0..<ends.count {
            var slot = Int(truncatingIfNeeded: hashes[ref]) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(ref + 1)
        }
    }
}
