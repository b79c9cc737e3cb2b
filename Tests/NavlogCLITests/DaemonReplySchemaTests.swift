import Foundation
import NavlogTesting
import Testing

/// Every kind of line navlogd writes back on a connection matches schemas/daemon-reply.schema.json.
@Suite("navlogd's replies and the schema", .serialized)
struct DaemonReplySchemaTests {
    static func mark(_ seq: Int, _ session: String = "s") -> String {
        #"{"type":"mark","session":"\#(session)","seq":\#(seq),"name":"n"}"#
    }

    @Test(
        "acks, rejections, rate-limit warnings, store errors, refusals and stats all match schemas/daemon-reply.schema.json",
        .enabled(if: SchemaValidator.isAvailable, "needs Python's jsonschema (tools/setup-deps --test installs it)"))
    func everyReplyKind() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let replies = try Self.provokeEveryReply(in: dir)
            let kinds: [String] = [
                #""ack":"#, #""lsns":"#, #""missing":"#, #""duplicates":1"#, #""error":"rejected""#, #""warning":"rate-limited""#, #""error":"refused""#,
                #""error":"store""#, #""connections":"#,
            ]
            for kind in kinds {
                #expect(replies.contains { $0.contains(kind) }, "no reply with \(kind) was seen: \(replies)")
            }
            let check = try SchemaValidator.validate(lines: replies, schema: "schemas/daemon-reply.schema.json", in: dir)
            #expect(check.status == 0, "\(check.output)\(check.errorOutput)")
        }
    }

    /// Runs navlogd and makes it send every kind of reply; returns them as raw lines.
    static func provokeEveryReply(in dir: URL) throws -> [String] {
        let config = try DaemonEndToEndTests.write(
            Array(#"{"rateLimitIntervalSeconds": 60, "rateLimitBurst": 20, "maximumConnections": 3}"#.utf8), to: dir.appendingPathComponent("c.json"))
        let daemon = try DaemonProcess(directory: dir, arguments: ["--config", config.path])
        defer { _ = daemon.terminate() }
        var replies: [String] = []

        // Acks (durable, with lsns), rejections of several kinds; seq 3 and 4 missing.
        let first = try SocketClient(path: daemon.socket)
        defer { first.close() }
        let lines: [String] = [
            #"{"hello":1,"ack":"durable"}"#, mark(1), mark(2), "{not json", #"{"type":"teleport","session":"s"}"#, mark(5),
            #"{"type":"mark","session":"s","seq":6}"#,
        ]
        try first.send(lines.joined(separator: "\n") + "\n")
        replies += first.readRawUntil { $0.contains(#""ack":7"#) }
        // A resend: duplicates.
        try first.send(mark(1) + "\n")
        replies += first.readRawUntil { $0.contains(#""ack":8"#) }
        // Stats.
        try first.send(#"{"control":"stats"}"# + "\n")
        replies += first.readRawUntil { $0.contains(#""connections""#) }

        // Rate limit warning.
        let second = try SocketClient(path: daemon.socket)
        defer { second.close() }
        try second.send(#"{"hello":1,"ack":"batch"}"# + "\n" + (1...40).map { mark($0, "r") }.joined(separator: "\n") + "\n")
        replies += second.readRawUntil { $0.contains(#""ack":41"#) }

        // Over the connection limit: refused.
        let third = try SocketClient(path: daemon.socket)
        let fourth = try SocketClient(path: daemon.socket)
        replies += fourth.readRawUntil(timeout: 10) { $0.contains("refused") }
        fourth.close()
        third.close()

        // The disk is full: a store error. navlogd may not have seen `third` close yet (a busy
        // machine): a connection it refuses, or closes before the send, is tried again.
        try daemon.setFileSizeLimit(1)
        let deadline = Date().addingTimeInterval(20)
        while true {
            let fifth = try SocketClient(path: daemon.socket)
            defer { fifth.close() }
            do {
                try fifth.send(#"{"hello":1,"ack":"batch"}"# + "\n" + mark(1, "full") + "\n")
            } catch  where Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            let got = fifth.readRawUntil { $0.contains(#""error":"store""#) || $0.contains("refused") }
            if got.contains(where: { $0.contains("refused") }), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            replies += got
            break
        }
        try daemon.setFileSizeLimit(nil)
        return replies
    }
}

extension SocketClient {
    /// Reads raw reply lines until one satisfies `predicate` (or time runs out).
    func readRawUntil(timeout: Double = 30, _ predicate: (String) -> Bool) -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let line = readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            lines.append(line)
            if predicate(line) { break }
        }
        return lines
    }
}

/// Validates JSON lines against a schema of this package with Python's `jsonschema`.
enum SchemaValidator {
    static var isAvailable: Bool {
        (try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import jsonschema"]).status) == 0
    }

    static func validate(lines: [String], schema: String, in directory: URL) throws -> ProcessResult {
        let file = directory.appendingPathComponent("lines-\(UUID().uuidString).jsonl")
        try lines.map { $0 + "\n" }.joined().write(to: file, atomically: true, encoding: .utf8)
        return try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import json, sys, jsonschema
                validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
                bad = 0
                for number, line in enumerate(open(sys.argv[2]), 1):
                    for error in validator.iter_errors(json.loads(line)):
                        bad += 1
                        print(f"line {number}: {line.strip()[:200]}: {error.json_path}: {error.message}")
                sys.exit(1 if bad else 0)
                """,
                TestEnvironment.packageRoot.appendingPathComponent(schema).path, file.path,
            ])
    }
}
