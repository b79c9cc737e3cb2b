import NavlogAnalytics
import NavlogStore
import NavlogStoryboard

extension ViewerEngine {
    /// The storyboards given to `navlog serve` as a graph (scenes, segues) with what recorded
    /// sessions covered of it (the numbers of `navlog storyboard coverage`), as the JSON of
    /// `GET /api/storyboards`. Kept until the log grows.
    func storyboardCoverage() throws -> [UInt8] {
        if let cached = coverageCache, cached.through == newestLSN { return cached.body }
        var json = JSONBuffer()
        guard !storyboards.isEmpty else {
            json.raw("{\"storyboards\":[],\"unexpected\":[],\"eventsRead\":0,\"transitions\":0,\"note\":")
            json.string("No storyboards were given: start navlog serve with --storyboard FILE (repeat for each of the app's storyboards).")
            json.raw("}")
            return json.bytes
        }
        var loaded: [Storyboard] = []
        for path in storyboards {
            do {
                loaded.append(try Storyboard.load(path: path))
            } catch {
                throw ViewerRequestError(status: 500, message: "The storyboard \(path) cannot be read: \(error)")
            }
        }
        let app: StoryboardApp
        do {
            app = try StoryboardApp(loaded)
        } catch {
            throw ViewerRequestError(status: 500, message: "The storyboards do not make an app: \(error)")
        }
        var coverage = StoryboardCoverage(app: app)
        try coverage.read(reader)
        json.raw("{\"storyboards\":")
        json.array(app.storyboards.indices) { json, number in
            let storyboard = app.storyboards[number]
            json.raw("{\"name\":")
            json.string(storyboard.name)
            json.key("initialScene")
            json.string(storyboard.initialSceneID)
            json.key("scenes")
            json.array(coverage.scenes.filter { $0.storyboard == number && $0.scene.kind != .placeholder }) { json, use in
                json.raw("{\"id\":")
                json.string(use.scene.id)
                json.key("class")
                json.string(use.scene.className)
                json.key("sbid")
                json.string(use.scene.storyboardID)
                json.key("title")
                json.string(use.scene.title)
                json.key("kind")
                json.string("\(use.scene.kind)")
                json.raw(",\"visits\":\(use.visits),\"sessions\":\(use.sessions)}")
            }
            json.key("segues")
            json.array(coverage.segues.filter { $0.storyboard == number }) { json, use in
                json.raw("{\"id\":")
                json.string(use.segue.id)
                json.key("source")
                json.string(use.segue.sourceID)
                json.key("destination")
                json.string(use.segue.destinationID)
                json.key("kind")
                json.string(use.segue.kind)
                json.key("relationship")
                json.string(use.segue.relationship)
                json.key("identifier")
                json.string(use.segue.identifier)
                json.key("unwindAction")
                json.string(use.segue.unwindAction)
                json.raw(",\"uses\":\(use.uses)}")
            }
            json.raw("}")
        }
        json.key("unexpected")
        json.array(coverage.unexpectedTransitions) { json, item in
            json.raw("{\"from\":")
            json.string(item.from)
            json.key("to")
            json.string(item.to)
            json.key("how")
            json.string(item.how)
            json.raw(",\"count\":\(item.count),\"session\":")
            json.string(item.example.session)
            json.key("seq")
            json.number(item.example.sequence)
            json.raw("}")
        }
        json.raw(",\"eventsRead\":\(coverage.eventsRead),\"transitions\":\(coverage.transitions)}")
        coverageCache = (newestLSN, json.bytes)
        return json.bytes
    }
}
