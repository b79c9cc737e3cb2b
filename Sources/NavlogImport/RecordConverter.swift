/// A converter from one source's records to navlog sessions.
///
/// Each record is handed over parsed; the converter keeps only what it needs of it (a few
/// strings and numbers per observation), so memory follows the number of observations kept,
/// not the size of the input. ``finish()`` returns the sessions in a deterministic order.
public protocol RecordConverter: Sendable {
    /// Converts one record (a top-level JSON value) that begins at `line`.
    /// - Parameters:
    ///   - document: the parsed record.
    ///   - line: its first line in the input, for reports.
    ///   - statistics: counts to update.
    ///   - report: called for each part that could not be imported.
    mutating func convert(_ document: JSONDocument, line: Int, statistics: inout ImportStatistics, report: (ImportIssue) -> Void)

    /// Hands over the sessions read, each with its observations, in order of session id, one
    /// at a time (each is dropped once `body` returns, so they are never all held twice).
    mutating func finish(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows

    /// Hands over the sessions known to be complete already (a Sentry event without a session
    /// tag is a whole session), so that they need not be held until ``finish(statistics:_:)``.
    mutating func takeCompleted(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows
}

extension RecordConverter {
    /// No session is known to be complete before the end of the input.
    public mutating func takeCompleted(statistics: inout ImportStatistics, _ body: (ImportedSession) throws -> Void) rethrows {}
}

extension JSONDocument {
    /// Calls `body` with each record the document holds and the record's JSON path: the
    /// elements of a top-level array (`[0]`, `[1]`, …), which every source may be exported as,
    /// else the document itself (path empty).
    func forEachRecord(_ body: (Node, String) -> Void) {
        if kind(root) == .array {
            for (index, element) in elements(root).enumerated() { body(element, "[\(index)]") }
        } else {
            body(root, "")
        }
    }
}
