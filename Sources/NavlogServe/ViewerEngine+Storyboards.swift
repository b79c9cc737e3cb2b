import NavlogAnalytics
import NavlogJSON
import NavlogStore
import NavlogStoryboard

extension ViewerEngine {
    /// The storyboards given to `navlog serve` as a graph (scenes, segues) with what recorded
    /// sessions covered of it (the numbers of `navlog storyboard coverage`), as the JSON of
    /// `GET /api/storyboards`. Kept until the log grows.
    func storyboardCoverage() throws -> [UInt8] {
        if let cached = coverageCache, cached.through == newestLSN { return cached.body }
        var json = JSONWriter()
        guard !storyboards.isEmpty else {
            json.raw("{\"storyboards\":[],\"unexpected\":[],\"eventsRead\":0,\"transitions\":0,\"note\":")
            json.string("No storyboards were given: start navlog serve with --storyboard FILE (repeat for each of the app's storyboards).")
            json.raw("}")
            return json.bytes
        }
        let app = try storyboardApp()
        var coverage = StoryboardCoverage(app: app)
        try coverage.read(reader)
        json.raw("{\"storyboards\":")
        json.array(app.storyboards.indices) { json, number in
            let storyboard = app.storyboards[number]
            json.raw("{\"name\":")
            json.string(storyboard.name)
            json.member("initialScene", storyboard.initialSceneID)
            json.key("scenes")
            json.array(coverage.scenes.lazy.filter { $0.storyboard == number && $0.scene.kind != .placeholder }) { json, use in use.appendViewerJSON(to: &json) }
            json.key("segues")
            json.array(coverage.segues.lazy.filter { $0.storyboard == number }) { json, use in use.appendViewerJSON(to: &json) }
            json.raw("}")
        }
        json.key("unexpected")
        json.array(coverage.unexpectedTransitions) { json, item in
            json.raw("{")
            item.appendJSONMembers(to: &json)
            json.raw("}")
        }
        json.member("eventsRead", coverage.eventsRead)
        json.member("transitions", coverage.transitions)
        json.raw("}")
        coverageCache = (newestLSN, json.bytes)
        return json.bytes
    }

    /// The app the storyboards given to `navlog serve` make, read again for each answer (they
    /// were checked at start).
    private func storyboardApp() throws -> StoryboardApp {
        var loaded: [Storyboard] = []
        for path in storyboards {
            do {
                loaded.append(try Storyboard.load(path: path))
            } catch {
                throw ViewerRequestError(status: 500, message: "The storyboard \(path) cannot be read: \(error)")
            }
        }
        do {
            return try StoryboardApp(loaded)
        } catch {
            throw ViewerRequestError(status: 500, message: "The storyboards do not make an app: \(error)")
        }
    }
}

extension StoryboardCoverage.SceneUse {
    /// The scene as the storyboard page draws it, with how often sessions focused it.
    fileprivate func appendViewerJSON(to json: inout JSONWriter) {
        json.object(
            ("id", scene.id), ("class", scene.className), ("sbid", scene.storyboardID), ("title", scene.title), ("kind", "\(scene.kind)"), ("visits", visits),
            ("sessions", sessions))
    }
}

extension StoryboardCoverage.SegueUse {
    /// The segue as the storyboard page draws it, with how many recorded transitions it explains.
    fileprivate func appendViewerJSON(to json: inout JSONWriter) {
        json.object(
            ("id", segue.id), ("source", segue.sourceID), ("destination", segue.destinationID), ("kind", segue.kind), ("relationship", segue.relationship),
            ("identifier", segue.identifier), ("unwindAction", segue.unwindAction), ("uses", uses))
    }
}
