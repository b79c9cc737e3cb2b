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

    /// Finds the field whose name is exactly `bytes`.
    @inline(__always)
    static func lookup(_ bytes: UnsafeRawBufferPointer) -> FieldName? {
        guard let raw = fieldTable.lookup(bytes) else { return nil }
        return FieldName(rawValue: raw)
    }
}

/// All field names, for allocation-free lookups.
let fieldTable = NameTable(FieldName.allCases.map { ($0.name, $0.rawValue) })

/// A fixed set of short names looked up by their bytes with one hash probe sequence and one
/// comparison, without touching Swift arrays (no retain/release on the hot path).
///
/// `@unchecked Sendable`: the buffers are written only in `init` and are read-only afterwards,
/// so sharing a table between threads cannot race.
final class NameTable: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<UInt16>  // 0 = empty, else entry index + 1
    private let mask: Int
    private let bytes: UnsafeMutablePointer<UInt8>
    private let offsets: UnsafeMutablePointer<Int>  // start of entry i's name; names[i] ends at offsets[i+1]
    private let values: UnsafeMutablePointer<UInt8>

    init(_ entries: [(String, UInt8)]) {
        let all = entries.flatMap { Array($0.0.utf8) }
        bytes = .allocate(capacity: max(all.count, 1))
        bytes.initialize(from: all, count: all.count)
        offsets = .allocate(capacity: entries.count + 1)
        values = .allocate(capacity: entries.count)
        var offset = 0
        for (index, entry) in entries.enumerated() {
            offsets[index] = offset
            values[index] = entry.1
            offset += entry.0.utf8.count
        }
        offsets[entries.count] = offset
        var size = 64
        while size < entries.count * 4 { size *= 2 }
        mask = size - 1
        slots = .allocate(capacity: size)
        slots.initialize(repeating: 0, count: size)
        for (index, entry) in entries.enumerated() {
            var name = Array(entry.0.utf8)
            var slot = name.withUnsafeMutableBytes { Self.hash(UnsafeRawBufferPointer($0)) } & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt16(index + 1)
        }
    }

    deinit {
        slots.deallocate()
        bytes.deallocate()
        offsets.deallocate()
        values.deallocate()
    }

    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let first = bytes.first, let last = bytes.last else { return 0 }
        return (bytes.count &* 31 &+ Int(first) &* 7 &+ Int(last) &* 131 &+ Int(bytes[bytes.count / 2]) &* 17)
    }

    /// The value stored for `name`, if it is one of the names.
    @inline(__always)
    func lookup(_ name: UnsafeRawBufferPointer) -> UInt8? {
        var slot = Self.hash(name) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            let start = offsets[entry - 1]
            let length = offsets[entry] - start
            if length == name.count && (length == 0 || memcmpBytes(bytes + start, name.baseAddress!, length)) {
                return values[entry - 1]
            }
            slot = (slot + 1) & mask
        }
    }
}
