import Foundation
import NavlogEvents
import NavlogTesting
import NavlogWorkload
import Testing

/// The Swift codec and the JSON Schema (checked by Python's `jsonschema`) must accept and
/// reject exactly the same lines: the schema is the contract apps and other readers rely on.
@Suite("The codec agrees with the JSON Schema")
struct SchemaAgreementTests {
    struct Verdict: Decodable {
        var line: Int
        var ok: Bool
        var field: String?
        var kind: String?
        var hello: Bool?
    }

    static func pythonVerdicts(for file: URL) throws -> [Int: Verdict] {
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", TestEnvironment.packageRoot.appendingPathComponent("tools/schema-check.py").path, file.path]
        )
        guard result.status == 0 else {
            Issue.record("tools/schema-check.py failed (is python3-jsonschema installed?): \(result.errorOutput)")
            return [:]
        }
        var verdicts: [Int: Verdict] = [:]
        for line in result.output.split(separator: "\n") {
            let verdict = try JSONDecoder().decode(Verdict.self, from: Data(line.utf8))
            verdicts[verdict.line] = verdict
        }
        return verdicts
    }

    /// Parses every line of `file`; returns line number → nil (accepted) or the rejection.
    static func swiftVerdicts(for file: URL) throws -> [Int: EventRejection?] {
        var parser = EventLineParser()
        var batch = EventBatch()
        var verdicts: [Int: EventRejection?] = [:]
        for (index, line) in TestEnvironment.lines(of: try Data(contentsOf: file)).enumerated() {
            let number = index + 1
            let outcome: Result<EventLineParser.Line, EventRejection> = line.withUnsafeBytes { raw in
                do throws(EventRejection) {
                    return .success(try parser.parse(raw, lineNumber: number, receivedAt: 1, peer: PeerCredentials(uid: 1, gid: 1, pid: 1), into: &batch))
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let kind): if kind != .blank { verdicts[number] = .some(nil) }
            case .failure(let rejection): verdicts[number] = .some(rejection)
            }
        }
        return verdicts
    }

    @Test("every good line is accepted by both")
    func goodLines() throws {
        let file = TestEnvironment.fixture("corpus/good.jsonl")
        let python = try Self.pythonVerdicts(for: file)
        let swift = try Self.swiftVerdicts(for: file)
        #expect(python.count >= 120)
        #expect(Set(python.keys) == Set(swift.keys))
        for (line, verdict) in python.sorted(by: { $0.key < $1.key }) {
            #expect(verdict.ok, "schema rejects good line \(line)")
            if let rejection = swift[line] ?? nil {
                Issue.record("codec rejects good line \(line): \(rejection)")
            }
        }
    }

    @Test("every bad line is rejected by both, for the same field and reason")
    func badLines() throws {
        let file = TestEnvironment.fixture("corpus/bad.jsonl")
        let expected = try String(contentsOf: TestEnvironment.fixture("corpus/bad.expected"), encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let python = try Self.pythonVerdicts(for: file)
        let swift = try Self.swiftVerdicts(for: file)
        #expect(expected.count >= 50)
        #expect(python.count == expected.count)
        for (index, expectation) in expected.enumerated() {
            let line = index + 1
            #expect(python[line]?.ok == false, "schema accepts bad line \(line)")
            guard let verdict = swift[line] else {
                Issue.record("codec skipped bad line \(line)")
                continue
            }
            guard let rejection = verdict else {
                Issue.record("codec accepts bad line \(line), expected \(expectation)")
                continue
            }
            let path = rejection.path ?? "-"
            #expect(
                [path, rejection.code.name] == expectation,
                "line \(line): codec says \(path) \(rejection.code.name) (\(rejection.reason)), expected \(expectation.joined(separator: " "))"
            )
            #expect(rejection.line == line)
        }
    }

    @Test("on 5,000 randomly damaged lines the codec and the schema give the same verdict")
    func mutatedLines() throws {
        let good = try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl")))
            .filter { $0.count < 4096 && $0.first == UInt8(ascii: "{") }
        var random = SplitMix64(seed: 77)
        var lines: [[UInt8]] = []
        while lines.count < 5000 {
            var line = good[Int(random.next() % UInt64(good.count))]
            switch random.next() % 4 {
            case 0:
                let bit = Int(random.next() % UInt64(line.count * 8))
                line[bit / 8] ^= 1 << UInt8(bit % 8)
            case 1:
                line.insert(UInt8(truncatingIfNeeded: random.next() % 128), at: Int(random.next() % UInt64(line.count + 1)))
            case 2:
                line.remove(at: Int(random.next() % UInt64(line.count)))
            default:
                line.removeLast(Int(random.next() % UInt64(line.count)))
            }
            // A damaged line must stay one line (and not become blank) for the comparison.
            if line.contains(0x0A) || line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            lines.append(line)
        }
        try TestEnvironment.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("mutated.jsonl")
            try Data(lines.flatMap { $0 + [0x0A] }).write(to: file)
            let python = try Self.pythonVerdicts(for: file)
            let swift = try Self.swiftVerdicts(for: file)
            var disagreements: [String] = []
            // Hello lines are transport, outside the event schema (the codec also checks their
            // ack mode; the schema checker passes any hello).
            for number in 1...lines.count where python[number]?.hello != true {
                let schemaAccepts = python[number]?.ok ?? true
                let codecAccepts = (swift[number] ?? nil) == nil
                if schemaAccepts != codecAccepts {
                    disagreements.append(
                        "line \(number): schema \(schemaAccepts ? "accepts" : "rejects"), codec \(codecAccepts ? "accepts" : "rejects (\((swift[number] ?? nil).map { "\($0)" } ?? ""))"): \(String(decoding: lines[number - 1].prefix(200), as: UTF8.self))"
                    )
                }
            }
            #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(5).joined(separator: "\n"))")
        }
    }
}
