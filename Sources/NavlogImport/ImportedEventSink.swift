public import NavlogEvents
public import NavlogJSON

/// Where ``ImportedSession/writeEvents(into:)`` writes an imported session's events: as JSON
/// lines (``ImportedJSONLines``), or straight into the event parser's token form
/// (`navlog import`'s store, through ``EventLineBuilder``), which skips writing JSON text only
/// to read it back and still validates each event as the daemon does.
public protocol ImportedEventSink {
    /// What an event's own fields are written into.
    associatedtype Fields: ImportedEventFields

    /// Writes one event: `type`, `session`, `ts` and `seq`, in that order, then what `fill`
    /// writes. A sink may leave out an event it holds already (`session` and `sequence` say
    /// which) without calling `fill`.
    mutating func event(_ type: StaticString, session: String, timestamp: Int64, sequence: UInt64, _ fill: (inout Fields) -> Void) throws
}

/// An imported event's own fields, as its writer (``ImportedSession/writeEvents(into:)``) gives them.
public protocol ImportedEventFields {
    /// A string member.
    mutating func field(_ name: FieldName, _ value: String)
    /// A view controller member, `{"id":…,"class":…,"title":…}` (no title when it has none or
    /// an empty one).
    mutating func field(_ name: FieldName, _ controller: ImportedController)
    /// The import mark's `props`: `{"source":…,"sourceSession":…}`.
    mutating func importProps(source: String, sourceSession: String)
}

extension JSONWriter: ImportedEventFields {
    public mutating func field(_ name: FieldName, _ value: String) {
        key(escaping: name.name)
        string(value)
    }

    public mutating func field(_ name: FieldName, _ controller: ImportedController) {
        key(escaping: name.name)
        raw("{\"id\":")
        string(controller.id)
        member("class", controller.className)
        if let title = controller.title, !title.isEmpty { member("title", title) }
        raw("}")
    }

    public mutating func importProps(source: String, sourceSession: String) {
        key("props")
        raw("{\"source\":")
        string(source)
        member("sourceSession", sourceSession)
        raw("}")
    }
}

extension EventLineBuilder: ImportedEventFields {
    public mutating func field(_ name: FieldName, _ value: String) {
        key(name)
        string(value)
    }

    public mutating func field(_ name: FieldName, _ controller: ImportedController) {
        key(name)
        beginObject()
        key(.id)
        string(controller.id)
        key(.class)
        string(controller.className)
        if let title = controller.title, !title.isEmpty {
            key(.title)
            string(title)
        }
        endObject()
    }

    public mutating func importProps(source: String, sourceSession: String) {
        key(.props)
        beginObject()
        key(.source)
        string(source)
        key("sourceSession")
        string(sourceSession)
        endObject()
    }
}

/// Writes each event as a JSON line (without its newline) and hands it to `emit` with its
/// session id: what tests, the fuzz check and any reader of event lines take.
public struct ImportedJSONLines: ImportedEventSink {
    private let emit: (String, [UInt8]) throws -> Void
    /// One buffer for every line (taken back after each; a new one only if `emit` kept it).
    private var buffer: [UInt8] = []

    /// A sink that calls `emit` with each line.
    public init(_ emit: @escaping (String, [UInt8]) throws -> Void) {
        self.emit = emit
    }

    public mutating func event(_ type: StaticString, session: String, timestamp: Int64, sequence: UInt64, _ fill: (inout JSONWriter) -> Void) throws {
        var json = JSONWriter()
        swap(&json.bytes, &buffer)
        json.bytes.removeAll(keepingCapacity: true)
        json.raw("{\"type\":")
        json.string(type)
        json.member("session", session)
        json.member("ts", timestamp)
        json.member("seq", sequence)
        fill(&json)
        json.raw("}")
        swap(&json.bytes, &buffer)
        try emit(session, buffer)
    }
}

extension EventLineParser {
    /// Validates one imported event built as tokens, as `navlog import`'s store does: the
    /// envelope (`type`, `session`, `ts`, `seq`, in the order ``ImportedJSONLines`` writes it),
    /// then what `fill` writes, appended to `batch` when accepted.
    public mutating func parseImported(
        _ type: StaticString, session: String, timestamp: Int64, sequence: UInt64, lineNumber: Int, receivedAt: Int64, peer: PeerCredentials,
        into batch: inout EventBatch, _ fill: (inout EventLineBuilder) -> Void
    ) throws(EventRejection) {
        _ = try parse(lineNumber: lineNumber, receivedAt: receivedAt, peer: peer, into: &batch) { line in
            line.key(.type)
            line.string(utf8: UnsafeRawBufferPointer(start: type.utf8Start, count: type.utf8CodeUnitCount))
            line.field(.session, session)
            line.key(.ts)
            line.integer(timestamp)
            line.key(.seq)
            line.integer(sequence)
            fill(&line)
        }
    }
}
