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

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    StoryboardFuzz.run(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}

enum StoryboardFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
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
