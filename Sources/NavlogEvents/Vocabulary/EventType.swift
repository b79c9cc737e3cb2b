/// Every event type of the navlog vocabulary (`spec/events.md`).
///
/// The raw values are written to disk: never change or reuse one, only append.
public enum EventType: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case sessionStart = 1, sessionEnd, appForeground, appBackground, traitsChange, windowRoot
    case navPush, navPop, navPopTo, navPopToRoot, navSet
    case tabSet, tabSelect, splitSet, splitCollapse, splitExpand
    case present, dismiss, show, showDetail, segue, unwind
    case childAdd, childDidMove, childWillMove, childRemove
    case vcAppear, vcDisappear, transitionBegin, transitionEnd, mark

    /// The name used on the wire, such as `nav.push`.
    public var name: String { Self.names[Int(rawValue)] }

    public var description: String { name }

    /// Looks a type up by its wire name.
    public init?(name: String) {
        var name = name
        guard let found = name.withUTF8({ Self.lookup(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = found
    }

    static let names: [String] = [
        "", "session.start", "session.end", "app.foreground", "app.background", "traits.change", "window.root",
        "nav.push", "nav.pop", "nav.popTo", "nav.popToRoot", "nav.set",
        "tab.set", "tab.select", "split.set", "split.collapse", "split.expand",
        "present", "dismiss", "show", "showDetail", "segue", "unwind",
        "child.add", "child.didMove", "child.willMove", "child.remove",
        "vc.appear", "vc.disappear", "transition.begin", "transition.end", "mark",
    ]

    /// The wire names as bytes, indexed by raw value, for allocation-free lookups.
    static let nameBytes: [[UInt8]] = names.map { Array($0.utf8) }

    /// Finds the type whose wire name is exactly `bytes`.
    @inline(__always)
    static func lookup(_ bytes: UnsafeRawBufferPointer) -> EventType? {
        guard let raw = typeTable.lookup(bytes) else { return nil }
        return EventType(rawValue: raw)
    }
}

/// All type names, for allocation-free lookups.
let typeTable = NameTable(EventType.allCases.map { ($0.name, $0.rawValue) })

@inline(__always)
func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    a.count == b.count && (a.count == 0 || memcmpBytes(a.baseAddress!, b.baseAddress!, a.count))
}

@inline(__always)
func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var index = 0
    while index + 8 <= count {
        if a.loadUnaligned(fromByteOffset: index, as: UInt64.self) != b.loadUnaligned(fromByteOffset: index, as: UInt64.self) { return false }
        index += 8
    }
    while index < count {
        if a.load(fromByteOffset: index, as: UInt8.self) != b.load(fromByteOffset: index, as: UInt8.self) { return false }
        index += 1
    }
    return true
}
