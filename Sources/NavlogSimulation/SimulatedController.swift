import NavlogEvents
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
        var output: [UInt8] = []
        if mentioned {
            EventJSONWriter.appendString(id, to: &output)
            return output
        }
        mentioned = true
        output.append(contentsOf: "{\"id\":".utf8)
        EventJSONWriter.appendString(id, to: &output)
        output.append(contentsOf: ",\"class\":".utf8)
        EventJSONWriter.appendString(className, to: &output)
        if let storyboardID {
            output.append(contentsOf: ",\"sbid\":".utf8)
            EventJSONWriter.appendString(storyboardID, to: &output)
        }
        if let title {
            output.append(contentsOf: ",\"title\":".utf8)
            EventJSONWriter.appendString(title, to: &output)
        }
        if let kind {
            output.append(contentsOf: ",\"kind\":".utf8)
            EventJSONWriter.appendString(kind, to: &output)
        }
        if definesContext { output.append(contentsOf: ",\"definesContext\":true".utf8) }
        if !unwindActions.isEmpty {
            output.append(contentsOf: ",\"unwindActions\":[".utf8)
            for (index, action) in unwindActions.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                EventJSONWriter.appendString(action, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "}"))
        return output
    }
}
