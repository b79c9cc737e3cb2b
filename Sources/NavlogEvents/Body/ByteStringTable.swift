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
    /// Open addressing over a power-of-two table: 0 is an empty slot, else the low 32 bits of
    /// the string's hash above its reference + 1. A probe compares those bits first, so it
    /// reads the string's bytes only on a likely match, and a table grows without hashing its
    /// strings again (the slot index is taken from the same low bits). It starts at 16 slots
    /// (128 bytes): the replayer keeps two tables per session, most of them small, and copies
    /// them with its states.
    private var slots = [UInt64](repeating: 0, count: 16)
    /// The slots in use, so ``removeAll()`` clears those rather than the whole table: a table
    /// that once grew for a large block is reused for small ones (a block per durable round).
    private var usedSlots: [UInt32] = []

    /// An empty table.
    public init() {}

    /// The number of distinct strings.
    public var count: Int { ends.count }

    /// Forgets every string but keeps the storage.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        slots.withUnsafeMutableBufferPointer { slots in
            for slot in usedSlots { slots[Int(slot)] = 0 }
        }
        usedSlots.removeAll(keepingCapacity: true)
    }

    /// The reference of `string`, if it is in the table.
    public func reference(of string: UnsafeRawBufferPointer) -> UInt32? {
        reference(of: string, hash: StringHash.hash(string))
    }

    /// ``reference(of:)`` for a string whose ``StringHash`` is already known.
    public func reference(of string: UnsafeRawBufferPointer, hash: UInt64) -> UInt32? {
        let probe = find(string, hash: hash)
        return probe.found ? probe.reference : nil
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
        let probe = find(string, hash: hash)
        if probe.found { return (probe.reference, false) }
        let ref = UInt32(ends.count)
        bytes.append(contentsOf: string)
        ends.append(UInt32(bytes.count))
        slots[probe.slot] = (hash & 0xFFFF_FFFF) << 32 | UInt64(ref + 1)
        usedSlots.append(UInt32(probe.slot))
        if ends.count * 2 > slots.count { grow() }
        return (ref, true)
    }

    /// Where `string` is (`found`, its reference), or the empty slot it would take.
    @inline(__always)
    private func find(_ string: UnsafeRawBufferPointer, hash: UInt64) -> (found: Bool, reference: UInt32, slot: Int) {
        let tag = (hash & 0xFFFF_FFFF) << 32
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entry = slots[slot]
                if entry == 0 { return (false, 0, slot) }
                if entry & 0xFFFF_FFFF_0000_0000 == tag {
                    let ref = UInt32(truncatingIfNeeded: entry) - 1
                    if matches(Int(ref), string) { return (true, ref, slot) }
                }
                slot = (slot + 1) & mask
            }
        }
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

    @inline(__always)
    private func matches(_ ref: Int, _ string: UnsafeRawBufferPointer) -> Bool {
        ends.withUnsafeBufferPointer { ends in
            let start = ref == 0 ? 0 : Int(ends[ref - 1])
            let end = Int(ends[ref])
            guard end - start == string.count else { return false }
            return string.count == 0 || bytes.withUnsafeBytes { all in memcmpBytes(all.baseAddress! + start, string.baseAddress!, string.count) }
        }
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        usedSlots.removeAll(keepingCapacity: true)
        slots.withUnsafeMutableBufferPointer { slots in
            let mask = slots.count - 1
            for entry in old where entry != 0 {
                var slot = Int(truncatingIfNeeded: entry >> 32) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = entry
                usedSlots.append(UInt32(slot))
            }
        }
    }
}
