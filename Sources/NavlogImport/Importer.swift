/// Reads one source's files as bytes and turns them into navlog event lines: the part of
/// `navlog import` with no I/O (the command reads the files and stores the lines).
///
/// Feed each file's bytes with ``feed(_:report:)`` and end it with ``endFile(report:)``;
/// once every file is read, ``finish(into:)`` writes the sessions. Records that cannot be
/// imported are reported (line, JSON path, why) and counted; the rest import. The reading half
/// (framing and JSON) can run elsewhere: a ``RecordReader`` fills ``ReadRecords`` that
/// ``convert(_:report:)`` takes.
public struct Importer: Sendable {
    /// The source being read.
    public let source: ImportSource
    /// Counts so far.
    public private(set) var statistics = ImportStatistics()
    /// The reading half, for ``feed(_:report:)``.
    private var reader: RecordReader
    private var converter: any RecordConverter
    /// Records read by ``feed(_:report:)`` and not yet converted (kept for its storage).
    private var pending = ReadRecords()

    /// An importer of `source`'s records, each at most `maximumRecordBytes` long.
    /// - Parameter maximumHeldCrumbs: Sentry: how many crumbs of sessions still open (tied by a
    ///   session tag) are held in memory before they are spilled to a temporary file.
    public init(source: ImportSource, maximumRecordBytes: Int = 32 << 20, maximumHeldCrumbs: Int = 1 << 18) {
        self.source = source
        reader = RecordReader(maximumRecordBytes: maximumRecordBytes)
        switch source {
        case .sentry: converter = SentryConverter(maximumHeldCrumbs: maximumHeldCrumbs)
        case .datadog: converter = DatadogConverter()
        case .firebase: converter = FirebaseConverter()
        }
    }

    /// Reads the next bytes of the current file.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, report: (ImportIssue) -> Void) {
        var records = takePending()
        reader.read(chunk, into: &records)
        convert(&records, report: report)
        pending = records
    }

    /// Ends the current file (a record still open is reported as truncated); the next bytes fed
    /// begin a new file, counted from line 1.
    public mutating func endFile(report: (ImportIssue) -> Void) {
        var records = takePending()
        reader.endFile(into: &records)
        convert(&records, report: report)
        pending = records
    }

    /// ``pending``, moved out (so that its storage is not shared).
    private mutating func takePending() -> ReadRecords {
        var records = ReadRecords()
        swap(&records, &pending)
        return records
    }

    /// Converts the records a ``RecordReader`` read, in order, reporting those it could not
    /// read; `records` is left empty, its storage for the reader to reuse.
    public mutating func convert(_ records: inout ReadRecords, report: (ImportIssue) -> Void) {
        for item in records.items {
            switch item {
            case .skipped(let issue):
                statistics.records += 1
                statistics.skipped += 1
                report(issue)
            case .record(let line, let byteStart, let rootIndex):
                converter.convert(records.document(byteStart: byteStart, rootIndex: rootIndex), line: line, statistics: &statistics, report: report)
            }
        }
        records.removeAll()
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
