/// The field names of the vocabulary, encoded as one byte in stored events.
///
/// The raw values are written to disk: never change or reuse one, only append (below 128;
/// keys outside this list are stored as strings).
public enum FieldName: UInt8, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case type = 1, session, ts, seq, v, cause
    case app, version, build, os, device, idiom, traits, h, reason
    case window, vc, nav, animated, vcs, tab, selected, index, byUser
    case split, primary, secondary, supplementary
    case from, style, transition, anchor, alertStyle
    case identifier, kind, source, destination, action, relationship, phase, result, segueClass
    case target, parent, slot, id, interactive, completed, name, props
    case `class`, sbid, storyboard, title, definesContext, unwindActions, restorationId
    case barButtonItem, sourceView, sourceRect, x, y, width, height
    case hello, client, ack

    /// The key as written in JSON.
    public var name: String { Self.names[Int(rawValue)] }

    public var description: String { name }

    static let names: [String] = [
        "", "type", "session", "ts", "seq", "v", "cause",
        "app", "version", "build", "os", "device", "idiom", "traits", "h", "reason",
        "window", "vc", "nav", "animated", "vcs", "tab", "selected", "index", "byUser",
        "split", "primary", "secondary", "supplementary",
        "from", "style", "transition", "anchor", "alertStyle",
        "identifier", "kind", "source", "destination", "action", "relationship", "phase", "result", "segueClass",
        "target", "parent", "slot", "id", "interactive", "completed", "name", "props",
        "class", "sbid", "storyboard", "title", "definesContext", "unwindActions", "restorationId",
        "barButtonItem", "sourceView", "sourceRect", "x", "y", "width", "height",
        "hello", "client", "ack",
    ]

    /// The names as bytes, indexed by raw value.
    static let nameBytes: [[UInt8]] = names.map { Array($0.utf8) }

    /// The names already escaped and quoted for JSON output (`"name":`), indexed by raw value.
    static let jsonKeys: [[UInt8]] = names.map { Array("\"\($0)\":".utf8) }

    /// Buckets of raw values by name length, so a lookup compares only same-length names.
    static let byLength: [[UInt8]] = {
        var buckets = [[UInt8]](repeating: [], count: 32)
        for field in FieldName.allCases { buckets[field.name.utf8.count].append(field.rawValue) }
        return buckets
    }()

    /// Finds the field whose name is exactly `bytes`.
    static func lookup(_ bytes: UnsafeRawBufferPointer) -> FieldName? {
        guard bytes.count < byLength.count else { return nil }
        for raw in byLength[bytes.count] {
            if nameBytes[Int(raw)].withUnsafeBytes({ bytesEqual($0, bytes) }) { return FieldName(rawValue: raw) }
        }
        return nil
    }
}
