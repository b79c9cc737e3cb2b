import NavlogJSON
import NavlogStoryboard

/// A view controller the simulated app instantiated from a storyboard scene.
struct SimulatedController {
    /// Its id in events (a made-up object address, unique in the session).
    var id: String
    /// The storyboard (index into the simulator's list) and scene it came from.
    var storyboard: Int
    var sceneID: String
    var className: String
    var storyboardID: String?
    var title: String?
    /// The events.md kind, when it is a container.
    var kind: String?
    var definesContext: Bool
    var unwindActions: [String]
    /// Whether an event has named it yet (the first mention carries the object form).
    var mentioned = false

    /// The controller as an event field: the object form on first mention, then the bare id.
    mutating func reference() -> [UInt8] {
        var json = JSONWriter()
        if mentioned {
            json.string(id)
            return json.bytes
        }
        mentioned = true
        json.raw("{\"id\":")
        json.string(id)
        json.member("class", className)
        if let storyboardID { json.member("sbid", storyboardID) }
        if let title { json.member("title", title) }
        if let kind { json.member("kind", kind) }
        if definesContext { json.member("definesContext", true) }
        if !unwindActions.isEmpty {
            json.key("unwindActions")
            json.array(unwindActions) { json, action in json.string(action) }
        }
        json.raw("}")
        return json.bytes
    }
}
