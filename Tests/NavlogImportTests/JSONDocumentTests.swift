import NavlogImport
import Testing

@Suite("JSONDocument: the record reader")
struct JSONDocumentTests {
    @Test("members, arrays, escapes and numbers are read as written")
    func readsValues() throws {
        let document = try JSONDocument(parsing: Array(#"{"a":{"b":[1,"x\u00e9\n",true,null]},"k\"ey":-2.5e1}"#.utf8))
        let b = try #require(document.member(document.root, path: ["a", "b"]))
        let items = document.elements(b)
        #expect(items.count == 4)
        #expect(document.number(items[0]) == 1)
        #expect(document.string(items[1]) == "xé\n")
        #expect(document.bool(items[2]) == true)
        #expect(document.kind(items[3]) == .null)
        #expect(document.member(document.root, "k\"ey").flatMap { document.number($0) } == -25)
        #expect(document.member(document.root, "missing") == nil)
    }

    @Test("plain integers are read from their bytes; longer, fractional or signed-with-plus ones fall back to their text")
    func integers() throws {
        let document = try JSONDocument(
            parsing: Array(#"{"a":123,"b":-45,"c":12345678901234567890,"d":1.5,"e":"678","f":"-9","g":"+9","h":"1e3","i":0}"#.utf8))
        func node(_ key: String) throws -> JSONDocument.Node { try #require(document.member(document.root, named: key)) }
        #expect(document.integer(try node("a")) == 123)
        #expect(document.integer(try node("b")) == -45)
        #expect(document.integer(try node("c")) == nil)
        #expect(document.number(try node("c")) == 12_345_678_901_234_567_890)
        #expect(document.integer(try node("d")) == nil)
        #expect(document.number(try node("d")) == 1.5)
        #expect(document.integer(try node("e")) == nil)
        #expect(document.digitString(try node("e")) == 678)
        #expect(document.digitString(try node("f")) == -9)
        #expect(document.digitString(try node("g")) == nil)
        #expect(document.digitString(try node("h")) == nil)
        #expect(document.integer(try node("i")) == 0)
        #expect(document.digitString(try node("a")) == nil)
    }

    @Test("short decimals read from their bytes equal Double(text) to the bit, on 20,000 random ones and the edges")
    func shortDecimals() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0.0", "-0.0", "0.1", "1714644000.123", "999999999999999.9", "0.000000000000001", "123456789012345.6", "1.7976931348623157"]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...16, using: &generator)
            let point = Int.random(in: 1...digits, using: &generator)
            var text = Int.random(in: 0...3, using: &generator) == 0 ? "-" : ""
            for index in 0..<digits {
                if index == point { text += "." }
                text += String(Int.random(in: 0...9, using: &generator))
            }
            if point == digits { text += ".5" }
            texts.append(text)
        }
        // JSON allows no leading zero before another digit.
        func isJSON(_ text: String) -> Bool {
            let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            return !(body.first == "0" && body.dropFirst().first != ".")
        }
        for text in texts where isJSON(text) {
            let document = try JSONDocument(parsing: Array("[\(text)]".utf8))
            let node = try #require(document.elements(document.root).first)
            let expected = try #require(Double(text))
            #expect(document.number(node)?.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test("a surrogate pair decodes to one character, a lone surrogate to U+FFFD")
    func surrogates() throws {
        let document = try JSONDocument(parsing: Array(#"["\ud83d\ude00","\ud800x"]"#.utf8))
        let items = document.elements(document.root)
        #expect(document.string(items[0]) == "😀")
        #expect(document.string(items[1]) == "\u{FFFD}x")
    }

    @Test(
        "truncated and malformed values are refused with the offset where reading stopped",
        arguments: [
            (#"{"a":1"#, 6), (#"{"a" 1}"#, 5), (#"[1,]"#, 3), (#"{"a":tru}"#, 5), (#"{"a":"x"#, 7), (#"{} x"#, 3), (#"01"#, 1),
        ])
    func refusesMalformed(text: String, offset: Int) {
        #expect(throws: JSONSyntaxError.self) { try JSONDocument(parsing: Array(text.utf8)) }
        do {
            _ = try JSONDocument(parsing: Array(text.utf8))
        } catch {
            #expect(error.offset == offset, "\(text): \(error.reason)")
        }
    }

    @Test("nesting deeper than the limit is refused, not recursed into")
    func depthLimit() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONSyntaxError.self) { try JSONDocument(parsing: Array(deep.utf8)) }
    }
}
