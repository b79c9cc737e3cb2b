import ArgumentParser
import NavlogEvents
import NavlogImport
import NavlogStore

/// Where `navlog import` puts the events the importer writes: each goes through the daemon's
/// validation (`EventLineParser`, built as tokens rather than written as JSON text and read
/// back) into the log in batches, like `navlog ingest`'s, unless the log holds it already (an
/// earlier import of the same files). The batches are appended on a thread of their own
/// (``BackgroundAppender``) while the next ones are built: call ``finish()`` before using the
/// log again.
struct ImportedLineStore: ImportedEventSink {
    /// The log stored into.
    let log: EventLog
    /// The `seq`s stored already, per session of the source (read before the import).
    let stored: [String: Set<UInt64>]
    /// Who stores the lines, as the daemon would record a client.
    let peer: PeerCredentials
    /// Appends the full batches to ``log``.
    private let appender: BackgroundAppender
    private var parser = EventLineParser()
    private var batch = EventBatch()
    /// Lines left out because the log holds them already.
    private(set) var duplicates = 0
    /// Lines the validation rejected: a bug in a converter, each reported.
    private(set) var rejected = 0
    /// Lines handed over so far (the line number a rejection names).
    private var lineNumber = 0

    /// A store with nothing handed over yet.
    init(log: EventLog, stored: [String: Set<UInt64>], peer: PeerCredentials) {
        self.log = log
        self.stored = stored
        self.peer = peer
        appender = BackgroundAppender(
            log: log, command: "import", advice: "Run the command again once the problem is fixed; events already stored are not stored twice.")
    }

    /// Stores one event (appended once a batch is full, or by ``flush()``), built straight into
    /// the parser's token form and validated as a line would be.
    /// - Throws: `ExitCode.failure` when the log cannot be appended to (reported).
    mutating func event(_ type: StaticString, session: String, timestamp: Int64, sequence: UInt64, _ fill: (inout EventLineBuilder) -> Void) throws {
        lineNumber += 1
        if !stored.isEmpty, let sequences = stored[session], sequences.contains(sequence) {
            duplicates += 1
            return
        }
        do throws(EventRejection) {
            try parser.parseImported(
                type, session: session, timestamp: timestamp, sequence: sequence, lineNumber: lineNumber, receivedAt: currentMicroseconds(), peer: peer,
                into: &batch, fill)
        } catch {
            // An event the converter wrote that navlog rejects is a bug in the converter.
            rejected += 1
            printError("navlog import: converted event \(lineNumber) was rejected (\(error)); please report this with the record that produced it.")
        }
        if batch.count >= 16_384 { try flush() }
    }

    /// Hands the events held to the appender.
    /// - Throws: `ExitCode.failure` when an earlier batch could not be appended (reported).
    mutating func flush() throws {
        try appender.append(&batch)
    }

    /// Stores the events held and waits until every batch is appended: the log is the
    /// caller's again.
    /// - Throws: `ExitCode.failure` when a batch could not be appended (reported).
    mutating func finish() throws {
        try flush()
        try appender.finish()
    }

    /// Stores what is held and closes the log, when the import stops before the end of its
    /// files: the sessions written so far stay stored, and a run again stores nothing twice.
    mutating func closeEarly() throws {
        var failure: (any Error)?
        do { try flush() } catch { failure = error }
        do { try appender.finish() } catch { failure = failure ?? error }
        try? log.close()
        if let failure { throw failure }
    }
}
