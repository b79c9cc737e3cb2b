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
