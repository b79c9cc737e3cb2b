/// Where one record (or one element of a record) is, for its reports: the Datadog and Firebase
/// converters check a record's first fields the same way and word their issues alike.
struct RecordIssues {
    /// The parsed record.
    let document: JSONDocument
    /// The JSON path of this element inside the record (empty for the record itself).
    let path: String
    /// The line the record begins on.
    let line: Int
    /// What is skipped, in the reasons ("the event", "the row").
    let skipped: String

    /// An issue at `node`, `field` being its path below this element.
    func issue(_ code: ImportIssue.Code, _ node: JSONDocument.Node, _ field: String, _ reason: String) -> ImportIssue {
        let at = path.isEmpty ? field : field.isEmpty ? path : path + "." + field
        return ImportIssue(code: code, line: line + document.lineOffset(of: document.offset(node)), path: at, reason: reason + "; \(skipped) was skipped")
    }

    /// The string value of `key` in the object `record`, or the issue saying why there is none
    /// (the record is no object, has no such key, or its value is no string).
    /// - Parameter kind: what the record should be, for the message ("a RUM event").
    func stringMember(_ record: JSONDocument.Node, _ key: String, of kind: String) -> Result<String, ImportIssue> {
        guard document.kind(record) == .object else {
            return .failure(issue(.shape, record, "", "expected \(kind) (an object), found \(document.kind(record).name)"))
        }
        guard let node = document.member(record, key) else { return .failure(issue(.shape, record, key, "\(skipped) has no \(key)")) }
        guard let text = document.string(node) else { return .failure(issue(.shape, node, key, "expected a string, found \(document.kind(node).name)")) }
        return .success(text)
    }
}
