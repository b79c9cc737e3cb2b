/// Reads one source's files as bytes and turns them into navlog event lines: the part of
/// `navlog import` with no I/O (the command reads the files and stores the lines).
///
/// Feed each file's bytes with ``feed(_:report:)`` and end it with ``endFile(report:)``;
/// once every file is read, ``finish(_:)`` writes the sessions. Records that cannot be
/// imported are reported (line, JSON path, why) and counted; the rest import.
public struct Importer: Sendable {
    /// The source being read.
    public let source: ImportSource
    /// Counts so far.
    public private(set) var statistics = ImportStatistics()
    private var framer: JSONRecordFramer
    private var converter: any RecordConverter
    /// The node table of the record read last, kept for the next one.
    private var spareEntries: [JSONDocument.Entry] = []
    /// Whether the piece being handled is the last of a file (a record cut short there is a truncated file).
    private var atEnd = false

    /// An importer of `source`'s records, each at most `maximumRecordBytes` long.
    /// - Parameter maximumHeldCrumbs: Sentry: how many crumbs of sessions still open (tied by a
    ///   session tag) are held in memory before they are spilled to a temporary file.
    public init(source: ImportSource, maximumRecordBytes: Int = 32 << 20, maximumHeldCrumbs: Int = 1 << 18) {
        self.source = source
        framer = JSONRecordFramer(maximumRecordBytes: maximumRecordBytes)
        switch source {
        case .sentry: converter = SentryConverter(maximumHeldCrumbs: maximumHeldCrumbs)
        case .datadog: converter = DatadogConverter()
        case .firebase: converter = FirebaseConverter()
        }
    }

    /// Reads the next bytes of the current file.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, report: (ImportIssue) -> Void) {
        var framer = self.framer
        framer.feed(chunk) { piece in handle(piece, report: report) }
        self.framer = framer
    }

    /// Ends the current file (a record still open is reported as truncated); the next bytes fed
    /// begin a new file, counted from line 1.
    public mutating func endFile(report: (ImportIssue) -> Void) {
        var framer = self.framer
        atEnd = true
        defer { atEnd = false }
        framer.finish { piece in handle(piece, report: report) }
        self.framer = JSONRecordFramer(maximumRecordBytes: framer.maximumRecordBytes)
    }

    private mutating func handle(_ piece: JSONRecordFramer.Piece, report: (ImportIssue) -> Void) {
        switch piece {
        case .malformed(let line, let reason):
            statistics.records += 1
            statistics.skipped += 1
            report(ImportIssue(code: reason.contains("longer than") ? .tooLarge : .syntax, line: line, reason: reason))
        case .record(let bytes, let line):
            let document: JSONDocument
            do {
                document = try JSONDocument(parsing: bytes, reusing: &spareEntries)
            } catch {
                statistics.records += 1
                statistics.skipped += 1
                let within = bytes[..<min(error.offset, bytes.count)].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                if error.offset >= bytes.count {
                    let reason = atEnd ? "the input ends inside this record (a truncated file?)" : "the line ends before its JSON value does (a truncated or split record)"
                    report(ImportIssue(code: .syntax, line: line, reason: reason))
                } else {
                    report(ImportIssue(code: .syntax, line: line + within, reason: "not valid JSON: \(error.reason) (byte \(error.offset + 1) of the record); it was skipped"))
                }
                return
            }
            converter.convert(document, line: line, statistics: &statistics, report: report)
            document.recycle(into: &spareEntries)
        }
    }

    /// Writes the sessions already known to be complete (see
    /// ``RecordConverter/takeCompleted(statistics:_:)``) into `sink`, so that memory does not
    /// hold them until ``finish(into:)``; call it between reads.
    public mutating func writeCompleted<Sink: ImportedEventSink>(into sink: inout Sink) throws {
        try write(into: &sink, all: false)
    }

    /// Ends the import: every session read, written into `sink` (`session.start` first, `seq`
    /// from 1), sessions in order of their ids.
    public mutating func finish<Sink: ImportedEventSink>(into sink: inout Sink) throws {
        try write(into: &sink, all: true)
    }

    /// ``writeCompleted(into:)`` as JSON lines: `emit` is called with the session's id and one
    /// line, without its newline.
    public mutating func writeCompleted(_ emit: (String, [UInt8]) throws -> Void) throws {
        try withoutActuallyEscaping(emit) { emit in
            var lines = ImportedJSONLines(emit)
            try write(into: &lines, all: false)
        }
    }

    /// ``finish(into:)`` as JSON lines: `emit` is called with the session's id and one line,
    /// without its newline.
    public mutating func finish(_ emit: (String, [UInt8]) throws -> Void) throws {
        try withoutActuallyEscaping(emit) { emit in
            var lines = ImportedJSONLines(emit)
            try write(into: &lines, all: true)
        }
    }

    /// Writes the sessions the converter hands over (every one left when `all`, else those
    /// complete already), counting sessions and events.
    private mutating func write<Sink: ImportedEventSink>(into sink: inout Sink, all: Bool) throws {
        var counts = self.statistics
        var written = (sessions: 0, events: 0)
        defer {
            counts.sessions += written.sessions
            counts.events += written.events
            self.statistics = counts
        }
        func body(_ session: ImportedSession) throws {
            written.sessions += 1
            written.events += try session.writeEvents(into: &sink)
        }
        if all {
            try converter.finish(statistics: &counts, body)
        } else {
            try converter.takeCompleted(statistics: &counts, body)
        }
    }
}
