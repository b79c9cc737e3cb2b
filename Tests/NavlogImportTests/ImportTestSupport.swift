import Foundation
import NavlogEvents
import NavlogImport
import NavlogTesting
import Testing

/// What converting some input gave: each line summarised, the issues, the counts.
struct Converted {
    var lines: [String]
    var raw: [[UInt8]]
    var issues: [ImportIssue]
    var statistics: ImportStatistics
}

enum ImportTestSupport {
    /// A fixture of `Tests/Fixtures/import`.
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestEnvironment.fixture("import/" + name)))
    }

    /// Converts `input` as one file fed in pieces of `chunk` bytes, every line checked by
    /// navlog's own validator, and summarised relative to `base` (µs) as
    /// `seq +ms type detail` (see ``summary(_:base:)``).
    /// With `writeCompleted`, sessions already complete are written after each piece, as
    /// `navlog import` does (their lines then come first, in the order they were read).
    static func convert(
        _ source: ImportSource, _ input: [UInt8], base: Int64, chunk: Int = 4096, maximumRecordBytes: Int = 32 << 20, writeCompleted: Bool = false,
        maximumHeldCrumbs: Int = 1 << 18
    ) throws -> Converted {
        var importer = Importer(source: source, maximumRecordBytes: maximumRecordBytes, maximumHeldCrumbs: maximumHeldCrumbs)
        var issues: [ImportIssue] = []
        var offset = 0
        var raw: [[UInt8]] = []
        var sessions: [String] = []
        repeat {
            let end = min(input.count, offset + chunk)
            input[offset..<end].withUnsafeBytes { importer.feed($0) { issues.append($0) } }
            if writeCompleted {
                try importer.writeCompleted { session, line in
                    raw.append(line)
                    sessions.append(session)
                }
            }
            offset = end
        } while offset < input.count
        importer.endFile { issues.append($0) }
        try importer.finish { session, line in
            raw.append(line)
            sessions.append(session)
        }
        var parser = EventLineParser()
        var batch = EventBatch()
        var lines: [String] = []
        for (index, line) in raw.enumerated() {
            do throws(EventRejection) {
                _ = try parser.parse(String(decoding: line, as: UTF8.self), lineNumber: index + 1, into: &batch)
            } catch {
                Issue.record("line \(index + 1) rejected by navlog: \(error): \(String(decoding: line, as: UTF8.self))")
            }
            lines.append(try summary(line, base: base))
        }
        return Converted(lines: lines, raw: raw, issues: issues, statistics: importer.statistics)
    }

    /// `seq +ms type detail`: the detail names the controllers (`vc`, `from→vc`) or, for
    /// `session.start`, the session and its fields; for `mark`, its source.
    static func summary(_ line: [UInt8], base: Int64) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        let type = try #require(object["type"] as? String)
        let seq = try #require(object["seq"] as? Int)
        let ts = try #require((object["ts"] as? NSNumber)?.int64Value)
        func id(_ key: String) -> String {
            guard let ref = object[key] as? [String: Any] else { return "?" }
            let title = (ref["title"] as? String).map { " “\($0)”" } ?? ""
            return "\(ref["id"] as? String ?? "?")\(title)"
        }
        var detail: String
        switch type {
        case "session.start":
            let session = object["session"] as? String ?? "?"
            detail = ([session] + ["app", "version", "os", "device"].compactMap { key in (object[key] as? String).map { "\(key)=\($0)" } }).joined(separator: " ")
        case "mark":
            let props = object["props"] as? [String: Any] ?? [:]
            detail = "\(object["name"] as? String ?? "?") source=\(props["source"] as? String ?? "?")"
        case "present": detail = "\(id("from"))→\(id("vc"))"
        case "vc.appear", "vc.disappear": detail = "\(id("vc")) \(object["phase"] as? String ?? "?")"
        case "window.root", "dismiss": detail = id("vc")
        default: detail = ""
        }
        let ms = Double(ts - base) / 1000
        let time = ms == ms.rounded() ? String(Int64(ms)) : String(ms)
        return "\(seq) +\(time) \(type)\(detail.isEmpty ? "" : " " + detail)"
    }
}
