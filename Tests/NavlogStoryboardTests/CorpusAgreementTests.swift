import Foundation
import NavlogStoryboard
import NavlogTesting
import Testing

/// Every storyboard of the corpus parses, and its graph has the scenes and segues an
/// independent count of the XML finds (tools/storyboard-count.py, a DOM walk in Python) and
/// that MANIFEST.tsv lists.
@Suite("the storyboard corpus: every file parses and the counts agree")
struct CorpusAgreementTests {
    /// What tools/storyboard-count.py --json says about one file.
    struct IndependentCount: Decodable {
        var scenes: [String: Int]
        var segues: [String: Int]
        var ignored: [String: Int]
    }

    /// Runs the Python counter once over `paths`.
    static func independentCounts(_ paths: [String]) throws -> [String: IndependentCount] {
        let script = TestEnvironment.packageRoot.appendingPathComponent("tools/storyboard-count.py").path
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "--json"] + paths, timeout: 60)
        guard result.status == 0 else { throw TestFailure("storyboard-count.py failed (\(result.status)): \(result.errorOutput)") }
        return try JSONDecoder().decode([String: IndependentCount].self, from: result.standardOutput)
    }

    @Test("all 63 files parse, and scenes by element and segues by kind match tools/storyboard-count.py file by file")
    func countsMatchPython() throws {
        let paths = try Corpus.files().map(\.path)
        #expect(paths.count == 63)
        let expected = try Self.independentCounts(paths)
        var totalScenes = 0
        var totalSegues = 0
        for path in paths {
            let storyboard = try Storyboard.load(path: path)
            let count = try #require(expected[path], "no count for \(path)")
            var scenesByElement: [String: Int] = [:]
            for scene in storyboard.scenes { scenesByElement[scene.element, default: 0] += 1 }
            var seguesByKind: [String: Int] = [:]
            for segue in storyboard.segues { seguesByKind[segue.kind, default: 0] += 1 }
            #expect(scenesByElement == count.scenes, "\(storyboard.name): scenes")
            #expect(seguesByKind == count.segues, "\(storyboard.name): segues")
            // Every segue's source is a scene of the file; every destination too, except unwinds.
            for segue in storyboard.segues {
                #expect(storyboard.scene(segue.sourceID) != nil, "\(storyboard.name): segue \(segue.id) from \(segue.sourceID)")
                if segue.kind == "unwind" {
                    #expect(segue.destinationID == nil && segue.unwindAction != nil && segue.exitID != nil, "\(storyboard.name): \(segue.id)")
                } else {
                    #expect(segue.destinationID.flatMap(storyboard.scene) != nil, "\(storyboard.name): segue \(segue.id) to \(segue.destinationID ?? "nil")")
                }
            }
            totalScenes += storyboard.scenes.count
            totalSegues += storyboard.segues.count
        }
        #expect(totalScenes == 1_236)
        #expect(totalSegues == 1_323)
    }

    /// MANIFEST.tsv's n_scenes counts `<scene>` elements (each holds exactly one controller
    /// in this corpus), so it matches. Its n_segues counts every `<segue>` element except the
    /// `<segue reference=…>` tie-breakers, so it includes the 3D Touch commit/preview segues
    /// nested inside another segue, which are not navigation and which the parser leaves out:
    /// it is higher by exactly their number (2, both in AltStore's Main storyboard).
    @Test("n_scenes of MANIFEST.tsv matches; n_segues is higher by exactly the nested commit/preview segues")
    func countsMatchManifest() throws {
        let manifest = try String(contentsOfFile: try Corpus.path("MANIFEST.tsv"), encoding: .utf8)
        // MANIFEST.tsv has CRLF line ends: "\r\n" is one Character, so split on newlines, not "\n".
        var lines = manifest.split(whereSeparator: \.isNewline).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let header = lines.removeFirst()
        let file = try #require(header.firstIndex(of: "file"))
        let scenes = try #require(header.firstIndex(of: "n_scenes"))
        let segues = try #require(header.firstIndex(of: "n_segues"))
        #expect(lines.count == 63)
        let expected = try Self.independentCounts(try lines.map { try Corpus.path($0[file]) })
        var nestedTotal = 0
        for row in lines {
            let storyboard = try Corpus.load(row[file])
            let nested = expected[try Corpus.path(row[file])]?.ignored["nested"] ?? 0
            nestedTotal += nested
            #expect(storyboard.scenes.count == Int(row[scenes]), "\(row[file])")
            #expect(storyboard.segues.count + nested == Int(row[segues]), "\(row[file])")
        }
        #expect(nestedTotal == 2)
    }
}
