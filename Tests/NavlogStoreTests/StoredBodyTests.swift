import Foundation
import NavlogEvents
import NavlogStore
import NavlogTesting
import Testing

/// What the replayer and analytics read from stored events must be what apps sent.
@Suite("Reading fields of stored events")
struct StoredBodyTests {
    static func text(_ bytes: UnsafeRawBufferPointer?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The id of a JSON controller reference (bare string or object).
    static func id(_ json: Any) -> String? {
        (json as? String) ?? ((json as? [String: Any])?["id"] as? String)
    }

    @Test("every field of every corpus event reads back as sent: strings, numbers, booleans, references, lists")
    func fieldsReadBack() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let inputs = try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl"))).compactMap { line -> [String: Any]? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], object["hello"] == nil else { return nil }
                return object
            }
            var parser = EventLineParser()
            var batch = EventBatch()
            for (index, line) in try TestEnvironment.lines(of: Data(contentsOf: TestEnvironment.fixture("corpus/good.jsonl"))).enumerated() {
                _ = try? line.withUnsafeBytes { try parser.parse($0, lineNumber: index + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
            }
            let log = try EventLog(directory: dir.path)
            try log.append(batch)
            try log.close()
            var position = 0
            var checked = 0
            try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                let input = inputs[position]
                position += 1
                try block.withBody(index) { body in
                    for (key, value) in input where !key.hasPrefix("_") && !["type", "session", "ts", "seq"].contains(key) {
                        guard let name = FieldName.allCases.first(where: { $0.name == key }) else {
                            Issue.record("unexpected key \(key)")
                            continue
                        }
                        guard let stored = body.field(name) else {
                            Issue.record("event \(position): \(key) is missing")
                            continue
                        }
                        checked += 1
                        switch value {
                        case let text as String:
                            #expect(stored.string == text, "event \(position) \(key)")
                            if ["vc", "nav", "from", "tab", "split", "source", "destination", "target", "parent", "primary", "secondary", "supplementary"].contains(key) {
                                #expect(Self.text(ControllerReference(stored)?.id) == text)
                            }
                        case let object as [String: Any] where object["id"] != nil:
                            let reference = try #require(ControllerReference(stored))
                            #expect(Self.text(reference.id) == object["id"] as? String)
                            #expect(Self.text(reference.className) == object["class"] as? String)
                            #expect(Self.text(reference.kind) == object["kind"] as? String)
                            #expect(reference.definesContext == object["definesContext"] as? Bool)
                        case let list as [Any]:
                            let elements = stored.elements
                            #expect(elements.count == list.count)
                            for (element, json) in zip(elements, list) where Self.id(json) != nil {
                                #expect(Self.text(ControllerReference(element)?.id) == Self.id(json))
                            }
                        case let number as NSNumber where ["animated", "byUser", "result", "interactive", "completed"].contains(key):
                            // Booleans by the schema (Foundation on Linux boxes them as numbers).
                            #expect(stored.bool == number.boolValue, "event \(position) \(key)")
                        case let number as NSNumber where number.doubleValue == number.doubleValue.rounded() && abs(number.doubleValue) < 9e15:
                            #expect(stored.integer == number.int64Value, "event \(position) \(key)")
                        case is NSNull:
                            #expect(stored.isNull)
                        default:
                            break
                        }
                    }
                    // A field the event does not have reads as nil.
                    if input["slot"] == nil { #expect(body.field(.slot) == nil) }
                }
                return true
            }
            #expect(position == inputs.count)
            #expect(checked > 500)
        }
    }

    @Test("damaged bodies read as nil, never as a crash")
    func damagedBodies() {
        let strings: [UInt8] = Array("abc".utf8)
        let ends: [UInt32] = [3]
        strings.withUnsafeBytes { raw in
            ends.withUnsafeBufferPointer { endBuffer in
                let table = StringTable(bytes: raw, ends: endBuffer)
                for tokens: [UInt8] in [
                    [], [1], [1, 5], [1, 1, 17], [1, 1, 17, 3, 9], [1, 1, 17, 2, 200, 1], [9, 9, 9], [1, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 1],
                ] {
                    tokens.withUnsafeBytes { bytes in
                        let body = StoredBody(tokens: bytes, strings: table)
                        _ = body.field(.vc)?.string
                        _ = body.controller(.vc)
                        _ = body.field(.vcs)?.elements
                    }
                }
            }
        }
    }

    @Test("a controller reference in object form reads each member as a member lookup does: the first of a repeated one, past unknown keys, in any order")
    func referenceMembersReadInOnePass() throws {
        // Strings: 0 "vc1", 1 "Cls", 2 "nav", 3 "Other", 4 "extra", 5 "Title", 6 "goBack".
        let strings: [UInt8] = Array("vc1ClsnavOtherextraTitlegoBack".utf8)
        let ends: [UInt32] = [3, 6, 9, 14, 19, 24, 30]
        let string = BodyToken.string.rawValue
        // {title: "Title", <unknown "extra">: [1, {}], class: "Cls", id: "vc1", kind: "nav",
        //  class: "Other", definesContext: true, unwindActions: ["goBack"], id: "Other"}
        let tokens: [UInt8] =
            [BodyToken.object.rawValue, 1, FieldName.vc.rawValue, BodyToken.object.rawValue, 9]
            + [FieldName.title.rawValue, string, 5]
            + [BodyToken.unknownKey, 4, BodyToken.array.rawValue, 2, BodyToken.integer.rawValue, 2, BodyToken.object.rawValue, 0]
            + [FieldName.class.rawValue, string, 1] + [FieldName.id.rawValue, string, 0] + [FieldName.kind.rawValue, string, 2]
            + [FieldName.class.rawValue, string, 3] + [FieldName.definesContext.rawValue, BodyToken.true.rawValue]
            + [FieldName.unwindActions.rawValue, BodyToken.array.rawValue, 1, string, 6] + [FieldName.id.rawValue, string, 3]
        try strings.withUnsafeBytes { raw in
            try ends.withUnsafeBufferPointer { endBuffer in
                try tokens.withUnsafeBytes { bytes in
                    let table = StringTable(bytes: raw, ends: endBuffer)
                    let object = try #require(StoredBody(tokens: bytes, strings: table).field(.vc))
                    let reference = try #require(ControllerReference(object))
                    #expect(Self.text(reference.id) == "vc1")
                    #expect(Self.text(reference.className) == "Cls")
                    #expect(Self.text(reference.className) == Self.text(object.member(.class)?.bytes))
                    #expect(Self.text(reference.kind) == "nav")
                    #expect(Self.text(reference.title) == "Title")
                    #expect(reference.storyboardID == nil)
                    #expect(reference.definesContext == true)
                    #expect(reference.unwindActions?.elements.compactMap(\.string) == ["goBack"])
                    // Cut short after the title: what was read before the damage is kept, nothing after.
                    let cut = UnsafeRawBufferPointer(rebasing: bytes[0..<10])
                    let damaged = try #require(StoredBody(tokens: cut, strings: table).field(.vc))
                    #expect(damaged.member(.title)?.string == "Title")
                    #expect(damaged.member(.class) == nil)
                    #expect(ControllerReference(damaged) == nil)
                }
            }
        }
    }
}
