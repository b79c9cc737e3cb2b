/// The first half of an import, which needs nothing a converter holds: a file's bytes framed
/// into records, and each record read as JSON.
///
/// `navlog import` runs it on a thread of its own, a chunk ahead of the converter, so that the
/// two halves use both cores; ``Importer/feed(_:report:)`` runs both halves in turn. It hands
/// over ``ReadRecords``: a chunk's records in input order, each read or reported, their bytes
/// in one array and their nodes in one table, so that a record costs no allocation and the
/// thread that converts it frees nothing the reading thread allocated.
public struct RecordReader: Sendable {
    private var framer: JSONRecordFramer
    /// Whether the piece being read is the last of a file (a record cut short there is a truncated file).
    private var atEnd = false

    /// A reader of records of at most `maximumRecordBytes` bytes.
    public init(maximumRecordBytes: Int) {
        framer = JSONRecordFramer(maximumRecordBytes: maximumRecordBytes)
    }

    /// Reads the next bytes of the current file, appending the records that end in them to `records`.
    public mutating func read(_ chunk: UnsafeRawBufferPointer, into records: inout ReadRecords) {
        var framer = self.framer
        framer.feed(chunk) { piece in read(piece, into: &records) }
        self.framer = framer
    }

    /// Ends the current file, appending what it cuts short (reported as truncated) to
    /// `records`; the next bytes read begin a new file, counted from line 1.
    public mutating func endFile(into records: inout ReadRecords) {
        var framer = self.framer
        atEnd = true
        defer { atEnd = false }
        framer.finish { piece in read(piece, into: &records) }
        self.framer = JSONRecordFramer(maximumRecordBytes: framer.maximumRecordBytes)
    }

    /// Appends one record, read as JSON, or why it cannot be.
    private func read(_ piece: JSONRecordFramer.Piece, into records: inout ReadRecords) {
        switch piece {
        case .malformed(let line, let reason):
            records.items.append(.skipped(ImportIssue(code: reason.contains("longer than") ? .tooLarge : .syntax, line: line, reason: reason)))
        case .record(let raw, let line):
            let start = records.bytes.count
            records.bytes.append(contentsOf: raw)
            let first = records.nodeCount
            let outcome: Result<Int, JSONSyntaxError> = records.bytes.withUnsafeBufferPointer { buffer in
                do throws(JSONSyntaxError) {
                    return .success(try JSONDocument.read(buffer, from: start, into: &records.table, at: first))
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let end):
                records.items.append(.record(line: line, byteStart: Int32(start), rootIndex: Int32(first)))
                records.nodeCount = end
            case .failure(let error):
                records.bytes.removeSubrange(start...)
                records.items.append(.skipped(issue(error, in: raw, line: line)))
            }
        }
    }

    /// What is wrong with a record that is not JSON, at its line.
    private func issue(_ error: JSONSyntaxError, in raw: UnsafeRawBufferPointer, line: Int) -> ImportIssue {
        if error.offset >= raw.count {
            let reason = atEnd ? "the input ends inside this record (a truncated file?)" : "the line ends before its JSON value does (a truncated or split record)"
            return ImportIssue(code: .syntax, line: line, reason: reason)
        }
        let within = raw[..<min(error.offset, raw.count)].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        return ImportIssue(code: .syntax, line: line + within, reason: "not valid JSON: \(error.reason) (byte \(error.offset + 1) of the record); it was skipped")
    }
}

/// Records a ``RecordReader`` read and an ``Importer`` has not yet converted, in input order.
/// Hand it to ``Importer/convert(_:report:)``, which empties it, then back to the reader, which
/// reuses its storage.
public struct ReadRecords: Sendable {
    /// One record, read or reported.
    enum Item: Sendable {
        /// A record read as JSON: the line it begins on, where its bytes begin in ``bytes``,
        /// and its top node's index in ``table``.
        case record(line: Int, byteStart: Int32, rootIndex: Int32)
        /// A record, or bytes that were to be one, that cannot be imported.
        case skipped(ImportIssue)
    }

    /// The records, in input order.
    var items: [Item] = []
    /// The bytes of the records read, one after another.
    var bytes: [UInt8] = []
    /// Their nodes, one record's after another's (the table's end is spare room).
    var table: [JSONDocument.Entry] = []
    /// How many of ``table``'s entries are records' nodes.
    var nodeCount = 0

    /// Nothing read yet.
    public init() {}

    /// How many records (or reported pieces) are held.
    public var count: Int { items.count }

    /// The document of a record read.
    func document(byteStart: Int32, rootIndex: Int32) -> JSONDocument {
        JSONDocument(bytes: bytes, entries: table, byteStart: Int(byteStart), rootIndex: rootIndex)
    }

    /// Empties it for the next records, keeping its storage unless a huge record made it large.
    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: bytes.capacity <= 8 << 20)
        if table.count > 1 << 20 { table = [] }
        nodeCount = 0
    }
}
