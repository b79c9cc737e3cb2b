import ArgumentParser
import NavlogAnalytics
import NavlogJSON
import NavlogReplay
import NavlogStore
import NavlogStoryboard

/// `navlog storyboard coverage`: what recorded sessions exercised of the app's storyboards.
struct StoryboardCoverageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coverage",
        abstract: "Which scenes and segues recorded sessions exercised, which never, and which recorded transitions the storyboards do not allow.",
        discussion: """
            Every session of the log is replayed. A controller is matched to a scene by its class \
            and storyboard identifier; a new screen coming into focus (push, present, show, a \
            segue) is matched to a segue from the scene left to the scene reached (or the \
            container around it). Transitions no segue explains are listed with an example \
            session and seq. Give every storyboard of the app.
            """
    )

    @OptionGroup var data: DataDirectoryOptions

    @Option(name: .customLong("storyboard"), help: ArgumentHelp("A .storyboard file of the app (repeat for several).", valueName: "file"))
    var storyboards: [String]

    @Option(help: "Output format: table or json.")
    var format: TableFormat = .table

    func validate() throws {
        if storyboards.isEmpty { throw ValidationError("Give at least one --storyboard FILE.") }
        if format == .csv { throw ValidationError("navlog storyboard coverage prints table or json.") }
    }

    func run() throws {
        let app = try reportingFailure("storyboard coverage") { try StoryboardApp(storyboards.map(Storyboard.load(path:))) }
        let reader = try data.openReader(command: "storyboard coverage")
        var coverage = StoryboardCoverage(app: app)
        try reportingFailure("storyboard coverage") { try coverage.read(reader) }
        print(coverage, app)
        if reportDamage(command: "storyboard coverage", reader) { throw ExitCode.failure }
    }

    private func print(_ coverage: StoryboardCoverage, _ app: StoryboardApp) {
        func sceneName(_ scene: StoryboardScene) -> String { scene.className + (scene.storyboardID.map { " (\($0))" } ?? "") }
        func segueName(_ use: StoryboardCoverage.SegueUse) -> String {
            let storyboard = app.storyboards[use.storyboard]
            let source = storyboard.scene(use.segue.sourceID).map(sceneName) ?? use.segue.sourceID
            let destination =
                use.segue.destinationID.flatMap { storyboard.scene($0) }.map(sceneName) ?? (use.segue.unwindAction.map { "exit \($0)" } ?? "?")
            return "\(source) → \(destination)"
        }
        if format == .json {
            var json = JSONWriter()
            for use in coverage.scenes where use.scene.kind != .placeholder {
                json.raw("{\"record\":\"scene\",\"storyboard\":")
                json.string(app.storyboards[use.storyboard].name)
                json.member("class", use.scene.className)
                json.member("sbid", use.scene.storyboardID)
                json.member("visits", use.visits)
                json.member("sessions", use.sessions)
                json.raw("}\n")
            }
            for use in coverage.segues {
                json.raw("{\"record\":\"segue\",\"storyboard\":")
                json.string(app.storyboards[use.storyboard].name)
                json.member("segue", segueName(use))
                json.member("kind", use.segue.kind)
                json.member("identifier", use.segue.identifier)
                json.member("uses", use.uses)
                json.raw("}\n")
            }
            for item in coverage.unexpectedTransitions {
                json.raw("{\"record\":\"unexpected\",")
                item.appendJSONMembers(to: &json)
                json.raw("}\n")
            }
            printOutput(String(decoding: json.bytes, as: UTF8.self))
            return
        }
        let scenes = coverage.scenes.filter { $0.scene.kind != .placeholder }
        let segues = coverage.segues
        var text =
            "\(coverage.eventsRead) events read, \(coverage.transitions) forward transitions; scenes exercised: \(scenes.filter { $0.sessions > 0 }.count) of \(scenes.count); segues: \(segues.filter { $0.uses > 0 }.count) of \(segues.count)\n\n"
        var sceneTable = TableWriter(columns: ["", "storyboard", "scene", "focused", "sessions"])
        sceneTable.numeric = ["focused", "sessions"]
        for use in scenes {
            sceneTable.rows.append([use.sessions > 0 ? "✓" : "✗", app.storyboards[use.storyboard].name, sceneName(use.scene), "\(use.visits)", "\(use.sessions)"])
        }
        text += sceneTable.render(.table) + "\n"
        var segueTable = TableWriter(columns: ["", "storyboard", "segue", "kind", "identifier", "uses"])
        segueTable.numeric = ["uses"]
        for use in segues {
            segueTable.rows.append([
                use.uses > 0 ? "✓" : "✗", app.storyboards[use.storyboard].name, segueName(use), use.segue.kind + (use.segue.relationship.map { " \($0)" } ?? ""),
                use.segue.identifier, "\(use.uses)",
            ])
        }
        text += segueTable.render(.table) + "\n"
        let unexpected = coverage.unexpectedTransitions
        if unexpected.isEmpty {
            text += "Every recorded transition is a segue of the storyboards.\n"
        } else {
            text += "Recorded transitions the storyboards do not allow:\n"
            var table = TableWriter(columns: ["from", "to", "how", "count", "example"])
            table.numeric = ["count"]
            for item in unexpected {
                table.rows.append([
                    item.from, item.to, item.how, "\(item.count)", "\(item.example.session) seq \(item.example.sequence.map { "\($0)" } ?? "-")",
                ])
            }
            text += table.render(.table)
        }
        printOutput(text)
    }
}
