import Foundation
import NavlogTesting
import Testing

/// `navlog storyboard stats` and `navlog storyboard graph` run as a user runs them, on
/// storyboards of the corpus in ../shared/storyboards.
@Suite("navlog storyboard stats and graph end to end")
struct StoryboardCommandTests {
    /// The path of corpus file `name`; throws ``MissingTestInput`` naming it when it is not there
    /// (the tests below index what the commands print about these files).
    static func corpusFile(_ name: String) throws -> String { try TestEnvironment.sharedFile("storyboards/\(name)").path }
    static var emojiArt: String { get throws { try corpusFile("pajatopmr__CS193P-Fall2017-EmojiArt__EmojiArt__Base.lproj__Main.storyboard") } }
    static var naterade: String { get throws { try corpusFile("LoopKit__Loop__Naterade__Base.lproj__Main.storyboard") } }
    static var hackers: String { get throws { try corpusFile("weiran__Hackers__Hackers__MainStoryboard.storyboard") } }
    static var habiticaMain: String { get throws { try corpusFile("HabitRPG__habitica-ios__HabitRPG__Storyboards__Base.lproj__Main.storyboard") } }
    static var habiticaSocial: String { get throws { try corpusFile("HabitRPG__habitica-ios__HabitRPG__Storyboards__Base.lproj__Social.storyboard") } }

    /// Links Habitica's Main and Social storyboards under their app names (the corpus
    /// flattens paths into file names; references use the app's names), and EmojiArt.
    static func linkedStoryboards(in dir: URL) throws -> [String] {
        var paths: [String] = []
        for (name, target) in [("Main", try habiticaMain), ("Social", try habiticaSocial), ("EmojiArt", try emojiArt)] {
            let link = dir.appendingPathComponent("\(name).storyboard")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)
            paths.append(link.path)
        }
        return paths
    }

    @Test("stats prints a row per file (version, runtime, scenes and segues by kind, identifiers, references) and a total")
    func statsTable() throws {
        let emojiArt = try Self.emojiArt
        let result = try ProcessRunner.navlog(["storyboard", "stats", emojiArt, try Self.naterade, try Self.hackers])
        #expect(result.status == 0, "\(result.errorOutput)")
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(result.output)")
        #expect(lines[0].hasPrefix("FILE") && lines[0].contains("SCENE KINDS") && lines[0].hasSuffix("REFS"))
        let columns = lines[1].split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(
            columns == [
                emojiArt, "3.0", "iOS.CocoaTouch", "5", "plain 4, navigation 1", "5",
                "embed 1, popoverPresentation 1, presentation 1, relationship 1, unwind 1", "1", "1", "0",
            ])
        #expect(lines[2].contains("plain 5, navigation 4, placeholder 3, tab 1"))
        #expect(lines[3].contains("  2.0  ") && lines[3].contains("custom 5, push 1, relationship 1"))
        #expect(lines[4].hasPrefix("total (3 files)"))
        #expect(lines[4].contains("  24  plain 14, navigation 6, placeholder 3, tab 1  "))
    }

    @Test("stats --format json prints one object per file and a total object")
    func statsJSON() throws {
        let emojiArt = try Self.emojiArt
        let result = try ProcessRunner.navlog(["storyboard", "stats", "--format", "json", emojiArt, try Self.naterade])
        #expect(result.status == 0, "\(result.errorOutput)")
        let objects = try result.output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        try #require(objects.count == 3, "\(result.output)")
        #expect(objects[0]["file"] as? String == emojiArt)
        #expect(objects[0]["version"] as? String == "3.0")
        #expect(objects[0]["scenes"] as? Int == 5)
        #expect(objects[0]["seguesByKind"] as? [String: Int] == ["embed": 1, "popoverPresentation": 1, "presentation": 1, "relationship": 1, "unwind": 1])
        #expect(objects[1]["references"] as? Int == 3)
        #expect(objects[1]["referencedStoryboards"] as? [String] == ["CarbKit", "InsulinKit"])
        #expect(objects[2]["total"] as? Bool == true)
        #expect(objects[2]["scenes"] as? Int == 18)
        #expect(objects[2]["files"] as? Int == 2)
    }

    @Test("graph --format dot: clusters, the initial scene, relationship/embed/unwind edges, references across the given files")
    func graphDOT() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let paths = try Self.linkedStoryboards(in: dir)
            let result = try ProcessRunner.navlog(["storyboard", "graph"] + paths)
            #expect(result.status == 0, "\(result.errorOutput)")
            let dot = result.output
            #expect(dot.hasPrefix("digraph storyboards {\n") && dot.hasSuffix("}\n"))
            #expect(dot.contains(#"label="Main.storyboard";"#) && dot.contains(#"label="Social.storyboard";"#))
            // Main's reference to Social's UserProfileNavController, and Social's to Main's GiftGemsNavController.
            #expect(dot.contains(#""0:x5n-fS-qd9" [label="→ Social.UserProfileNavController", style=dashed];"#), "\(dot)")
            #expect(dot.contains(#""0:x5n-fS-qd9" -> "1:oLT-m4-I14" [style=dotted, color=gray40, label="reference"];"#))
            #expect(dot.contains(#""1:HSy-Iu-F74" -> "0:pUF-pN-Tcq" [style=dotted, color=gray40, label="reference"];"#))
            // A reference to a storyboard not given has no edge.
            #expect(!dot.contains(#""0:A14-ZR-jzj" ->"#))
            // EmojiArt: initial scene, embed, popover, unwind.
            #expect(dot.contains(#""2:BYZ-38-t0r" [label="DocumentBrowserViewController", peripheries=2];"#))
            #expect(dot.contains(#""2:initial" -> "2:BYZ-38-t0r";"#))
            #expect(dot.contains(#""2:7BV-pG-o5f" -> "2:iQD-bq-84X" [label="embed\nEmbed Document Info", style=dashed, color=darkgreen];"#))
            #expect(dot.contains(#""2:7BV-pG-o5f" -> "2:XS6-Te-BYJ" [label="popoverPresentation\nShow Document Info"];"#))
            #expect(dot.contains(#""2:ebB-HC-mbB" -> "2:7BV-pG-o5f" [label="rootViewController", style=bold, color=blue];"#))
            #expect(dot.contains(#""2:XS6-Te-BYJ" -> "2:unwind:closeBySegue:" [style=dotted, label="unwind"];"#))
        }
    }

    @Test("graph --format json: the model of each file and the resolved references")
    func graphJSON() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let paths = try Self.linkedStoryboards(in: dir)
            let result = try ProcessRunner.navlog(["storyboard", "graph", "--format", "json"] + paths)
            #expect(result.status == 0, "\(result.errorOutput)")
            let object = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
            let storyboards = try #require(object["storyboards"] as? [[String: Any]])
            try #require(storyboards.map { $0["name"] as? String } == ["Main", "Social", "EmojiArt"])
            let emojiArt = storyboards[2]
            #expect(emojiArt["initialSceneID"] as? String == "BYZ-38-t0r")
            let segues = try #require(emojiArt["segues"] as? [[String: Any]])
            let popover = try #require(segues.first { $0["id"] as? String == "dlw-nn-BN6" })
            #expect(popover["anchorBarButtonItemID"] as? String == "yCK-fT-1Nj")
            #expect(popover["sourceID"] as? String == "7BV-pG-o5f")
            let scenes = try #require(storyboards[0]["scenes"] as? [[String: Any]])
            let placeholder = try #require(scenes.first { $0["id"] as? String == "x5n-fS-qd9" })
            #expect(placeholder["kind"] as? String == "placeholder")
            #expect((placeholder["reference"] as? [String: Any])?["storyboardName"] as? String == "Social")
            let references = try #require(object["references"] as? [[String: Any]])
            #expect(
                references.contains {
                    $0["storyboardIndex"] as? Int == 0 && $0["placeholderID"] as? String == "x5n-fS-qd9" && $0["targetStoryboardIndex"] as? Int == 1
                        && $0["targetSceneID"] as? String == "oLT-m4-I14"
                })
        }
    }

    @Test("a truncated file: exit status 1 and file:line:column: reason on standard error; stats still counts the others")
    func truncatedFile() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let broken = dir.appendingPathComponent("Broken.storyboard")
            try Data(contentsOf: URL(fileURLWithPath: try Self.emojiArt)).prefix(5_000).write(to: broken)
            let graph = try ProcessRunner.navlog(["storyboard", "graph", broken.path, try Self.hackers])
            #expect(graph.status == 1)
            #expect(graph.output.isEmpty)
            #expect(graph.errorOutput.hasPrefix("navlog storyboard graph: \(broken.path):"), "\(graph.errorOutput)")
            #expect(graph.errorOutput.contains("(truncated file?)"))
            let stats = try ProcessRunner.navlog(["storyboard", "stats", broken.path, try Self.hackers])
            #expect(stats.status == 1)
            #expect(stats.output.contains("total (1 file)"))
            let none = try ProcessRunner.navlog(["storyboard", "stats"])
            #expect(none.status == 64, "\(none.errorOutput)")
            #expect(none.errorOutput.contains("Give at least one .storyboard file."))
        }
    }
}
