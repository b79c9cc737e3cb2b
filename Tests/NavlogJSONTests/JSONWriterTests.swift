import NavlogJSON
import Testing

@Suite("JSONWriter")
struct JSONWriterTests {
    private func text(_ write: (inout JSONWriter) -> Void, controlEscapes: JSONWriter.ControlEscapes = .unicode) -> String {
        var json = JSONWriter(controlEscapes: controlEscapes)
        write(&json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    @Test("strings are written as valid JSON, whatever they contain; non-ASCII and DEL pass through")
    func escaping() {
        let written = text { json in json.string("q\"b\\n\n\t\r\u{01}\u{08}\u{0C}\u{1F}\u{7F}é😀") }
        #expect(written == #""q\"b\\n\n\t\r\u0001\u0008\u000c\u001f"# + "\u{7F}é😀\"")
    }

    @Test("the generator's short forms write backspace and form feed as \\b and \\f, other controls alike")
    func shortForms() {
        let written = text({ json in json.string("\u{08}\u{0C}\u{01}\n\"") }, controlEscapes: .shortForms)
        #expect(written == #""\b\f\u0001\n\"""#)
    }

    @Test("static, optional and raw-byte strings escape the same way")
    func stringForms() {
        let bytes: [UInt8] = Array("a\"b".utf8)
        let written = text { json in
            json.string("a\"b" as StaticString)
            json.string(nil as String?)
            bytes.withUnsafeBytes { json.string(utf8: $0) }
            json.string("" as String)
        }
        #expect(written == #""a\"b""# + "null" + #""a\"b""# + #""""#)
    }

    @Test("integers in decimal at both ends of their range; nil is null")
    func integers() {
        let written = text { json in
            json.integer(Int64.min)
            json.byte(0x20)
            json.integer(UInt64.max)
            json.byte(0x20)
            json.integer(Int32(-7))
            json.byte(0x20)
            json.integer(0)
            json.byte(0x20)
            json.integer(nil as Int?)
        }
        #expect(written == "-9223372036854775808 18446744073709551615 -7 0 null")
    }

    @Test("doubles as Swift prints them; not finite is null")
    func doubles() {
        let values: [Double] = [0.5, 1, 1e-5, 123456789.125, -0.0, 1e300, .infinity, .nan]
        let written = text { json in json.array(values) { json, value in json.number(value) } }
        #expect(written == "[0.5,1.0,1e-05,123456789.125,-0.0,1e+300,null,null]")
        #expect(written == "[" + values.map { $0.isFinite ? "\($0)" : "null" }.joined(separator: ",") + "]")
    }

    @Test("keys and members: a comma before all but the first, run-time names escaped")
    func members() {
        let written = text { json in
            json.byte(UInt8(ascii: "{"))
            json.key("a", first: true)
            json.integer(1)
            json.member("b", "x")
            json.member("c", nil as String?)
            json.member("d", true)
            json.member("e", 2.5)
            json.member("f", json: Array("[1]".utf8))
            json.member("g", UInt8(9))
            json.key(escaping: "h\"")
            json.null()
            json.byte(UInt8(ascii: "}"))
        }
        #expect(written == #"{"a":1,"b":"x","c":null,"d":true,"e":2.5,"f":[1],"g":9,"h\"":null}"#)
    }

    @Test("object and members write each value as it writes itself, in order; a row type's array uses its own encoding")
    func objects() {
        struct Row: JSONWritable {
            var name: String
            var count: Int
            func appendJSON(to json: inout JSONWriter) { json.object(("name", name), ("count", count)) }
        }
        let written = text { json in
            json.object(("a", 1), ("b", "x\""), ("c", nil as String?), ("d", true), ("e", 2.5), ("f", Int64(-3)), ("g", UInt64(4)), ("h", Optional(5)))
            json.raw(" {")
            json.members(first: true, ("i", 6))
            json.members(("j", [Row(name: "r", count: 1)].isEmpty))
            json.raw("} ")
            json.array([Row(name: "r", count: 1), Row(name: "s", count: 2)])
        }
        #expect(written == #"{"a":1,"b":"x\"","c":null,"d":true,"e":2.5,"f":-3,"g":4,"h":5} {"i":6,"j":false} [{"name":"r","count":1},{"name":"s","count":2}]"#)
    }

    @Test("appending(to:) writes after what the buffer holds and gives it back")
    func appending() {
        var buffer: [UInt8] = Array("x=".utf8)
        let count = JSONWriter.appending(to: &buffer) { json in
            json.string("y")
            return json.bytes.count
        }
        #expect(count == 5)
        #expect(String(decoding: buffer, as: UTF8.self) == #"x="y""#)
    }
}
