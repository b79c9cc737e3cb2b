/// The field names of the vocabulary, encoded as one byte in stored events.
///
/// The raw values are written to disk: never change or reuse one, only append (below 128;
/// keys outside this list are stored as strings).
public enum FieldName: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case type = 1, session, ts, seq, v, cause
    case app, version, build, os, device, idiom, traits, h, reason
    case window, vc, nav, animated, vcs, tab, selected, index, byUser
    case split, primary, secondary, supplementary
    case from, style, transition, anchor, alertStyle
    case identifier, kind, source, destination, action, relationship, phase, result, segueClass
    case target, parent, slot, id, interactive, completed, name, props
    case `class`, sbid, storyboard, title, definesContext, unwindActions, restorationId
    case barButtonItem, sourceView, sourceRect, x, y, width, height
    case hello, client, ack, control

    /// The key as written in JSON.
    public var name: String { Self.names[Int(rawValue)] }

    public var description: String { name }

    static let names: [String] = [
        "", "type", "session", "ts", "seq", "v", "cause",
        "app", "version", "build", "os", "device", "idiom", "traits", "h", "reason",
        "window", "vc", "nav", "animated", "vcs", "tab", "selected", "index", "byUser",
        "split", "primary", "secondary", "supplementary",
        "from", "style", "transition", "anchor", "alertStyle",
        "identifier", "kind", "source", "destination", "action", "relationship", "phase", "result", "segueClass",
        "target", "parent", "slot", "id", "interactive", "completed", "name", "props",
        "class", "sbid", "storyboard", "title", "definesContext", "unwindActions", "restorationId",
        "barButtonItem", "sourceView", "sourceRect", "x", "y", "width", "height",
        "hello", "client", "ack", "control",
    ]

    /// The names already escaped and quoted for JSON output (`"name":`), indexed by raw value.
    static let jsonKeys: [[UInt8]] = names.map { Array("\"\($0)\":".utf8) }
}

/// All field names, for allocation-free lookups (the tokenizer's keys).
let fieldTable = NameTable(FieldName.allCases.map { ($0.name, $0.rawValue) })

/// A fixed set of short names looked up by their bytes with one hash probe sequence and one
/// comparison, without touching Swift arrays (no retain/release on the hot path).
///
/// Each slot holds its name's first 16 bytes as two words (zero-padded) and its length, so a
/// probe compares two words instead of bytes; only names longer than 16 bytes compare the rest.
///
/// `@unchecked Sendable`: the buffers are written only in `init` and are read-only afterwards,
/// so sharing a table between threads cannot race.
final class NameTable: @unchecked Sendable {
    private struct Slot {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        /// 0 = empty slot, else the name's length + 1.
        var lengthPlusOne = 0
        /// Where the name's bytes beyond the first 16 are, in ``NameTable/rest``.
        var restOffset = 0
        var value: UInt8 = 0
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    private let rest: UnsafeMutablePointer<UInt8>

    init(_ entries: [(String, UInt8)]) {
        var size = 64
        while size < entries.count * 4 { size *= 2 }
        mask = size - 1
        slots = .allocate(capacity: size)
        slots.initialize(repeating: Slot(), count: size)
        let restBytes = entries.flatMap { Array($0.0.utf8.dropFirst(16)) }
        rest = .allocate(capacity: max(restBytes.count, 1))
        rest.initialize(from: restBytes, count: restBytes.count)
        var restOffset = 0
        for (name, value) in entries {
            let bytes = Array(name.utf8)
            let (head, tail) = bytes.withUnsafeBytes { Self.words($0) }
            var slot = Self.hash(head, tail, bytes.count) & mask
            while slots[slot].lengthPlusOne != 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(head: head, tail: tail, lengthPlusOne: bytes.count + 1, restOffset: restOffset, value: value)
            restOffset += max(0, bytes.count - 16)
        }
    }

    deinit {
        slots.deallocate()
        rest.deallocate()
    }

    /// The first 16 bytes of `bytes` as two little-endian words, zero-padded, reading nothing
    /// outside `bytes`.
    @inline(__always)
    static func words(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        let n = bytes.count
        guard let p = bytes.baseAddress else { return (0, 0) }
        if n >= 16 {
            return (p.loadUnaligned(as: UInt64.self).littleEndian, p.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
        }
        if n >= 8 {
            // The last 8 bytes, shifted so the ones past the first 8 land at the bottom.
            let last = p.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self).littleEndian
            return (p.loadUnaligned(as: UInt64.self).littleEndian, n == 8 ? 0 : last >> UInt64((16 - n) * 8))
        }
        if n >= 4 {
            // Two overlapping 4-byte loads; the overlap holds the same bytes in both.
            let low = UInt64(p.loadUnaligned(as: UInt32.self).littleEndian)
            let high = UInt64(p.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self).littleEndian)
            return (low | high << UInt64((n - 4) * 8), 0)
        }
        var word: UInt64 = 0
        for k in 0..<n { word |= UInt64(p.load(fromByteOffset: k, as: UInt8.self)) << UInt64(k * 8) }
        return (word, 0)
    }

    @inline(__always)
    private static func hash(_ head: UInt64, _ tail: UInt64, _ count: Int) -> Int {
        let mixed = (head ^ (tail &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: count)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> 40)
    }

    /// The value stored for `name`, if it is one of the names.
    @inline(__always)
    func lookup(_ name: UnsafeRawBufferPointer) -> UInt8? {
        let (head, tail) = Self.words(name)
        var slot = Self.hash(head, tail, name.count) & mask
        while true {
            let entry = slots[slot]
            if entry.lengthPlusOne == 0 { return nil }
            if entry.head == head && entry.tail == tail && entry.lengthPlusOne == name.count + 1
                && (name.count <= 16 || memcmpBytes(rest + entry.restOffset, name.baseAddress! + 16, name.count - 16))
            {
                return entry.value
            }
            slot = (slot + 1) & mask
        }
    }
}
