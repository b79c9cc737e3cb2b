/// Reads the fields of a stored event body (interned ``BodyForm``) without allocating: the
/// replayer, analytics and coverage look up what they need and skip the rest.
///
/// Every read is bounds-checked; a damaged body yields `nil`, never a trap.
///
/// - Important: a view over memory owned by a decoded block; use it only inside the closure
///   that provided the body and string table.
public struct StoredBody {
    /// The body's tokens.
    public let tokens: UnsafeRawBufferPointer
    /// The block's strings.
    public let strings: StringTable

    /// Creates a reader.
    public init(tokens: UnsafeRawBufferPointer, strings: StringTable) {
        self.tokens = tokens
        self.strings = strings
    }

    /// The value of top-level field `name`, if the event has it (the first, if it repeats).
    public func field(_ name: FieldName) -> StoredValue? {
        StoredValue(tokens: tokens, strings: strings, offset: 0)?.member(name)
    }

    /// The controller reference in field `name` (bare id or object form).
    public func controller(_ name: FieldName) -> ControllerReference? {
        field(name).flatMap(ControllerReference.init)
    }
}

/// One value inside a stored body.
public struct StoredValue {
    let tokens: UnsafeRawBufferPointer
    let strings: StringTable
    /// Where the value's tag is.
    let offset: Int
    /// The value's kind.
    public let kind: BodyToken

    init?(tokens: UnsafeRawBufferPointer, strings: StringTable, offset: Int) {
        guard offset < tokens.count, let kind = BodyToken(rawValue: tokens[offset]) else { return nil }
        self.tokens = tokens
        self.strings = strings
        self.offset = offset
        self.kind = kind
    }

    /// The bytes of a string (or a number's text); `nil` for other kinds.
    public var bytes: UnsafeRawBufferPointer? {
        guard kind == .string || kind == .number else { return nil }
        var reader = ByteReader(tokens, offset: offset + 1)
        guard let ref = reader.readVarint() else { return nil }
        return strings[Int(truncatingIfNeeded: ref)]
    }

    /// A string value as `String` (allocates; for reports and tests).
    public var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// Whether a string value equals `text`, without allocating.
    public func equals(_ text: StaticString) -> Bool {
        guard let bytes else { return false }
        return bytesEqual(bytes, UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// An integer value.
    public var integer: Int64? {
        guard kind == .integer else { return nil }
        var reader = ByteReader(tokens, offset: offset + 1)
        return reader.readVarint().map(Varint.unzigzag)
    }

    /// A boolean value.
    public var bool: Bool? {
        switch kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// Whether the value is `null`.
    public var isNull: Bool { kind == .null }

    /// The member `name` of an object value (the first, if the object repeats it).
    public func member(_ name: FieldName) -> StoredValue? {
        var found: StoredValue?
        forEachMember { key, value in
            guard key == name.rawValue else { return true }
            found = value
            return false
        }
        return found
    }

    /// Calls `body` with the key (a ``FieldName`` raw value, or ``BodyToken/unknownKey``) and
    /// value of each member of an object value, in order, without allocating, while it returns
    /// true; stops at damage.
    public func forEachMember(_ body: (UInt8, StoredValue) throws -> Bool) rethrows {
        guard kind == .object else { return }
        var reader = ByteReader(tokens, offset: offset + 1)
        guard let count = reader.readCount(limit: tokens.count) else { return }
        for _ in 0..<count {
            guard let key = reader.readByte() else { return }
            if key == BodyToken.unknownKey { guard reader.readVarint() != nil else { return } }
            guard let value = StoredValue(tokens: tokens, strings: strings, offset: reader.offset), try body(key, value),
                let end = Self.skip(tokens, reader.offset, depth: 0)
            else { return }
            reader.offset = end
        }
    }

    /// The elements of an array value (empty for other kinds or damage).
    public var elements: [StoredValue] {
        var result: [StoredValue] = []
        forEachElement { result.append($0) }
        return result
    }

    /// Calls `body` with each element of an array value, in order, without allocating.
    public func forEachElement(_ body: (StoredValue) throws -> Void) rethrows {
        guard kind == .array else { return }
        var reader = ByteReader(tokens, offset: offset + 1)
        guard let count = reader.readCount(limit: tokens.count) else { return }
        for _ in 0..<count {
            guard let element = StoredValue(tokens: tokens, strings: strings, offset: reader.offset),
                let end = Self.skip(tokens, reader.offset, depth: 0)
            else { return }
            try body(element)
            reader.offset = end
        }
    }

    /// Where the value starting at `offset` ends, or nil when the tokens are malformed or nest
    /// deeper than `JSONTokenizer.maximumDepth` counting from `depth`.
    ///
    /// One loop with a stack of the open containers rather than a call per value: payload
    /// version 2 finds where each body starts by skipping the one before, so a block decode
    /// runs this over every token of every body (it was most of a replay's own CPU). The stack
    /// is small enough to live on the machine stack (a heap one per call costs more than the
    /// loop saves); a value nested deeper than it is skipped by a call of its own.
    /// Where the varint at `position` ends (at most 10 bytes, the tenth 0 or 1, as
    /// `ByteReader` reads them); nil when it is cut short or too long.
    static func skipVarint(_ tokens: UnsafeRawBufferPointer, _ position: Int) -> Int? {
        var position = position
        var bytes = 0
        while position < tokens.count {
            let byte = tokens[position]
            position += 1
            if bytes == 9 && byte > 1 { return nil }
            if byte < 0x80 { return position }
            bytes += 1
        }
        return nil
    }

    public static func skip(_ tokens: UnsafeRawBufferPointer, _ offset: Int, depth: Int) -> Int? {
        // Most values skipped are scalars (a member lookup steps over the members before it):
        // those without the container machinery below.
        guard offset < tokens.count, depth < JSONTokenizer.maximumDepth else { return nil }
        switch tokens[offset] {
        case BodyToken.true.rawValue, BodyToken.false.rawValue, BodyToken.null.rawValue:
            return offset + 1
        case BodyToken.string.rawValue, BodyToken.number.rawValue, BodyToken.integer.rawValue:
            return skipVarint(tokens, offset + 1)
        default:
            break
        }
        let levels = JSONTokenizer.maximumDepth - depth
        guard levels > 0 else { return nil }
        let capacity = 32
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: capacity) { open -> Int? in
            // Per open container: the members it has left to read, times 2, plus 1 for an object.
            var level = 0
            var position = offset
            let end = tokens.count
            func skipVarint() -> Bool {
                guard let next = StoredValue.skipVarint(tokens, position) else { return false }
                position = next
                return true
            }
            while true {
                if level > 0 && open[level - 1] & 1 == 1 {
                    guard position < end else { return nil }
                    let key = tokens[position]
                    position += 1
                    if key == BodyToken.unknownKey { guard skipVarint() else { return nil } }
                }
                if level == capacity {
                    guard let valueEnd = skip(tokens, position, depth: depth + level) else { return nil }
                    position = valueEnd
                } else {
                    guard position < end else { return nil }
                    let tag = tokens[position]
                    position += 1
                    switch tag {
                    case BodyToken.object.rawValue, BodyToken.array.rawValue:
                        var reader = ByteReader(tokens, offset: position)
                        guard let count = reader.readCount(limit: end) else { return nil }
                        position = reader.offset
                        if count > 0 {
                            // Its members are one level deeper than it.
                            guard level + 1 < levels else { return nil }
                            open[level] = count << 1 | (tag == BodyToken.object.rawValue ? 1 : 0)
                            level += 1
                            continue
                        }
                    case BodyToken.string.rawValue, BodyToken.number.rawValue, BodyToken.integer.rawValue:
                        guard skipVarint() else { return nil }
                    case BodyToken.true.rawValue, BodyToken.false.rawValue, BodyToken.null.rawValue:
                        break
                    default:
                        return nil
                    }
                }
                // A value is done: so are the containers it was the last member of.
                while level > 0 {
                    open[level - 1] -= 2
                    if open[level - 1] >= 2 { break }
                    level -= 1
                }
                if level == 0 { return position }
            }
        }
    }
}

/// A controller as an event names it: a bare id (mentioned before) or the full object.
public struct ControllerReference {
    /// The id's bytes.
    public let id: UnsafeRawBufferPointer
    /// The object form, when the event gave one (class, kind, sbid, title, …).
    public let object: StoredValue?
    /// Where in the tokens the object form's members are (-1: absent), found in one pass: the
    /// replayer reads each of them for every reference in object form, and a lookup per member
    /// walked the object from its start each time. Offsets, not values, keep a reference small
    /// (it is returned and passed along per event).
    private var classOffset: Int32 = -1
    private var kindOffset: Int32 = -1
    private var storyboardIDOffset: Int32 = -1
    private var titleOffset: Int32 = -1
    private var definesContextOffset: Int32 = -1
    private var unwindActionsOffset: Int32 = -1

    /// Reads a reference from a string or object value.
    public init?(_ value: StoredValue) {
        switch value.kind {
        case .string:
            guard let id = value.bytes, !id.isEmpty else { return nil }
            self.id = id
            self.object = nil
        case .object:
            var id: UnsafeRawBufferPointer?
            var found = false
            var offsets = (class: Int32(-1), kind: Int32(-1), storyboardID: Int32(-1), title: Int32(-1), definesContext: Int32(-1), unwindActions: Int32(-1))
            value.forEachMember { key, member in
                // Of a repeated member the first, as `StoredValue.member(_:)` reads it.
                func first(_ offset: inout Int32) {
                    if offset < 0 { offset = Int32(truncatingIfNeeded: member.offset) }
                }
                switch key {
                case FieldName.id.rawValue:
                    if !found { (id, found) = (member.bytes, true) }
                case FieldName.class.rawValue: first(&offsets.class)
                case FieldName.kind.rawValue: first(&offsets.kind)
                case FieldName.sbid.rawValue: first(&offsets.storyboardID)
                case FieldName.title.rawValue: first(&offsets.title)
                case FieldName.definesContext.rawValue: first(&offsets.definesContext)
                case FieldName.unwindActions.rawValue: first(&offsets.unwindActions)
                default: break
                }
                return true
            }
            guard let id, !id.isEmpty else { return nil }
            self.id = id
            self.object = value
            (classOffset, kindOffset, storyboardIDOffset, titleOffset) = (offsets.class, offsets.kind, offsets.storyboardID, offsets.title)
            (definesContextOffset, unwindActionsOffset) = (offsets.definesContext, offsets.unwindActions)
        default:
            return nil
        }
    }

    /// The member of the object form at `offset`, if any.
    private func member(at offset: Int32) -> StoredValue? {
        guard offset >= 0, let object else { return nil }
        return StoredValue(tokens: object.tokens, strings: object.strings, offset: Int(offset))
    }

    /// The class name, when the object form gave it.
    public var className: UnsafeRawBufferPointer? { member(at: classOffset)?.bytes }
    /// The declared kind (`navigation`, `tab`, …), when given.
    public var kind: UnsafeRawBufferPointer? { member(at: kindOffset)?.bytes }
    /// The storyboard identifier, when given.
    public var storyboardID: UnsafeRawBufferPointer? { member(at: storyboardIDOffset)?.bytes }
    /// The title, when given.
    public var title: UnsafeRawBufferPointer? { member(at: titleOffset)?.bytes }
    /// `definesContext` (R3b), when given.
    public var definesContext: Bool? { member(at: definesContextOffset)?.bool }
    /// The unwind actions it implements (R17), when given.
    public var unwindActions: StoredValue? { member(at: unwindActionsOffset) }
}

extension StoredValue {
    /// The value in words for people: a controller reference as its id, strings as they are,
    /// numbers and booleans as written, arrays as `[a<separator>b]`, objects as `{…}` (what
    /// `navlog timeline` and the web viewer show).
    public func displayText(arraySeparator separator: String = ",") -> String {
        if let reference = ControllerReference(self) { return String(decoding: reference.id, as: UTF8.self) }
        if let string { return string }
        if let integer { return "\(integer)" }
        if let bool { return bool ? "true" : "false" }
        if kind == .array { return "[" + elements.map { $0.displayText(arraySeparator: separator) }.joined(separator: separator) + "]" }
        return isNull ? "null" : "{…}"
    }
}
