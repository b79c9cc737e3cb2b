// libFuzzer target for the storyboard parser (`StoryboardParser.parse(data:path:)`): navlog
// reads whatever `.storyboard` files it is pointed at. Build and run it with tools/fuzz; built
// without `--sanitize=fuzzer` it is a program that does nothing.
//
// Each input is parsed as a storyboard file; a failure must be a `StoryboardError` with a
// message. A storyboard that parses goes through everything navlog does with one: statistics,
// a set with its references resolved (also against a second copy under another name), and
// the dot graph.
//
// No top-level code and no global variables: libFuzzer's `main` runs instead of this file's.
import Foundation
import NavlogStoryboard

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    StoryboardFuzz.run(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}

enum StoryboardFuzz {
    /// Inputs that hit bugs already reported (each has a regression test and an input under
    /// Tests/Fixtures/fuzz-regressions) are let through, so a run finds new bugs instead of
    /// the same one again. NAVLOG_FUZZ_STRICT=1 checks them all too; a comma-separated list
    /// of their names checks those (to minimize an input for one of them).
    static let strict: Set<String>? = getenv("NAVLOG_FUZZ_STRICT").map { Set(String(cString: $0).split(separator: ",").map(String.init)) }

    /// Whether inputs that hit the known issue `name` are let through.
    static func skips(_ name: String) -> Bool {
        guard let strict else { return true }
        return !strict.contains("1") && !strict.contains(name)
    }

    /// storyboard-encoding (storyboard-encoding-*): a file whose XML declaration names an encoding that libxml2
    /// hands to iconv (`UTF-7`, `Shift_JIS`, `EUC-JP`, even `U-TF8`) and that holds bytes not
    /// valid in it crashes libxml2 (SIGSEGV in xmlSwitchToEncoding) under XMLParser. Inputs
    /// declaring any encoding but UTF-8 are let through.
    ///
    /// storyboard-ucs4-prefix: the same crash when the file starts with NUL bytes before `<?`
    /// (libxml2 guesses UCS-4 from them): inputs with a NUL in their first 4 bytes are let through.
    ///
    /// storyboard-empty-processing-instruction: a processing instruction with no data before or
    /// after the root element (`<?navlog?>`) makes FoundationXML call strlen on libxml2's NULL
    /// data (SIGSEGV in `_NSXMLParserProcessingInstruction`): inputs with `<?name?>` are let through.
    static func knownIssue(_ input: UnsafeRawBufferPointer) -> String? {
        if input.prefix(4).contains(0) { return "storyboard-ucs4-prefix" }
        if hasEmptyProcessingInstruction(input) { return "storyboard-empty-processing-instruction" }
        let prolog = String(decoding: input.prefix(1024), as: UTF8.self).lowercased().filter { !$0.isWhitespace }
        guard let range = prolog.range(of: "encoding=") else { return nil }
        let value = prolog[range.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" }
        return value == "utf-8" ? nil : "storyboard-encoding"
    }

    /// Whether `<?` is followed by a name, optional white space, and `?>`.
    static func hasEmptyProcessingInstruction(_ input: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 1 < input.count {
            defer { index += 1 }
            guard input[index] == UInt8(ascii: "<"), input[index + 1] == UInt8(ascii: "?") else { continue }
            var end = index + 2
            while end < input.count, ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "?")].contains(input[end]) { end += 1 }
            while end < input.count, [0x20, 0x09, 0x0A, 0x0D].contains(input[end]) { end += 1 }
            if end + 1 < input.count, input[end] == UInt8(ascii: "?"), input[end + 1] == UInt8(ascii: ">") { return true }
        }
        return false
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        if let issue = knownIssue(input), skips(issue) { return }
        let data = input.isEmpty ? Data() : Data(input)
        let storyboard: Storyboard
        do {
            storyboard = try StoryboardParser.parse(data: data, path: "Fuzz/Base.lproj/Main.storyboard")
        } catch {
            guard !error.description.isEmpty else { fatalError("a storyboard error without a message") }
            return
        }
        guard storyboard.name == "Main" else { fatalError("the storyboard is named \(storyboard.name), not after its file") }
        _ = StoryboardStatistics(storyboard)
        var other = storyboard
        other.name = "Other"
        other.path = "Fuzz/Other.storyboard"
        let set = StoryboardSet([storyboard, other])
        _ = StoryboardStatistics(total: set.storyboards.map { StoryboardStatistics($0) })
        for scene in storyboard.scenes where scene.reference != nil { _ = set.resolve(scene, in: storyboard) }
        _ = set.resolvedReferences()
        _ = StoryboardDOTWriter.render(set)
        for scene in storyboard.scenes.prefix(64) {
            _ = storyboard.segues(from: scene.id)
            _ = storyboard.scene(scene.id)
        }
    }
}
