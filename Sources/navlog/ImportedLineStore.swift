import ArgumentParser
import NavlogEvents
import NavlogImport
import NavlogStore

/// Where `navlog import` puts the events the importer writes: each goes through the daemon's
/// validation (`EventLineParser`, built as tokens rather than written as JSON text and read
/// back) into the log in batches, like `navlog ingest`'s, unless the log holds it already (an
/// earlier import of the same files).
struct ImportedLineStore: ImportedEventSink {
    /// The log stored into.
    let log: EventLog
    /// The `seq`s stored already, per session of the source (read before the import).
    let stored: [String: Set<UInt64>]
    /// Who stores the lines, as the daemon would record a client.
    let peer: PeerCredentials
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

    /// Appends the lines held to the log.
    /// - Throws: `ExitCode.failure` when the log cannot be appended to (reported).
    mutating func flush() throws {
        try log.append(
            &batch, command: "import", advice: "Run the command again once the problem is fixed; events already stored are not stored twice.")
    }

    /// Stores what is held and closes the log, when the import stops before the end of its
    /// files: the sessions written so far stay stored, and a run again stores nothing twice.
    mutating func closeEarly() throws {
        try flush()
        try? log.close()
    }
}
