import Foundation
import NavlogTesting
import Testing

/// Runs the built `navlog` binary the way a user does, and checks what it prints.
@Suite("navlog ingest, cat and verify end to end")
struct IngestCatEndToEndTests {
    static func canonical(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Integral numbers as `Int64` (navlog stores 3.0 and 3e0 as the integer 3), recursively.
    static func normalized(_ value: Any) -> Any {
        switch value {
        case let dictionary as [String: Any]: return dictionary.mapValues(normalized)
        case let array as [Any]: return array.map(normalized)
        case let number as NSNumber where !(value is Bool) && number.doubleValue.rounded() == number.doubleValue && abs(number.doubleValue) < 9e15:
            return number.int64Value
        default: return value
        }
    }

    @Test("every event type of the corpus comes back from cat as it went in")
    func roundTripEveryType() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            let corpus = TestEnvironment.fixture("corpus/good.jsonl")
            let ingest = try ProcessRunner.navlog(["ingest", "--data-dir", data, corpus.path])
            #expect(ingest.status == 0, "\(ingest.errorOutput)")
            #expect(ingest.output.contains("Stored 190 events"))
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(cat.status == 0, "\(cat.errorOutput)")
            let inputs = try TestEnvironment.lines(of: Data(contentsOf: corpus)).compactMap { line -> [String: Any]? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], object["hello"] == nil else { return nil }
                return object
            }
            let outputs = cat.output.split(separator: "\n")
            #expect(outputs.count == inputs.count)
            var types = Set<String>()
            for (index, (line, input)) in zip(outputs, inputs).enumerated() {
                var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                var want = input
                for key in want.keys where key.hasPrefix("_") { want.removeValue(forKey: key) }
                #expect(object.removeValue(forKey: "_lsn") as? Int == index + 1)
                #expect(object.removeValue(forKey: "_uid") as? Int == Int(getuid()))
                let received = object.removeValue(forKey: "_recv") as? Int64
                for key in ["_gid", "_pid"] { #expect(object.removeValue(forKey: key) != nil) }
                let ts = try #require(object.removeValue(forKey: "ts") as? Int64)
                switch want.removeValue(forKey: "ts") {
                case nil:
                    #expect(ts == received, "event \(index + 1): a missing ts is the receive time")
                case let text as String:
                    // RFC 3339 text becomes µs; Foundation parses to the second here, the codec's
                    // own tests check the fraction exactly.
                    let formatter = ISO8601DateFormatter()
                    formatter.formatOptions = [.withInternetDateTime]
                    let withoutFraction = text.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression)
                    let date = try #require(formatter.date(from: withoutFraction), "\(text)")
                    #expect(ts / 1_000_000 == Int64(date.timeIntervalSince1970.rounded(.down)), "event \(index + 1): \(text)")
                case let number:
                    #expect(Self.normalized(number) as? Int64 == ts)
                }
                types.insert(object["type"] as! String)
                #expect(try Self.canonical(Self.normalized(object)) == Self.canonical(Self.normalized(want)), "event \(index + 1)")
            }
            #expect(types.count == 31, "the corpus covers every event type: \(types.sorted())")
            // Ingesting cat's output again (trusted fields are ignored on input) gives the same events.
            let again = dir.appendingPathComponent("again").path
            let copy = dir.appendingPathComponent("copy.jsonl")
            try cat.standardOutput.write(to: copy)
            // cat adds the trusted fields, so the corpus's 64 KiB line needs a larger limit.
            #expect(try ProcessRunner.navlog(["ingest", "--data-dir", again, "--max-line-bytes", "131072", copy.path]).status == 0)
            let second = try ProcessRunner.navlog(["cat", "--data-dir", again]).output.split(separator: "\n")
            let strip = { (line: Substring) throws -> String in
                var object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
                for key in ["_recv", "_pid"] { object.removeValue(forKey: key) }
                return try Self.canonical(object)
            }
            #expect(try second.map(strip) == outputs.map(strip))
        }
    }

    @Test("bad lines are each rejected with their own message while the good lines around them are stored")
    func badLinesBetweenGoodOnes() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let good = try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl")))
                .filter { $0.first == UInt8(ascii: "{") && !String(decoding: $0, as: UTF8.self).contains("\"hello\"") }
            let bad = try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/bad.jsonl")))
            let expectations = try String(contentsOf: TestEnvironment.fixture("corpus/bad.expected"), encoding: .utf8)
                .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            #expect(bad.count >= 50)
            // Alternate: good, bad, good, bad ... so each bad line sits between stored ones.
            var mixed: [UInt8] = []
            var badLineNumbers: [Int] = []
            var goodCount = 0
            var lineNumber = 0
            for (index, badLine) in bad.enumerated() {
                mixed += good[index % good.count] + [0x0A]
                goodCount += 1
                lineNumber += 1
                mixed += badLine + [0x0A]
                lineNumber += 1
                badLineNumbers.append(lineNumber)
            }
            mixed += good[0] + [0x0A]
            goodCount += 1
            let file = dir.appendingPathComponent("mixed.jsonl")
            try Data(mixed).write(to: file)
            let data = dir.appendingPathComponent("data").path
            let ingest = try ProcessRunner.navlog(["ingest", "--data-dir", data, file.path])
            #expect(ingest.status == 1, "rejections make ingest exit 1")
            #expect(ingest.output.contains("Stored \(goodCount) events"))
            #expect(ingest.output.contains("\(bad.count) lines rejected"))
            let messages = ingest.errorOutput.split(separator: "\n").map(String.init)
            #expect(messages.count == bad.count)
            for (index, message) in messages.enumerated() where index < badLineNumbers.count {
                #expect(message.hasPrefix("\(file.path): line \(badLineNumbers[index])"), "\(message)")
                let path = expectations[index][0]
                if path != "-" { #expect(message.contains("field \"\(path)\""), "\(message) should name \(path)") }
            }
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", data])
            #expect(cat.output.split(separator: "\n").count == goodCount)
        }
    }

    @Test("messages say exactly what is wrong and where")
    func exactMessages() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("few.jsonl")
            try Data(
                """
                {"type":"nav.push","session":"s","nav":"0x1"}
                {"type":"nav.push","session":"s","nav":"0x1","vc":{"id":"0x2","class":7}}
                {"type":"present","session":"s","from":"0x1","vc":"0x3","style":"sideways"}
                {"type":"nav.shove","session":"s"}
                {"type":"mark","session":"s","name":"x","props":{"a":[1]}}

                """.utf8
            ).write(to: file)
            let result = try ProcessRunner.navlog(["ingest", "--data-dir", dir.appendingPathComponent("d").path, file.path])
            let lines = result.errorOutput.split(separator: "\n").map { String($0.dropFirst(file.path.count + 2)) }
            #expect(
                lines == [
                    #"line 1, field "vc": a nav.push event needs "vc""#,
                    #"line 2, column 51, field "vc.class": expected a string, found an integer"#,
                    #"line 3, column 65, field "style": "sideways" is not a presentation style; expected one of fullScreen, pageSheet, formSheet, currentContext, overFullScreen, overCurrentContext, popover, custom, automatic"#,
                    #"line 4, column 9, field "type": "nav.shove" is not an event type; see schemas/README.md for the list"#,
                    #"line 5, column 49, field "props.a": expected a string, number or boolean, found an array"#,
                ])
        }
    }

    @Test("verify passes a healthy log and names the segment and offset of damage")
    func verifyReportsDamage() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data")
            #expect(try ProcessRunner.navlog(["ingest", "--data-dir", data.path, TestEnvironment.fixture("corpus/good.jsonl").path]).status == 0)
            let clean = try ProcessRunner.navlog(["verify", "--data-dir", data.path])
            #expect(clean.status == 0)
            #expect(clean.output.hasPrefix("ok: 1 segments, 1 blocks, 190 events, LSNs 1–190"))
            let segment = data.appendingPathComponent("00000000000000000001.zst")
            var bytes = try [UInt8](Data(contentsOf: segment))
            bytes[bytes.count - 40] ^= 0x01
            try Data(bytes).write(to: segment)
            let damaged = try ProcessRunner.navlog(["verify", "--data-dir", data.path])
            #expect(damaged.status == 1)
            #expect(damaged.output.contains("damaged: \(segment.path) at byte "))
            let cat = try ProcessRunner.navlog(["cat", "--data-dir", data.path])
            #expect(cat.status == 1)
            #expect(cat.errorOutput.contains("skipped damaged data"))
            let missing = try ProcessRunner.navlog(["cat", "--data-dir", dir.appendingPathComponent("nope").path])
            #expect(missing.status == 1)
            #expect(missing.errorOutput.contains("There is no data directory at"))
        }
    }
}
