/// A record, or part of one, that could not be imported: where it is and why. The rest of the
/// input still imports.
public struct ImportIssue: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is (a struct, so that kinds can be added).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        /// Not JSON, or cut short.
        public static let syntax = Code(name: "syntax")
        /// JSON, but a field has the wrong type or is missing.
        public static let shape = Code(name: "shape")
        /// A time that cannot be read.
        public static let timestamp = Code(name: "timestamp")
        /// Over a size limit.
        public static let tooLarge = Code(name: "too-large")
        /// The code's name.
        public var description: String { name }
    }

    /// The kind of problem.
    public var code: Code
    /// The 1-based line of the input where the record (or the part) begins.
    public var line: Int
    /// The JSON path inside the record, e.g. `entries[1].data.values[3].timestamp` (empty for the whole record).
    public var path: String
    /// Why, as a phrase.
    public var reason: String

    /// An issue.
    public init(code: Code, line: Int, path: String = "", reason: String) {
        self.code = code
        self.line = line
        self.path = path
        self.reason = reason
    }

    /// `line 12, entries[1].data.values[3].timestamp: expected …; it was skipped`-style text.
    public var description: String {
        path.isEmpty ? "line \(line): \(reason)" : "line \(line), \(path): \(reason)"
    }
}

/// What an import read and did, for its summary line.
public struct ImportStatistics: Sendable, Equatable {
    /// Records read (Sentry: events; Datadog: view events; Firebase: rows).
    public var records = 0
    /// Records or parts of records skipped because they could not be imported.
    public var skipped = 0
    /// Records of kinds navlog does not import (other breadcrumb categories, other RUM event
    /// types, other Firebase events), counted and left out.
    public var ignored = 0
    /// Records that were the same as one already read (Datadog's older document versions,
    /// Sentry breadcrumbs repeated across events of one session).
    public var superseded = 0
    /// Controllers that are never screens (containers, UIKit internals), left out.
    public var notScreens = 0
    /// Sessions written.
    public var sessions = 0
    /// Event lines written.
    public var events = 0

    /// Empty counts.
    public init() {}
}
