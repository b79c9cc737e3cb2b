import ArgumentParser
import Foundation
import NavlogStoryboard

/// `navlog storyboard`: storyboards as navigation graphs.
struct StoryboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storyboard",
        abstract: "Read .storyboard files as navigation graphs: scenes, segues, references.",
        discussion: """
            Storyboards of document versions 1.1, 2.0 and 3.0 are read. References to other \
            storyboards are followed when those files are given too (a storyboard's name is \
            its file name without .storyboard).
            """,
        // One subcommand per file; a new one is one more entry here.
        subcommands: [
            StoryboardGraphCommand.self,
            StoryboardStatsCommand.self,
            StoryboardCoverageCommand.self,
        ]
    )
}

/// The files every `navlog storyboard` subcommand reads.
struct StoryboardFileArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("The .storyboard files.", valueName: "file"))
    var files: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("Give at least one .storyboard file.") }
    }

    /// Loads every file; prints a line for each that cannot be read.
    /// - Returns: the storyboards read, in order, and whether some file failed.
    func load(command: String) -> (storyboards: [Storyboard], failed: Bool) {
        var storyboards: [Storyboard] = []
        var failed = false
        for path in files {
            do {
                storyboards.append(try Storyboard.load(path: path))
            } catch {
                printError("navlog storyboard \(command): \(error)")
                failed = true
            }
        }
        return (storyboards, failed)
    }
}

/// `navlog storyboard graph`: the navigation graph as DOT or JSON.
struct StoryboardGraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the navigation graph of storyboards as Graphviz DOT or as JSON.",
        discussion: """
            dot: one cluster per file; scenes are labelled with their class and storyboard id, \
            the initial one has a double border; edges are labelled with the segue kind and \
            identifier; relationships are bold blue, embeds dashed green, unwinds dotted to a \
            note naming the action; a reference is a dotted edge to the scene it stands for \
            when that storyboard is among the files. Render with: dot -Tsvg. \
            json: {"storyboards": [the model of each file], "references": [resolved references]}.
            """
    )

    /// Output formats of the graph.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dot, json
    }

    @OptionGroup var input: StoryboardFileArguments

    @Option(help: "Output format: dot or json.")
    var format: Format = .dot

    func run() throws {
        let (storyboards, failed) = input.load(command: "graph")
        // A graph missing a file would show its references as dangling: print none.
        if failed { throw ExitCode.failure }
        let set = StoryboardSet(storyboards)
        switch format {
        case .dot:
            printOutput(StoryboardDOTWriter.render(set))
        case .json:
            let graph = GraphJSON(storyboards: set.storyboards, references: set.resolvedReferences())
            printOutput(try encodeJSON(graph, pretty: true) + "\n")
        }
    }

    /// The JSON document of `graph --format json`.
    struct GraphJSON: Encodable {
        var storyboards: [Storyboard]
        var references: [StoryboardSet.ResolvedReference]
    }
}

/// `navlog storyboard stats`: counts per file and in total.
struct StoryboardStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count scenes and segues of storyboards by kind, identifiers missing or reused, and references.",
        discussion: """
            One line per file and a total line. NO ID counts segues other than relationships \
            without an identifier; REUSED ID counts identifiers carried by more than one segue of \
            a file; REFS counts storyboard references. json prints one object per line, the last \
            one with "total": true.
            """
    )

    /// Output formats of the counts.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    @OptionGroup var input: StoryboardFileArguments

    @Option(help: "Output format: table or json.")
    var format: Format = .table

    func run() throws {
        let (storyboards, failed) = input.load(command: "stats")
        let parts = storyboards.map(StoryboardStatistics.init)
        let total = StoryboardStatistics(total: parts)
        switch format {
        case .table:
            var table = TableWriter(columns: ["file", "version", "runtime", "scenes", "scene kinds", "segues", "segue kinds", "no id", "reused id", "refs"])
            table.numeric = ["scenes", "segues", "no id", "reused id", "refs"]
            for (storyboard, counts) in zip(storyboards, parts) {
                table.rows.append(row(storyboard.path, storyboard.documentVersion, storyboard.targetRuntime ?? "", counts))
            }
            table.rows.append(row("total (\(total.files) file\(total.files == 1 ? "" : "s"))", "", "", total))
            printOutput(table.render(.table))
        case .json:
            var output = ""
            for (storyboard, counts) in zip(storyboards, parts) {
                let line = StatsJSON(
                    file: storyboard.path, name: storyboard.name, version: storyboard.documentVersion, runtime: storyboard.targetRuntime, total: nil,
                    counts: counts)
                output += try encodeJSON(line, pretty: false) + "\n"
            }
            output += try encodeJSON(StatsJSON(file: nil, name: nil, version: nil, runtime: nil, total: true, counts: total), pretty: false) + "\n"
            printOutput(output)
        }
        if failed { throw ExitCode.failure }
    }

    private func row(_ file: String, _ version: String, _ runtime: String, _ counts: StoryboardStatistics) -> [String] {
        [
            file, version, runtime, "\(counts.scenes)", Self.summary(counts.scenesByKind), "\(counts.segues)", Self.summary(counts.seguesByKind),
            "\(counts.identifiersMissing)", "\(counts.identifiersReused)", "\(counts.references)",
        ]
    }

    /// `plain 8, navigation 3, tab 1`: most frequent first, ties by name.
    static func summary(_ counts: [String: Int]) -> String {
        counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// One line of `stats --format json`: the file's fields and its counts, flattened.
    struct StatsJSON: Encodable {
        var file: String?
        var name: String?
        var version: String?
        var runtime: String?
        var total: Bool?
        var counts: StoryboardStatistics

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encodeIfPresent(file, forKey: Key("file"))
            try container.encodeIfPresent(name, forKey: Key("name"))
            try container.encodeIfPresent(version, forKey: Key("version"))
            try container.encodeIfPresent(runtime, forKey: Key("runtime"))
            try container.encodeIfPresent(total, forKey: Key("total"))
            try counts.encode(to: encoder)
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ string: String) { stringValue = string }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}

/// JSON with sorted keys (stable output to diff and test) and unescaped slashes (paths).
private func encodeJSON(_ value: some Encodable, pretty: Bool) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
