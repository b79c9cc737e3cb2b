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

    /// The value of top-level field `name`, if the event has it.
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

    /// The member `name` of an object value.
    public func member(_ name: FieldName) -> StoredValue? {
        guard kind == .object else { return nil }
        var reader = ByteReader(tokens, offset: offset + 1)
        guard let count = reader.readCount(limit: tokens.count) else { return nil }
        for _ in 0..<count {
            guard let key = reader.readByte() else { return nil }
            if key == BodyToken.unknownKey { guard reader.readVarint() != nil else { return nil } }
            if key == name.rawValue { return StoredValue(tokens: tokens, strings: strings, offset: reader.offset) }
            guard let end = Self.skip(tokens, reader.offset, depth: 0) else { return nil }
            reader.offset = end
        }
        return nil
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

    /// Where the value starting at `offset` ends, or nil when the tokens are malformed.
    public static func skip(_ tokens: UnsafeRawBufferPointer, _ offset: Int, depth: Int) -> Int? {
        guard depth < JSONTokenizer.maximumDepth, offset < tokens.count, let kind = BodyToken(rawValue: tokens[offset]) else { return nil }
        var reader = ByteReader(tokens, offset: offset + 1)
        switch kind {
        case .object:
            guard let count = reader.readCount(limit: tokens.count) else { return nil }
            for _ in 0..<count {
                guard let key = reader.readByte() else { return nil }
                if key == BodyToken.unknownKey { guard reader.readVarint() != nil else { return nil } }
                guard let end = skip(tokens, reader.offset, depth: depth + 1) else { return nil }
                reader.offset = end
            }
            return reader.offset
        case .array:
            guard let count = reader.readCount(limit: tokens.count) else { return nil }
            for _ in 0..<count {
                guard let end = skip(tokens, reader.offset, depth: depth + 1) else { return nil }
                reader.offset = end
            }
            return reader.offset
        case .string, .number, .integer:
            return reader.readVarint() == nil ? nil : reader.offset
        case .true, .false, .null:
            return reader.offset
        }
    }
}

/// A controller as an event names it: a bare id (mentioned before) or the full object.
public struct ControllerReference {
    /// The id's bytes.
    public let id: UnsafeRawBufferPointer
    /// The object form, when the event gave one (class, kind, sbid, title, …).
    public let object: StoredValue?

    /// Reads a reference from a string or object value.
    public init?(_ value: StoredValue) {
        switch value.kind {
        case .string:
            guard let id = value.bytes, !id.isEmpty else { return nil }
            self.id = id
            self.object = nil
        case .object:
            guard let id = value.member(.id)?.bytes, !id.isEmpty else { return nil }
            self.id = id
            self.object = value
        default:
            return nil
        }
    }

    /// The class name, when the object form gave it.
    public var className: UnsafeRawBufferPointer? { object?.member(.class)?.bytes }
    /// The declared kind (`navigation`, `tab`, …), when given.
    public var kind: UnsafeRawBufferPointer? { object?.member(.kind)?.bytes }
    /// The storyboard identifier, when given.
    public var storyboardID: UnsafeRawBufferPointer? { object?.member(.sbid)?.bytes }
    /// The title, when given.
    public var title: UnsafeRawBufferPointer? { object?.member(.title)?.bytes }
    /// `definesContext` (R3b), when given.
    public var definesContext: Bool? { object?.member(.definesContext)?.bool }
    /// The unwind actions it implements (R17), when given.
    public var unwindActions: StoredValue? { object?.member(.unwindActions) }
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
