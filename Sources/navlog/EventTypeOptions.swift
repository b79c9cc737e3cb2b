import ArgumentParser
import NavlogEvents

/// Parses `--type` values (repeated and/or comma-separated) into event types.
/// - Returns: nil when no type was given (every type).
/// - Throws: a `ValidationError` naming the unknown type and listing the known ones.
func parseEventTypes(_ values: [String]) throws -> Set<EventType>? {
    guard !values.isEmpty else { return nil }
    var set = Set<EventType>()
    for name in values.flatMap({ $0.split(separator: ",").map(String.init) }) {
        guard let type = EventType(name: name) else {
            let known = EventType.allCases.map(\.name).joined(separator: ", ")
            throw ValidationError("\(name) is not an event type. Known types: \(known).")
        }
        set.insert(type)
    }
    return set
}
