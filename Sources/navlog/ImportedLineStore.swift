import ArgumentParser
import NavlogEvents
import NavlogStore

/// Where `navlog import` puts the lines the importer writes: each goes through the daemon's
/// validation (`EventLineParser`) into the log in batches, like `navlog ingest`'s, unless the
/// log holds it already (an earlier import of the same files).
struct ImportedLineStore {
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

    /// Stores one line of `session` (appended once a batch is full, or by ``flush()``).
    /// - Throws: `ExitCode.failure` when the log cannot be appended to (reported).
    mutating func store(_ session: String, _ line: [UInt8]) throws {
        lineNumber += 1
        if let sequences = stored[session], let sequence = ImportCommand.sequence(of: line), sequences.contains(sequence) {
            duplicates += 1
            return
        }
        do throws(EventRejection) {
            _ = try line.withBytes { (raw) throws(EventRejection) in
                try parser.parse(raw, lineNumber: lineNumber, receivedAt: currentMicroseconds(), peer: peer, into: &batch)
            }
        } catch {
            // A line the converter wrote that navlog rejects is a bug in the converter.
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
