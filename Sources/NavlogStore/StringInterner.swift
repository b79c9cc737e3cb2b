#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Assigns each distinct byte string of a block a small number (its reference), in order of
/// first appearance, so a string is stored once per block however often events repeat it.
///
/// Open addressing over a power-of-two table; reused across blocks via ``removeAll()``.
struct StringInterner {
    /// Concatenated bytes of every interned string, in reference order.
    private(set) var bytes: [UInt8] = []
    /// End offset in ``bytes`` of each string (start = previous end).
    private(set) var ends: [UInt32] = []
    private var slots: [UInt32] = [UInt32](repeating: 0, count: 1024)  // 0 = empty, else ref + 1
    private var hashes: [UInt64] = []

    /// The number of distinct strings.
    var count: Int { ends.count }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        for index in slots.indices { slots[index] = 0 }
    }

    /// The reference of `string`, interning it if new.
    mutating func intern(_ string: UnsafeRawBufferPointer) -> UInt32 {
        let hash = StringHash.hash(string)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { break }
            let ref = Int(entry - 1)
            if hashes[ref] == hash && matches(ref, string) { return UInt32(ref) }
            slot = (slot + 1) & mask
        }
        let ref = UInt32(ends.count)
        bytes.append(contentsOf: string)
        ends.append(UInt32(bytes.count))
        hashes.append(hash)
        slots[slot] = ref + 1
        if ends.count * 2 > slots.count { grow() }
        return ref
    }

    private func matches(_ ref: Int, _ string: UnsafeRawBufferPointer) -> Bool {
        let start = ref == 0 ? 0 : Int(ends[ref - 1])
        let end = Int(ends[ref])
        guard end - start == string.count else { return false }
        return bytes.withUnsafeBytes { all in
            string.count == 0 || memcmp(all.baseAddress! + start, string.baseAddress!, string.count) == 0
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
