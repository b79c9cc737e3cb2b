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
}

extension StoryboardCoverage.SceneUse {
    /// The scene as the storyboard page draws it, with how often sessions focused it.
    fileprivate func appendViewerJSON(to json: inout JSONWriter) {
        json.raw("{\"id\":")
        json.string(scene.id)
        json.member("class", scene.className)
        json.member("sbid", scene.storyboardID)
        json.member("title", scene.title)
        json.member("kind", "\(scene.kind)")
        json.member("visits", visits)
        json.member("sessions", sessions)
        json.raw("}")
    }
}

extension StoryboardCoverage.SegueUse {
    /// The segue as the storyboard page draws it, with how many recorded transitions it explains.
    fileprivate func appendViewerJSON(to json: inout JSONWriter) {
        json.raw("{\"id\":")
        json.string(segue.id)
        json.member("source", segue.sourceID)
        json.member("destination", segue.destinationID)
        json.member("kind", segue.kind)
        json.member("relationship", segue.relationship)
        json.member("identifier", segue.identifier)
        json.member("unwindAction", segue.unwindAction)
        json.member("uses", uses)
        json.raw("}")
    }
}
