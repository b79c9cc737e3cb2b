import Foundation
import NavlogStoryboard
import NavlogTesting

/// The storyboards of real apps in `../shared/storyboards` (read in place, never copied into
/// the repository). Each accessor throws ``MissingTestInput``, naming the path, when the
/// corpus or the file is not there.
enum Corpus {
    /// Every `.storyboard` file of the corpus, sorted by name.
    static func files() throws -> [URL] {
        try TestEnvironment.sharedFiles(in: "storyboards", endingIn: ".storyboard")
    }

    /// The path of corpus file `name` (`MANIFEST.tsv` too).
    static func path(_ name: String) throws -> String { try TestEnvironment.sharedFile("storyboards/\(name)").path }

    /// Loads corpus file `name`.
    static func load(_ name: String) throws -> Storyboard { try Storyboard.load(path: try path(name)) }

    /// Loads corpus file `file` as if it were named `name` (the corpus flattens paths into file
    /// names, so `Base.lproj/Main.storyboard` is `…__Base.lproj__Main.storyboard` here).
    static func load(_ file: String, as name: String) throws -> Storyboard {
        var storyboard = try load(file)
        storyboard.name = name
        return storyboard
    }

    static let emojiArt = "pajatopmr__CS193P-Fall2017-EmojiArt__EmojiArt__Base.lproj__Main.storyboard"
    static let naterade = "LoopKit__Loop__Naterade__Base.lproj__Main.storyboard"
    static let hackers = "weiran__Hackers__Hackers__MainStoryboard.storyboard"
    static let altStore = "rileytestut__AltStore__AltStore__Base.lproj__Main.storyboard"
    static let previewInteraction = "shu223__iOS-10-Sampler__iOS-10-Sampler__Samples__PreviewInteraction.storyboard"
    static let habiticaMain = "HabitRPG__habitica-ios__HabitRPG__Storyboards__Base.lproj__Main.storyboard"
    static let habiticaSocial = "HabitRPG__habitica-ios__HabitRPG__Storyboards__Base.lproj__Social.storyboard"
    static let habiticaIntro = "HabitRPG__habitica-ios__HabitRPG__Intro.storyboard"
}

extension Storyboard {
    /// The segue with XML id `id`.
    func segue(_ id: String) -> StoryboardSegue? { segues.first { $0.id == id } }
}

/// Parses storyboard XML written in a test.
func parse(_ xml: String, path: String = "/virtual/Test.storyboard") throws(StoryboardError) -> Storyboard {
    try StoryboardParser.parse(data: Data(xml.utf8), path: path)
}
