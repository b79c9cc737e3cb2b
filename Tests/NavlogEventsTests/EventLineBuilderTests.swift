import NavlogEvents
import Testing

/// An event built with `EventLineBuilder` must be stored exactly as the JSON line it stands for
/// (the tokenizer's tokens are the oracle), and be refused for the same reasons.
@Suite("Events built without JSON text")
struct EventLineBuilderTests {
    static let peer = PeerCredentials(uid: 1, gid: 2, pid: 3)

    /// The batch the parser makes of `line`.
    static func parsed(_ line: String) throws -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        _ = try parser.parse(line, lineNumber: 7, receivedAt: 99, peer: peer, into: &batch)
        return batch
    }

    /// The batch the parser makes of what `fill` builds.
    static func built(_ fill: (inout EventLineBuilder) -> Void) throws(EventRejection) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        _ = try parser.parse(lineNumber: 7, receivedAt: 99, peer: peer, into: &batch, building: fill)
        return batch
    }

    @Test("known and unknown keys, nested objects, strings that JSON escapes and integers are stored as the line's")
    func sameAsTheLine() throws {
        let line = #"""
            {"type":"vc.appear","session":"s-\u00e9\"1","ts":1714680913810123,"seq":42,"vc":{"id":"Cart#3","class":"CartViewController","title":"Tab\t\"cart\" ✓"},"phase":"did","_note":"ignored"}
            """#
        let built = try Self.built { line in
            line.key("type")
            line.string("vc.appear")
            line.key("session")
            line.string("s-é\"1")
            line.key("ts")
            line.integer(Int64(1_714_680_913_810_123))
            line.key("seq")
            line.integer(UInt64(42))
            line.key("vc")
            line.beginObject()
            line.key("id")
            line.string("Cart#3")
            line.key("class")
            line.string("CartViewController")
            line.key("title")
            line.string("Tab\t\"cart\" ✓")
            line.endObject()
            line.key("phase")
            line.string("did")
            line.key("_note")
            line.string("ignored")
        }
        let parsed = try Self.parsed(line)
        #expect(built.bytes == parsed.bytes)
        #expect(built.headers == parsed.headers)
        #expect(built.headers.first?.sequence == 42)
    }

    @Test("a mark's props with keys that are not field names, and a negative integer")
    func props() throws {
        let line = #"{"type":"mark","session":"s","ts":5,"seq":1,"name":"import","props":{"source":"sentry","sourceSession":"abc","n":-12}}"#
        let built = try Self.built { line in
            line.key("type")
            line.string("mark")
            line.key("session")
            line.string("s")
            line.key("ts")
            line.integer(Int64(5))
            line.key("seq")
            line.integer(UInt64(1))
            line.key("name")
            line.string("import")
            line.key("props")
            line.beginObject()
            line.key("source")
            line.string("sentry")
            line.key("sourceSession")
            line.string("abc")
            line.key("n")
            line.integer(Int64(-12))
            line.endObject()
        }
        let parsed = try Self.parsed(line)
        #expect(built.bytes == parsed.bytes)
        #expect(built.headers == parsed.headers)
    }

    @Test("a built event is validated as a line is: a missing field is refused with the same code and path")
    func validated() throws {
        let line = #"{"type":"nav.push","session":"s","ts":5}"#
        let lineRejection = #expect(throws: EventRejection.self) { _ = try Self.parsed(line) }
        let builtRejection = #expect(throws: EventRejection.self) {
            _ = try Self.built { line in
                line.key("type")
                line.string("nav.push")
                line.key("session")
                line.string("s")
                line.key("ts")
                line.integer(Int64(5))
            }
        }
        #expect(builtRejection?.code == lineRejection?.code)
        #expect(builtRejection?.path == lineRejection?.path)
        #expect(builtRejection?.line == 7)
        #expect(builtRejection?.column == nil)
    }
}
