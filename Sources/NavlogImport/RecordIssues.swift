/// Where one record (or one element of a record) is, for its reports: the three converters
/// locate a problem in a record the same way (the line it is on, its JSON path below the
/// record), and the Datadog and Firebase converters check a record's first fields alike and
/// word their issues alike.
struct RecordIssues {
    /// The parsed record.
    let document: JSONDocument
    /// The JSON path of this element inside the record (empty for the record itself).
    let path: String
    /// The line the record begins on.
    let line: Int
    /// What is skipped, in the reasons ("the event", "the row").
    let skipped: String

    /// An issue at `node`, `field` being its path below this element; the reason ends by saying
    /// that ``skipped`` was skipped.
    func issue(_ code: ImportIssue.Code, _ node: JSONDocument.Node, _ field: String, _ reason: String) -> ImportIssue {
        located(code, node, field, reason + "; \(skipped) was skipped")
    }

    /// An issue at `node` whose reason already says what was skipped: Sentry's reasons name
    /// the event, the entry or the breadcrumb, which one depends on where the problem is.
    func located(_ code: ImportIssue.Code, _ node: JSONDocument.Node, _ field: String, _ reason: String) -> ImportIssue {
        // An index follows its array's path without a dot (`[2][0]`), a member's name with one (`[2].breadcrumbs`).
        let at = path.isEmpty ? field : field.isEmpty ? path : path + (field.hasPrefix("[") ? "" : ".") + field
        return ImportIssue(code: code, line: line + document.lineOffset(of: document.offset(node)), path: at, reason: reason)
    }

    /// The node of the string value of `key` in the object `record` (no string is made).
    /// - Parameter kind: what the record should be, for the message ("a RUM event").
    /// - Throws: the issue saying why there is none (the record is no object, has no such key,
    ///   or its value is no string).
    func stringNode(_ record: JSONDocument.Node, _ key: StaticString, of kind: String) throws(ImportIssue) -> JSONDocument.Node {
        guard document.kind(record) == .object else {
            throw issue(.shape, record, "", "expected \(kind) (an object), found \(document.kind(record).name)")
        }
        guard let node = document.member(record, key) else { throw issue(.shape, record, "\(key)", "\(skipped) has no \(key)") }
        guard document.kind(node) == .string else { throw issue(.shape, node, "\(key)", "expected a string, found \(document.kind(node).name)") }
        return node
    }

    /// The time at `node` (µs since the epoch), read in `unit`.
    /// - Parameter field: the node's path below this element, for the message.
    /// - Throws: the issue saying why it cannot be read.
    func timestamp(_ node: JSONDocument.Node, _ field: String, unit: ImportTimestamp.Unit) throws(ImportIssue) -> Int64 {
        switch ImportTimestamp.microseconds(document, node, unit: unit) {
        case .success(let value): return value
        case .failure(let error): throw issue(.timestamp, node, field, error.reason)
        }
    }
}

extension ImportStatistics {
    /// Counts the record (or the part of one) `issue` is about as skipped, and reports it.
    mutating func skip(_ issue: ImportIssue, _ report: (ImportIssue) -> Void) {
        skipped += 1
        report(issue)
    }
}
