import Synchronization

/// The key id a trusted relay (`navlog intake`) says an event was sent with: 1–64 bytes of
/// ASCII letters, digits, `.`, `_` and `-` (``isValid(_:)``), or none.
///
/// A small number standing for an interned name, so that carrying it in every
/// ``EventBatch/Header`` and comparing peers per event (the block encoder does) costs an
/// integer, not a `String` copy. Numbers are this process's own: they are never stored (a
/// block stores the name, see docs/FORMAT.md) and two processes may number one name
/// differently. The table of names only grows; it holds the distinct key ids this process has
/// met (a relay's few keys, or the ones of the blocks it read).
public struct RelayKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 0 for none, else the name's place in the process's table + 1.
    public let number: UInt32

    /// No key: an event not passed on by a relay (or one written before relays existed).
    public static let none = RelayKey(number: 0)

    /// The longest key id, in bytes.
    public static let maximumLength = 64

    private init(number: UInt32) { self.number = number }

    /// The key of `name`, which must be a valid key id (``isValid(_:)``).
    public init(_ name: some Collection<UInt8>) {
        precondition(Self.isValid(name), "not a key id: letters, digits, '.', '_' and '-', 1 to 64 bytes")
        self = Self.intern(Array(name))
    }

    /// The key of `name`, or nil when it is not a valid key id.
    public init?(validating name: some Collection<UInt8>) {
        guard Self.isValid(name) else { return nil }
        self = Self.intern(Array(name))
    }

    /// The key of `name` (a `String`), or nil when it is not a valid key id.
    public init?(_ name: String) {
        self.init(validating: Array(name.utf8))
    }

    /// Whether this is ``none``.
    @inlinable public var isNone: Bool { number == 0 }

    /// The key id (nil for ``none``).
    public var name: String? {
        isNone ? nil : Self.table.withLock { String(decoding: $0.names[Int(number) - 1], as: UTF8.self) }
    }

    /// The key id's bytes (empty for ``none``).
    public var bytes: [UInt8] {
        isNone ? [] : Self.table.withLock { $0.names[Int(number) - 1] }
    }

    public var description: String { name ?? "none" }

    /// Orders by name (``none`` first), not by number: a process numbers names as it meets them.
    public static func < (lhs: RelayKey, rhs: RelayKey) -> Bool {
        if lhs == rhs || rhs.isNone { return false }
        if lhs.isNone { return true }
        return lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// Whether `name` is a key id: 1 to 64 bytes, each an ASCII letter or digit, `.`, `_` or `-`.
    public static func isValid(_ name: some Collection<UInt8>) -> Bool {
        invalidByte(in: name) == nil && !name.isEmpty && name.count <= maximumLength
    }

    /// The offset of the first byte of `name` that no key id may hold, or nil.
    public static func invalidByte(in name: some Collection<UInt8>) -> Int? {
        for (offset, byte) in name.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return offset
            }
        }
        return nil
    }

    // MARK: The process's names

    private struct Names {
        var names: [[UInt8]] = []
        var numbers: [[UInt8]: UInt32] = [:]
    }

    private static let table = Mutex(Names())

    private static func intern(_ name: [UInt8]) -> RelayKey {
        table.withLock { table in
            if let number = table.numbers[name] { return RelayKey(number: number) }
            table.names.append(name)
            let number = UInt32(table.names.count)
            table.numbers[name] = number
            return RelayKey(number: number)
        }
    }
}
