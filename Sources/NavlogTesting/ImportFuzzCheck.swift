import NavlogEvents
public import NavlogImport

/// What the libFuzzer targets of `navlog import` check for each input (one target per source:
/// NavlogFuzzImportSentry, NavlogFuzzImportDatadog, NavlogFuzzImportFirebase).
///
/// The input is read as an export file of `source`, fed in two pieces split at a point the
/// input chooses (so records cut across reads are exercised), then finished. Every reported
/// issue must say where and why; every event line written must pass navlog's own validation
/// (EventLineParser, as `navlog ingest` and navlogd check lines), with `seq` 1, 2, … per
/// session; converting the same input twice must give the same lines (re-import stores
/// nothing). A failure traps, as libFuzzer expects.
public enum ImportFuzzCheck {
    /// Checks one input as an export of `source`.
    public static func run(_ source: ImportSource, _ input: UnsafeRawBufferPointer) {
        let first = convert(source, input)
        let second = convert(source, input)
        guard first.map(\.0) == second.map(\.0), first.map(\.1) == second.map(\.1) else { fatalError("converting the same input twice gave different lines") }
        var parser = EventLineParser()
        var batch = EventBatch()
        var lastSequence: [String: UInt64] = [:]
        for (number, (session, line)) in first.enumerated() {
            do throws(EventRejection) {
                _ = try line.withBytes { (raw) throws(EventRejection) in
                    try parser.parse(raw, lineNumber: number + 1, receivedAt: 0, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
                }
            } catch {
                fatalError("the importer wrote a line navlog rejects: \(error): \(String(decoding: line, as: UTF8.self))")
            }
            guard let sequence = batch.headers.last?.sequence, sequence == (lastSequence[session] ?? 0) + 1 else {
                fatalError("seq of session \(session) does not go 1, 2, …")
            }
            lastSequence[session] = sequence
            if batch.count > 4096 { batch.removeAll() }
        }
    }

    /// The input converted: each line with its session.
    static func convert(_ source: ImportSource, _ input: UnsafeRawBufferPointer) -> [(String, [UInt8])] {
        var importer = Importer(source: source, maximumRecordBytes: 1 << 16)
        let split = input.isEmpty ? 0 : Int(input[0]) % (input.count + 1)
        let report: (ImportIssue) -> Void = { issue in
            guard issue.line >= 1, !issue.reason.isEmpty else { fatalError("an issue without a line or a reason: \(issue)") }
        }
        var lines: [(String, [UInt8])] = []
        importer.feed(UnsafeRawBufferPointer(rebasing: input[..<split]), report: report)
        try! importer.writeCompleted { session, line in lines.append((session, line)) }
        importer.feed(UnsafeRawBufferPointer(rebasing: input[split...]), report: report)
        importer.endFile(report: report)
        try! importer.finish { session, line in lines.append((session, line)) }
        let statistics = importer.statistics
        guard statistics.events == lines.count else { fatalError("the statistics count \(statistics.events) events, \(lines.count) were written") }
        return lines
    }
}
