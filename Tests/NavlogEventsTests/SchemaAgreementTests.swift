import Foundation
import NavlogEvents
import NavlogTesting
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
}
