import Foundation
import NavlogStoryboard
import NavlogTesting
import Testing

/// Files that are not well-formed storyboards fail with a ``StoryboardError`` that names the
/// file, the line (and column) and what was wrong.
@Suite("malformed storyboards fail with the file, the line and a reason")
struct MalformedInputTests {
    /// Parses `text`, expecting a failure.
    func failure(_ text: String, path: String = "/virtual/Broken.storyboard") -> StoryboardError? {
        do {
            _ = try StoryboardParser.parse(data: Data(text.utf8), path: path)
            return nil
        } catch {
            return error
        }
    }

    @Test("a real storyboard cut in the middle of a line: truncated, at its last line, inside the open element")
    func truncatedMidLine() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: try Corpus.path(Corpus.emojiArt)))
        let cut = data.prefix(20_000)
        let lines = cut.count { $0 == 0x0A } + 1
        let error = try #require(failure(String(decoding: cut, as: UTF8.self), path: "/virtual/EmojiArt.storyboard"))
        #expect(error.code == .truncated)
        #expect(error.path == "/virtual/EmojiArt.storyboard")
        #expect(error.line == lines)
        #expect(error.column != nil)
        #expect(error.reason.hasPrefix("the XML ends inside <"), "\(error)")
        #expect(error.reason.hasSuffix("(truncated file?)"))
        #expect(error.reason.contains("in scene 66I-gx-Ron"), "\(error)")
        #expect(error.description.hasPrefix("/virtual/EmojiArt.storyboard:\(lines):"))
    }

    @Test("a storyboard cut after </scene> at a line end: truncated inside <scenes>")
    func truncatedAtLineEnd() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="3.0" targetRuntime="iOS.CocoaTouch">
                <scenes>
                    <scene sceneID="a">
                        <objects>
                            <viewController id="vc" sceneMemberID="viewController"/>
                        </objects>
                    </scene>

            """
        let error = try #require(failure(text))
        #expect(error.code == .truncated)
        #expect(error.line == 8)
        #expect(error.reason == "the XML ends inside <scenes> (truncated file?)")
    }

    @Test("a truncated file on disk: Storyboard.load names the file")
    func truncatedFileOnDisk() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("Main.storyboard")
            let data = try Data(contentsOf: URL(fileURLWithPath: try Corpus.path(Corpus.naterade)))
            try data.prefix(data.count / 2).write(to: file)
            #expect {
                _ = try Storyboard.load(path: file.path)
            } throws: { error in
                guard let error = error as? StoryboardError else { return false }
                return error.code == .truncated && error.path == file.path && error.line != nil && error.description.hasPrefix(file.path + ":")
            }
        }
    }

    @Test("not XML at all: notXML at line 1")
    func notXML() throws {
        let error = try #require(failure("hello, this is not a storyboard\n"))
        #expect(error.code == .notXML)
        #expect(error.line == 1)
        #expect(error.reason == "not XML: the file does not start with an XML element")
    }

    @Test("an empty file: notXML, the file is empty")
    func emptyFile() throws {
        for text in ["", "  \n\n"] {
            let error = try #require(failure(text))
            #expect(error.code == .notXML)
            #expect(error.line == 1)
            #expect(error.reason.contains("empty") || error.reason.contains("no element"), "\(error)")
        }
    }

    @Test("well-formed XML of another kind: notAStoryboard naming the root element, at its line")
    func plist() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict/>
            </plist>
            """
        let error = try #require(failure(text))
        #expect(error.code == .notAStoryboard)
        #expect(error.reason == "not a storyboard: the root element is <plist>, not <document>")
        #expect(error.line == 3)
    }

    @Test("a XIB: notAStoryboard naming the document type")
    func xib() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.XIB" version="3.0" targetRuntime="iOS.CocoaTouch">
                <objects/>
            </document>
            """
        let error = try #require(failure(text))
        #expect(error.code == .notAStoryboard)
        #expect(error.reason.contains("com.apple.InterfaceBuilder3.CocoaTouch.XIB"))
        #expect(error.line == 2)
    }

    @Test("a mismatched end tag: malformedXML at its line, naming the open element")
    func mismatchedTag() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="3.0">
                <scenes>
                    <scene sceneID="a">
                        <objects>
                            <viewController id="vc" sceneMemberID="viewController">
                        </objects>
                    </scene>
                </scenes>
            </document>
            """
        let error = try #require(failure(text))
        #expect(error.code == .malformedXML)
        #expect(error.line == 7)
        #expect(error.reason == "an end tag does not match the open element <viewController>, in scene a")
    }

    @Test("a bare ampersand in an attribute: malformedXML at its line")
    func badAttribute() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="3.0">
                <scenes>
                    <scene sceneID="a">
                        <objects>
                            <viewController id="vc" title="Tom & Jerry" sceneMemberID="viewController"/>
                        </objects>
                    </scene>
                </scenes>
            </document>
            """
        let error = try #require(failure(text))
        #expect(error.code == .malformedXML)
        #expect(error.line == 6)
        #expect(error.reason.hasPrefix("the XML is malformed inside <objects>, in scene a"), "\(error)")
    }

    @Test("a controller without an id: invalidStoryboard")
    func controllerWithoutID() throws {
        let text = """
            <document type="com.apple.InterfaceBuilder3.CocoaTouch.Storyboard.XIB" version="3.0">
                <scenes><scene sceneID="s1"><objects><viewController sceneMemberID="viewController"/></objects></scene></scenes>
            </document>
            """
        let error = try #require(failure(text))
        #expect(error.code == .invalidStoryboard)
        #expect(error.reason == "the <viewController> of scene s1 has no id")
    }

    @Test("a missing file and a directory: unreadable, naming the path")
    func unreadable() {
        TestEnvironment.withTemporaryDirectory { dir in
            for (path, reason) in [(dir.appendingPathComponent("Missing.storyboard").path, "no such file"), (dir.path, "a directory, not a storyboard file")] {
                #expect {
                    _ = try Storyboard.load(path: path)
                } throws: { error in
                    guard let error = error as? StoryboardError else { return false }
                    return error.code == .unreadable && error.path == path && error.reason == reason && error.line == nil
                }
            }
        }
    }
}
