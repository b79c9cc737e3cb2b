/// Why an event line was not accepted: which line, where in it, and what was expected.
///
/// Nothing of a rejected line is stored; the lines around it are unaffected.
public struct EventRejection: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of a rejection; stable names usable in counters and tests.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable identifier such as `missing` or `unknown-field`.
        public let name: String
        private init(_ name: String) { self.name = name }
        /// The line is not valid JSON.
        public static let json = Code("json")
        /// The line is not valid UTF-8 (or a `\u` escape makes a lone surrogate).
        public static let utf8 = Code("utf8")
        /// The line is JSON but not an object.
        public static let notObject = Code("not-object")
        /// The line is longer than the configured limit.
        public static let tooLong = Code("too-long")
        /// An object repeats a key.
        public static let duplicateKey = Code("duplicate-key")
        /// `type` names no known event type.
        public static let unknownType = Code("unknown-type")
        /// A required field is absent.
        public static let missing = Code("missing")
        /// A field has the wrong JSON type.
        public static let type = Code("type")
        /// A string is not one of the allowed values.
        public static let `enum` = Code("enum")
        /// A number or length is out of the allowed range.
        public static let range = Code("range")
        /// A key that the event type does not define.
        public static let unknownField = Code("unknown-field")
        /// A string that must not be empty is empty.
        public static let empty = Code("empty")
        /// `v` names a protocol version this navlog does not speak.
        public static let version = Code("version")
        /// `ts` is a string that is not an RFC 3339 date-time.
        public static let timestamp = Code("timestamp")
        /// A string does not have the form its field requires (a relay's key id).
        public static let pattern = Code("pattern")
        /// The sender may not say what the line says (a relay line from a peer navlogd does not
        /// trust to relay: relayUIDs, relayGIDs).
        public static let forbidden = Code("forbidden")
        /// Every code, for counters.
        public static let all: [Code] = [
            .json, .utf8, .notObject, .tooLong, .duplicateKey, .unknownType, .missing, .type, .enum, .range, .unknownField, .empty, .version, .timestamp,
            .pattern, .forbidden,
        ]
        public var description: String { name }
    }

    /// The category.
    public var code: Code
    /// The 1-based line number in the connection or file.
    public var line: Int
    /// The 1-based byte column where the problem was found, when known.
    public var column: Int?
    /// The field path such as `vc.class` or `vcs[2].id`, when a field is at fault.
    public var path: String?
    /// What is wrong, as a sentence fragment without the location (`expected a string, found a number`).
    public var reason: String

    /// Creates a rejection.
    public init(code: Code, line: Int, column: Int? = nil, path: String? = nil, reason: String) {
        self.code = code
        self.line = line
        self.column = column
        self.path = path
        self.reason = reason
    }

    /// One line that names the location and the problem, e.g.
    /// `line 12, column 40, field "vc.class": expected a string, found a number`.
    public var description: String {
        var text = "line \(line)"
        if let column { text += ", column \(column)" }
        if let path { text += ", field \"\(path)\"" }
        return text + ": " + reason
    }
}
