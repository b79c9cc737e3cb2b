/// Validates JSON Lines event lines against the navlog vocabulary and appends the accepted
/// events to an ``EventBatch``.
///
/// This is the one codec every input path uses (the daemon's sockets and `navlog ingest`), so
/// both accept exactly the same lines, the ones `schemas/event-line.schema.json` accepts.
/// A parser keeps scratch buffers between calls: reuse one per connection or file so a steady
/// stream of events allocates nothing per event. Not thread-safe; it is a value type.
public struct EventLineParser: Sendable {
    /// What a line turned out to be.
    public enum Line: Sendable, Hashable {
        /// An event, now appended to the batch.
        case event
        /// A transport hello (not an event; nothing was appended).
        case hello(HelloLine)
        /// An operator request to the daemon, `{"control":"stats"}` (not an event).
        case control(String)
        /// A relay's key line, `{"relay":"KEY-ID"}` or `{"relay":null}` (``RelayKey/none``): the
        /// key of the events that follow on the connection, if the daemon trusts the sender to
        /// say it (not an event; nothing was appended). Any line with a `relay` member is one.
        case relay(RelayKey)
        /// An empty or white-space-only line (skipped).
        case blank
    }

    /// The longest line accepted, in bytes, not counting the `\n` (events.md: default 64 KiB).
    public var maximumLineLength: Int

    /// Reset for every line; kept so its buffers are allocated once.
    private var tokenizer = JSONTokenizer()
    /// For lines built without JSON text, made on first use (the daemon's parsers never need one).
    private var builder: EventLineBuilder?

    /// Creates a parser.
    /// - Parameter maximumLineLength: longer lines are rejected with ``EventRejection/Code/tooLong``.
    public init(maximumLineLength: Int = 65_536) {
        self.maximumLineLength = maximumLineLength
    }

    /// Validates one line and, if it is an event, appends it to `batch`.
    ///
    /// - Parameters:
    ///   - line: the line's bytes without its `\n` (a trailing `\r` is ignored).
    ///   - lineNumber: the 1-based number reported in a rejection.
    ///   - receivedAt: the trusted receive time (µs since the epoch); also the event time when `ts` is absent.
    ///   - peer: the trusted sender credentials. With a relay key (``PeerCredentials/relayKey``),
    ///     an event without `seq` is rejected (`missing`, field `seq`): a relay resends, and only
    ///     a `seq` lets the daemon store a resent event once.
    ///   - batch: where an accepted event goes; untouched when the line is rejected.
    /// - Returns: what the line was.
    /// - Throws: ``EventRejection`` naming the line, column or field path, and what was expected.
    public mutating func parse(
        _ line: UnsafeRawBufferPointer,
        lineNumber: Int,
        receivedAt: Int64,
        peer: PeerCredentials,
        into batch: inout EventBatch
    ) throws(EventRejection) -> Line {
        var line = line
        if let last = line.last, last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
        do {
            return try parseLine(line, lineNumber: lineNumber, receivedAt: receivedAt, peer: peer, into: &batch)
        } catch {
            throw EventRejection(code: error.code, line: lineNumber, column: error.offset.map { $0 + 1 }, path: error.path, reason: error.reason)
        }
    }

    /// Convenience for tests and tools: parses a `String` line.
    public mutating func parse(
        _ line: String,
        lineNumber: Int = 1,
        receivedAt: Int64 = 0,
        peer: PeerCredentials = PeerCredentials(uid: 0, gid: 0, pid: 0),
        into batch: inout EventBatch
    ) throws(EventRejection) -> Line {
        let bytes = Array(line.utf8)
        return try bytes.withBytes { (raw) throws(EventRejection) -> Line in
            try parse(raw, lineNumber: lineNumber, receivedAt: receivedAt, peer: peer, into: &batch)
        }
    }

    private mutating func parseLine(
        _ line: UnsafeRawBufferPointer,
        lineNumber: Int,
        receivedAt: Int64,
        peer: PeerCredentials,
        into batch: inout EventBatch
    ) throws(LineFailure) -> Line {
        if line.count > maximumLineLength {
            throw LineFailure(code: .tooLong, offset: nil, reason: "the line is \(line.count) bytes long; the limit is \(maximumLineLength) bytes")
        }
        if let bad = UTF8Validation.firstInvalidByte(line) {
            throw LineFailure(code: .utf8, offset: bad, reason: "the line is not valid UTF-8 (byte 0x\(String(line[bad], radix: 16)) cannot appear here)")
        }
        if isBlank(line) { return .blank }
        tokenizer.begin(line: line)
        let tag: UInt8
        do {
            tag = try tokenizer.tokenizeLine()
        } catch  where error.code == .duplicateKey && error.path == nil {
            // Rare: read the line again keeping the path, so the message names the key's place.
            var slow = JSONTokenizer()
            slow.tracksPath = true
            slow.begin(line: line)
            _ = try slow.tokenizeLine()
            throw error
        }
        guard tag == BodyToken.object.rawValue else {
            throw LineFailure(code: .notObject, offset: 0, reason: "each line must be a JSON object, found \(TokenCursor.describe(tokenizer.out[0]))")
        }
        // The tokens stay where they are until the next line: no copy, no closure.
        return try interpret(
            UnsafeRawBufferPointer(tokenizer.out.elements), tokenizer.members.elements, receivedAt: receivedAt, peer: peer, lineNumber: lineNumber, into: &batch)
    }

    /// Validates a line built with ``EventLineBuilder`` (`fill` writes its members) and, if it
    /// is an event, appends it to `batch`: the same checks and the same stored event as
    /// ``parse(_:lineNumber:receivedAt:peer:into:)`` of the equivalent JSON line, without
    /// writing and reading the JSON text. A rejection has no column (there is no line).
    public mutating func parse(
        lineNumber: Int,
        receivedAt: Int64,
        peer: PeerCredentials,
        into batch: inout EventBatch,
        building fill: (inout EventLineBuilder) -> Void
    ) throws(EventRejection) -> Line {
        var builder = self.builder.take() ?? EventLineBuilder(out: TokenBuffer(capacity: 1024), members: ScratchBuffer(capacity: 16))
        defer { self.builder = builder }
        builder.beginLine()
        fill(&builder)
        builder.endLine()
        do {
            return try interpret(
                UnsafeRawBufferPointer(builder.out.elements), builder.members.elements, receivedAt: receivedAt, peer: peer, lineNumber: lineNumber, into: &batch)
        } catch {
            throw EventRejection(code: error.code, line: lineNumber, column: nil, path: error.path, reason: error.reason)
        }
    }

    private func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        for b in line where !(b == 0x20 || b == 0x09 || b == 0x0D) { return false }
        return true
    }

    // MARK: - Validation

    /// The members of a line that are not an event's own fields, found in one pass.
    private struct Envelope {
        var type: JSONTokenizer.Member?
        var session: JSONTokenizer.Member?
        var ts: JSONTokenizer.Member?
        var seq: JSONTokenizer.Member?
        var control: JSONTokenizer.Member?
        var relay: JSONTokenizer.Member?
        var isHello = false

        init(_ raw: UnsafeRawBufferPointer, _ members: UnsafeBufferPointer<JSONTokenizer.Member>) {
            for member in members {
                switch member.key {
                case FieldName.type.rawValue: type = member
                case FieldName.session.rawValue: session = member
                case FieldName.ts.rawValue: ts = member
                case FieldName.seq.rawValue: seq = member
                case FieldName.hello.rawValue: isHello = true
                case FieldName.control.rawValue: control = member
                case BodyToken.unknownKey:
                    // `relay` has no field code (a code would change how a `props` key "relay" is
                    // stored); an event's only unknown keys are the ignored `_` ones.
                    if EventLineParser.isRelayKeyName(TokenCursor.inlineString(raw, at: member.keyStart + 1)) { relay = member }
                default: break
                }
            }
        }
    }

    /// What a line is (an event, a hello, a relay's key, a control request); an accepted event
    /// is appended to `batch`.
    private func interpret(
        _ raw: UnsafeRawBufferPointer,
        _ members: UnsafeBufferPointer<JSONTokenizer.Member>,
        receivedAt: Int64,
        peer: PeerCredentials,
        lineNumber: Int,
        into batch: inout EventBatch
    ) throws(LineFailure) -> Line {
        let envelope = Envelope(raw, members)
        if envelope.isHello { return .hello(try hello(raw, members)) }
        if let relay = envelope.relay { return .relay(try relayKey(raw, relay)) }
        if let member = envelope.control {
            guard raw[member.value.lowerBound] == BodyToken.string.rawValue else {
                throw mistyped(raw, member, "control", expected: "the name of a control request, such as \"stats\"")
            }
            return .control(String(decoding: TokenCursor.inlineString(raw, at: member.value.lowerBound + 1), as: UTF8.self))
        }
        let type = try eventType(raw, envelope.type)
        let session = try sessionID(raw, envelope.session)
        var timestamp = receivedAt
        if let tsMember = envelope.ts { timestamp = try self.timestamp(raw, tsMember) }
        var sequence: UInt64?
        if let seqMember = envelope.seq {
            sequence = UInt64(try unsigned(raw, at: seqMember.value.lowerBound, offset: seqMember.offset, path: "seq"))
        } else if !peer.relayKey.isNone {
            throw LineFailure(
                code: .missing, offset: nil, path: "seq",
                reason: "an event a relay passes on with a key needs \"seq\", so that a resent event is stored once")
        }
        let bodyMembers = try checkFields(raw, members, of: type)
        // Accepted: copy the session and the body members, in their original order.
        let sessionRange = batch.appendBytes(session)
        let body = appendBody(raw, members, count: bodyMembers, into: &batch)
        batch.appendHeader(
            EventBatch.Header(
                type: type,
                timestamp: timestamp,
                timestampWasMissing: envelope.ts == nil,
                sequence: sequence,
                receivedAt: receivedAt,
                peer: peer,
                sourceLine: lineNumber,
                session: sessionRange,
                sessionHash: StringHash.hash(session),
                body: body
            ))
        return .event
    }

    /// The event type the line's `type` names.
    private func eventType(_ raw: UnsafeRawBufferPointer, _ typeMember: JSONTokenizer.Member?) throws(LineFailure) -> EventType {
        let typeName = try requiredString(
            raw, typeMember, "type", missing: "every event needs a \"type\", such as \"nav.push\"", expected: "a string naming the event type")
        guard let type = EventType.lookup(typeName) else {
            let shown = String(decoding: typeName.prefix(80), as: UTF8.self)
            throw LineFailure(code: .unknownType, offset: typeMember?.offset, path: "type", reason: "\"\(shown)\" is not an event type; see schemas/README.md for the list")
        }
        return type
    }

    /// The bytes of the line's `session` id (1 to 128 bytes).
    private func sessionID(_ raw: UnsafeRawBufferPointer, _ sessionMember: JSONTokenizer.Member?) throws(LineFailure) -> UnsafeRawBufferPointer {
        let session = try requiredString(raw, sessionMember, "session", missing: "every event needs a \"session\" id (one per app launch)", expected: "a string")
        if session.isEmpty {
            throw LineFailure(code: .empty, offset: sessionMember?.offset, path: "session", reason: "the session id is empty; it must be 1 to 128 bytes")
        }
        if session.count > 128 {
            throw LineFailure(
                code: .range, offset: sessionMember?.offset, path: "session", reason: "the session id is \(session.count) bytes long; the limit is 128 bytes")
        }
        return session
    }

    /// The bytes of a string member every event has; `missing` says why it is needed, and
    /// `expected` what it should be when it is not a string.
    @inline(__always)
    private func requiredString(
        _ raw: UnsafeRawBufferPointer, _ member: JSONTokenizer.Member?, _ path: String, missing: String, expected: String
    ) throws(LineFailure) -> UnsafeRawBufferPointer {
        guard let member else { throw LineFailure(code: .missing, offset: nil, path: path, reason: missing) }
        guard raw[member.value.lowerBound] == BodyToken.string.rawValue else { throw mistyped(raw, member, path, expected: expected) }
        return TokenCursor.inlineString(raw, at: member.value.lowerBound + 1)
    }

    /// Checks the type's own fields against its schema (known, well-shaped, none missing);
    /// returns how many there are.
    private func checkFields(
        _ raw: UnsafeRawBufferPointer, _ members: UnsafeBufferPointer<JSONTokenizer.Member>, of type: EventType
    ) throws(LineFailure) -> Int {
        let schema = Vocabulary.schemas[Int(type.rawValue)]
        var present: UInt32 = 0
        var bodyMembers = 0
        for member in members {
            switch member.key {
            case FieldName.type.rawValue, FieldName.session.rawValue, FieldName.ts.rawValue, FieldName.seq.rawValue:
                continue
            case BodyToken.unknownKey:
                let name = TokenCursor.inlineString(raw, at: member.keyStart + 1)
                if name.first == UInt8(ascii: "_") { continue }
                throw unknownField(String(decoding: name, as: UTF8.self), type: type, schema: schema, offset: member.offset)
            default:
                let field = FieldName(rawValue: member.key)!
                let slot = schema.slots[Int(member.key)]
                guard slot >= 0 else {
                    throw unknownField(field.name, type: type, schema: schema, offset: member.offset)
                }
                let index = Int(slot)
                if let violation = check(raw, at: member.value.lowerBound, schema.rules[index].rule) {
                    throw violation.failure(field: field.name, offset: member.offset)
                }
                present |= 1 << UInt32(index)
                bodyMembers += 1
            }
        }
        let missing = schema.requiredMask & ~present
        if missing != 0 {
            let field = schema.rules[missing.trailingZeroBitCount].field
            throw LineFailure(code: .missing, offset: nil, path: field.name, reason: "a \(type.name) event needs \"\(field.name)\"")
        }
        if type == .tabSelect, present & (1 << UInt32(schema.index(of: .index)!) | 1 << UInt32(schema.index(of: .vc)!)) == 0 {
            throw LineFailure(code: .missing, offset: nil, path: "index", reason: "a tab.select event needs \"index\" or \"vc\" to say which tab")
        }
        return bodyMembers
    }

    /// Appends the body: an object token, then the type's own members in their original
    /// order. A known key's token is followed by its value's, and members follow one another,
    /// so each run of body members between envelope or ignored keys is one copy.
    private func appendBody(
        _ raw: UnsafeRawBufferPointer, _ members: UnsafeBufferPointer<JSONTokenizer.Member>, count: Int, into batch: inout EventBatch
    ) -> Range<Int> {
        let bodyStart = batch.bytes.count
        batch.bytes.append(BodyToken.object.rawValue)
        Varint.appendUInt32(UInt32(count), to: &batch.bytes)
        var runStart = 0
        var runEnd = 0
        for member in members {
            switch member.key {
            case FieldName.type.rawValue, FieldName.session.rawValue, FieldName.ts.rawValue, FieldName.seq.rawValue, BodyToken.unknownKey:
                continue
            default:
                if member.keyStart != runEnd {
                    if runEnd > runStart { _ = batch.appendBytes(UnsafeRawBufferPointer(rebasing: raw[runStart..<runEnd])) }
                    runStart = member.keyStart
                }
                runEnd = member.value.upperBound
            }
        }
        if runEnd > runStart { _ = batch.appendBytes(UnsafeRawBufferPointer(rebasing: raw[runStart..<runEnd])) }
        return bodyStart..<batch.bytes.count
    }

    private func unknownField(_ name: String, type: EventType, schema: TypeSchema, offset: Int) -> LineFailure {
        let allowed = (["type", "session", "ts", "seq"] + schema.rules.map(\.field.name)).joined(separator: ", ")
        return LineFailure(
            code: .unknownField, offset: offset, path: name, reason: "\(type.name) has no field \"\(name)\" (its fields are \(allowed); keys starting with _ are ignored)")
    }

    private func mistyped(_ raw: UnsafeRawBufferPointer, _ member: JSONTokenizer.Member, _ path: String, expected: String) -> LineFailure {
        LineFailure(code: .type, offset: member.offset, path: path, reason: "expected \(expected), found \(TokenCursor.describe(raw[member.value.lowerBound]))")
    }

    private func timestamp(_ raw: UnsafeRawBufferPointer, _ member: JSONTokenizer.Member) throws(LineFailure) -> Int64 {
        let at = member.value.lowerBound
        switch BodyToken(rawValue: raw[at]) {
        case .integer:
            let value = TokenCursor.integer(raw, at: at)
            guard value >= 0, value <= 253_402_300_799_999_999 else {
                throw LineFailure(
                    code: .range, offset: member.offset, path: "ts",
                    reason: "\(value) is outside the valid range of µs since the epoch (0 to 253402300799999999, i.e. up to year 9999)")
            }
            return value
        case .string:
            let text = TokenCursor.inlineString(raw, at: at + 1)
            guard let value = RFC3339.microseconds(text) else {
                throw LineFailure(
                    code: .timestamp, offset: member.offset, path: "ts",
                    reason: "\"\(String(decoding: text.prefix(64), as: UTF8.self))\" is not an RFC 3339 date-time such as 2025-11-21T10:00:00.123Z")
            }
            // The same range as the integer form, so that every stored time prints as one that
            // is accepted again (navlog cat | navlog ingest).
            guard value >= 0, value <= 253_402_300_799_999_999 else {
                throw LineFailure(
                    code: .range, offset: member.offset, path: "ts",
                    reason:
                        "\"\(String(decoding: text.prefix(64), as: UTF8.self))\" is before 1970-01-01T00:00:00Z or after year 9999; ts must be within the range of µs since the epoch (0 to 253402300799999999)"
                )
            }
            return value
        case .number:
            let (integral, _) = JSONNumber.integralValue(TokenCursor.inlineString(raw, at: at + 1))
            if integral {
                throw LineFailure(code: .range, offset: member.offset, path: "ts", reason: "the number is outside the valid range of µs since the epoch (0 to 253402300799999999)")
            }
            throw mistyped(raw, member, "ts", expected: "an integer (µs since the epoch) or an RFC 3339 string")
        default:
            throw mistyped(raw, member, "ts", expected: "an integer (µs since the epoch) or an RFC 3339 string")
        }
    }

    private func unsigned(_ raw: UnsafeRawBufferPointer, at position: Int, offset: Int, path: String) throws(LineFailure) -> Int64 {
        if let violation = check(raw, at: position, .uint) { throw violation.failure(field: path, offset: offset) }
        return TokenCursor.integer(raw, at: position)
    }

    private static func isRelayKeyName(_ name: UnsafeRawBufferPointer) -> Bool {
        name.count == 5 && name[0] == UInt8(ascii: "r") && name.elementsEqual("relay".utf8)
    }

    /// The key of a relay line's `relay` member: a key id (``RelayKey/isValid(_:)``) or null.
    private func relayKey(_ raw: UnsafeRawBufferPointer, _ member: JSONTokenizer.Member) throws(LineFailure) -> RelayKey {
        let at = member.value.lowerBound
        if raw[at] == BodyToken.null.rawValue { return .none }
        guard raw[at] == BodyToken.string.rawValue else {
            throw mistyped(raw, member, "relay", expected: "a key id (a string of letters, digits, '.', '_' and '-') or null")
        }
        let name = TokenCursor.inlineString(raw, at: at + 1)
        if name.isEmpty {
            throw LineFailure(code: .empty, offset: member.offset, path: "relay", reason: "the key id is empty; it must be 1 to 64 bytes")
        }
        if name.count > RelayKey.maximumLength {
            throw LineFailure(
                code: .range, offset: member.offset, path: "relay", reason: "the key id is \(name.count) bytes long; the limit is \(RelayKey.maximumLength) bytes")
        }
        if let bad = RelayKey.invalidByte(in: name) {
            throw LineFailure(
                code: .pattern, offset: member.offset, path: "relay",
                reason: "byte \(bad + 1) of the key id (0x\(String(name[bad], radix: 16))) is not allowed; a key id holds ASCII letters, digits, '.', '_' and '-' only")
        }
        return RelayKey(name)
    }

    private func hello(_ raw: UnsafeRawBufferPointer, _ members: UnsafeBufferPointer<JSONTokenizer.Member>) throws(LineFailure) -> HelloLine {
        var hello = HelloLine()
        for member in members {
            let at = member.value.lowerBound
            switch member.key {
            case FieldName.hello.rawValue:
                guard raw[at] == BodyToken.integer.rawValue else { throw mistyped(raw, member, "hello", expected: "an integer (1)") }
                hello.version = TokenCursor.integer(raw, at: at)
            case FieldName.client.rawValue:
                guard raw[at] == BodyToken.string.rawValue else { throw mistyped(raw, member, "client", expected: "a string") }
                hello.client = String(decoding: TokenCursor.inlineString(raw, at: at + 1), as: UTF8.self)
            case FieldName.ack.rawValue:
                let text = raw[at] == BodyToken.string.rawValue ? String(decoding: TokenCursor.inlineString(raw, at: at + 1), as: UTF8.self) : ""
                guard let mode = HelloLine.AckMode(rawValue: text) else {
                    throw LineFailure(code: .enum, offset: member.offset, path: "ack", reason: "ack must be \"none\", \"batch\" or \"durable\"")
                }
                hello.ack = mode
            default:
                continue
            }
        }
        return hello
    }
}

/// A value that broke its rule, with the path below the field it was found in.
struct Violation {
    var code: EventRejection.Code
    var reason: String
    /// Path components below the top-level field, innermost last: `.class`, `[2]`.
    var suffix: String = ""

    func failure(field: String, offset: Int) -> LineFailure {
        LineFailure(code: code, offset: offset, path: field + suffix, reason: reason)
    }

    func under(_ component: String) -> Violation {
        var copy = self
        copy.suffix = component + suffix
        return copy
    }
}

extension EventLineParser {
    /// Checks the value at `position` against `rule`; `nil` when it conforms.
    func check(_ raw: UnsafeRawBufferPointer, at position: Int, _ rule: ValueRule) -> Violation? {
        let tag = raw[position]
        func expected(_ what: String) -> Violation {
            Violation(code: .type, reason: "expected \(what), found \(TokenCursor.describe(tag))")
        }
        switch rule {
        case .string:
            return tag == BodyToken.string.rawValue ? nil : expected("a string")
        case .nonEmptyString:
            guard tag == BodyToken.string.rawValue else { return expected("a string") }
            return TokenCursor.uint32(raw, at: position + 1) == 0 ? Violation(code: .empty, reason: "must not be empty") : nil
        case .bool:
            return tag == BodyToken.true.rawValue || tag == BodyToken.false.rawValue ? nil : expected("true or false")
        case .uint:
            if tag == BodyToken.integer.rawValue {
                return TokenCursor.integer(raw, at: position) < 0 ? Violation(code: .range, reason: "must be 0 or more") : nil
            }
            if tag == BodyToken.number.rawValue, JSONNumber.integralValue(TokenCursor.inlineString(raw, at: position + 1)).integral {
                return Violation(code: .range, reason: "must be at most 9223372036854775807")
            }
            return expected("a whole number of 0 or more")
        case .protocolVersion:
            guard tag == BodyToken.integer.rawValue else {
                return Violation(code: .version, reason: "expected the integer 1 (the protocol version), found \(TokenCursor.describe(tag))")
            }
            let value = TokenCursor.integer(raw, at: position)
            return value == 1 ? nil : Violation(code: .version, reason: "protocol version \(value) is not supported; this navlog speaks version 1")
        case .oneOf(let set):
            guard tag == BodyToken.string.rawValue else {
                return Violation(code: .enum, reason: "expected a \(set.name) (\(set.list)), found \(TokenCursor.describe(tag))")
            }
            let text = TokenCursor.inlineString(raw, at: position + 1)
            if set.contains(text) { return nil }
            return Violation(code: .enum, reason: "\"\(String(decoding: text.prefix(64), as: UTF8.self))\" is not a \(set.name); expected one of \(set.list)")
        case .ref:
            return checkReference(raw, at: position)
        case .refOrNull:
            return tag == BodyToken.null.rawValue ? nil : checkReference(raw, at: position)
        case .refs:
            guard tag == BodyToken.array.rawValue else { return expected("an array of controller references") }
            var p = position + 5
            for index in 0..<TokenCursor.uint32(raw, at: position + 1) {
                if let violation = checkReference(raw, at: p) { return violation.under("[\(index)]") }
                p = TokenCursor.skipValue(raw, at: p)
            }
            return nil
        case .stringArray:
            guard tag == BodyToken.array.rawValue else { return expected("an array of strings") }
            var p = position + 5
            for index in 0..<TokenCursor.uint32(raw, at: position + 1) {
                if raw[p] != BodyToken.string.rawValue { return Violation(code: .type, reason: "expected a string, found \(TokenCursor.describe(raw[p]))").under("[\(index)]") }
                p = TokenCursor.skipValue(raw, at: p)
            }
            return nil
        case .traits:
            return checkObject(raw, at: position, Vocabulary.traits)
        case .anchor:
            return checkObject(raw, at: position, Vocabulary.anchor)
        case .rectangle:
            return checkObject(raw, at: position, Vocabulary.rectangle)
        case .number:
            return tag == BodyToken.integer.rawValue || tag == BodyToken.number.rawValue ? nil : expected("a number")
        case .props:
            guard tag == BodyToken.object.rawValue else { return expected("an object of strings, numbers and booleans") }
            var p = position + 5
            for _ in 0..<TokenCursor.uint32(raw, at: position + 1) {
                let keyStart = p
                p = TokenCursor.skipKey(raw, at: p)
                switch BodyToken(rawValue: raw[p]) {
                case .string, .integer, .number, .true, .false: break
                default:
                    let name = TokenCursor.keyName(raw, at: keyStart)
                    return Violation(code: .type, reason: "expected a string, number or boolean, found \(TokenCursor.describe(raw[p]))").under(".\(name)")
                }
                p = TokenCursor.skipValue(raw, at: p)
            }
            return nil
        }
    }

    private func checkReference(_ raw: UnsafeRawBufferPointer, at position: Int) -> Violation? {
        let tag = raw[position]
        if tag == BodyToken.string.rawValue {
            return TokenCursor.uint32(raw, at: position + 1) == 0 ? Violation(code: .empty, reason: "a controller id must not be empty") : nil
        }
        guard tag == BodyToken.object.rawValue else {
            return Violation(code: .type, reason: "expected a controller reference (an id string, or an object with \"id\" and \"class\"), found \(TokenCursor.describe(tag))")
        }
        return checkObject(raw, at: position, Vocabulary.reference)
    }

    private func checkObject(_ raw: UnsafeRawBufferPointer, at position: Int, _ shape: ObjectShape) -> Violation? {
        guard raw[position] == BodyToken.object.rawValue else {
            return Violation(code: .type, reason: "expected a \(shape.what), found \(TokenCursor.describe(raw[position]))")
        }
        var seen: UInt128 = 0
        var p = position + 5
        for _ in 0..<TokenCursor.uint32(raw, at: position + 1) {
            let keyByte = raw[p]
            let keyStart = p
            p = TokenCursor.skipKey(raw, at: p)
            guard keyByte < BodyToken.unknownKey, let rule = shape.rules[Int(keyByte)] else {
                let name = TokenCursor.keyName(raw, at: keyStart)
                return Violation(code: .unknownField, reason: "a \(shape.what) has no key \"\(name)\" (allowed: \(shape.allowedList))").under(".\(name)")
            }
            if let violation = check(raw, at: p, rule) {
                return violation.under(".\(FieldName(rawValue: keyByte)!.name)")
            }
            seen |= 1 << UInt128(keyByte)
            p = TokenCursor.skipValue(raw, at: p)
        }
        if seen & shape.requiredMask != shape.requiredMask {
            for field in shape.required where seen & (1 << UInt128(field.rawValue)) == 0 {
                return Violation(code: .missing, reason: "a \(shape.what) needs \"\(field.name)\"").under(".\(field.name)")
            }
        }
        return nil
    }
}
