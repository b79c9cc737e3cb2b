import NavlogReplay

/// The derived tables as SQL tables and export files: their names, columns, types and meanings,
/// and how each row type writes its values in column order (``SQLRowEncoder``). `navlog query sql`
/// (SQLite), `navlog query sql --schema`, `navlog export` and docs/ANALYTICS-TABLES.md all read
/// the same description, so a column is named and typed the same everywhere.

/// The kind of value a column holds.
public enum SQLColumnType: String, Sendable, Hashable {
    /// A 64-bit integer (times are µs since the epoch, durations µs).
    case integer
    /// UTF-8 text.
    case text
    /// A truth value: INTEGER 0/1 in SQLite, `true`/`false` in JSON and CSV exports.
    case boolean

    /// The SQLite column type.
    public var sqlType: String {
        switch self {
        case .integer, .boolean: "INTEGER"
        case .text: "TEXT"
        }
    }
}

/// One column of a derived table.
public struct SQLColumn: Sendable, Hashable {
    /// The column name (snake_case of the row field; the session's tags are flattened).
    public var name: String
    /// What it holds.
    public var type: SQLColumnType
    /// Whether it can be NULL (the row field is optional).
    public var nullable: Bool
    /// One line saying what it means.
    public var meaning: String

    /// A column.
    public init(_ name: String, _ type: SQLColumnType, nullable: Bool = false, _ meaning: String) {
        self.name = name
        self.type = type
        self.nullable = nullable
        self.meaning = meaning
    }
}

/// The six derived tables of ``DerivedTableScanner``.
public enum SQLTable: String, Sendable, Hashable, CaseIterable, Comparable {
    case events
    case screenVisits = "screen_visits"
    case transitions
    case sessions
    case anomalies
    case exits

    /// The table's name in SQL and in export paths.
    public var name: String { rawValue }

    /// Tables in the order they are listed (events first).
    public static func < (lhs: SQLTable, rhs: SQLTable) -> Bool { lhs.ordinal < rhs.ordinal }

    /// The table's position in ``allCases``.
    public var ordinal: Int {
        switch self {
        case .events: 0
        case .screenVisits: 1
        case .transitions: 2
        case .sessions: 3
        case .anomalies: 4
        case .exits: 5
        }
    }

    /// The table with this name, if any.
    public init?(name: String) { self.init(rawValue: name) }

    /// One line saying what a row is.
    public var summary: String {
        switch self {
        case .events: "one row per stored event (large: as many rows as the log has events)"
        case .screenVisits: "one row per screen view: a screen focused (F1) for a positive time; containers and instants are no views (E3)"
        case .transitions: "one row per screen view: the transition into it from the view before (E3)"
        case .sessions: "one row per session"
        case .anomalies: "one row per UIKit misuse (A1–A18) the replay engine reported"
        case .exits: "the screen focused when the app went to the background or the session ended"
        }
    }

    /// The column whose time decides a row's day partition in exports.
    public var timeColumn: String {
        switch self {
        case .screenVisits: "start"
        case .sessions: "first"
        case .events, .transitions, .anomalies, .exits: "timestamp"
        }
    }

    /// The columns, in order.
    public var columns: [SQLColumn] {
        switch self {
        case .events:
            return [
                SQLColumn("lsn", .integer, "the event's log sequence number (its position in the log, from 1)")
            ] + Self.tagColumns + [
                SQLColumn("sequence", .integer, nullable: true, "the client's `seq`, when it sent one"),
                SQLColumn("timestamp", .integer, "the event's time on the device, µs since the epoch"),
                SQLColumn("received_at", .integer, "when navlog received it, µs since the epoch"),
                SQLColumn("type", .text, "the event type, e.g. nav.push"),
                SQLColumn("key", .text, nullable: true, "the key a trusted relay (navlog intake) said sent the event; NULL when no relay passed it on"),
            ]
        case .screenVisits:
            return Self.tagColumns + [
                SQLColumn("screen", .text, "the focused screen: its class (or its id when it has no class)"),
                SQLColumn("storyboard_id", .text, nullable: true, "its storyboard id, when known"),
                SQLColumn("controller", .text, "the controller's id in the session"),
                SQLColumn("start", .integer, "when it became focused, µs since the epoch"),
                SQLColumn("end", .integer, "when it stopped being focused (or the session's last event), µs since the epoch"),
                SQLColumn("dwell", .integer, "µs focused while the app was in the foreground (F4): background time excluded"),
                SQLColumn("how", .text, "how it became focused (as in transitions.how)"),
                SQLColumn("index", .integer, "its position among the session's visits, from 0"),
            ]
        case .transitions:
            return Self.tagColumns + [
                SQLColumn("timestamp", .integer, "when the focus changed, µs since the epoch"),
                SQLColumn("sequence", .integer, nullable: true, "the `seq` of the event that changed it"),
                SQLColumn("from", .text, nullable: true, "the screen left (NULL for the session's first screen)"),
                SQLColumn("to", .text, "the screen reached"),
                SQLColumn(
                    "how", .text,
                    "push, pop, present, dismiss, tab, show, showDetail, segue:IDENTIFIER (segue:KIND without one), unwind, root, split, adapt, cancel, or the event type"
                ),
            ]
        case .sessions:
            return Self.tagColumns + [
                SQLColumn("first", .integer, "the session's first event time, µs since the epoch"),
                SQLColumn("last", .integer, "its last event time, µs since the epoch"),
                SQLColumn("events", .integer, "events in the session"),
                SQLColumn("visits", .integer, "screen visits (rows in screen_visits)"),
                SQLColumn("screens", .integer, "distinct screens focused"),
                SQLColumn("anomalies", .integer, "anomalies reported"),
                SQLColumn("max_stack_depth", .integer, "the deepest navigation stack seen around the focus"),
                SQLColumn("max_presentation_depth", .integer, "the longest chain of presentations seen on the focus path"),
                SQLColumn("exit_screen", .text, nullable: true, "the screen focused at the session's end (NULL if none ever was)"),
                SQLColumn("ended", .boolean, "whether session.end was seen"),
            ]
        case .anomalies:
            return Self.tagColumns + [
                SQLColumn("timestamp", .integer, "the time of the event that raised it, µs since the epoch"),
                SQLColumn("sequence", .integer, nullable: true, "that event's `seq`"),
                SQLColumn("lsn", .integer, nullable: true, "that event's log sequence number"),
                SQLColumn("code", .text, "A1 … A18"),
                SQLColumn("name", .text, "the code's name, e.g. push-duplicate"),
                SQLColumn("rule", .text, nullable: true, "the rule of uikit-navigation-rules.md it breaks, e.g. R8"),
                SQLColumn("fatal", .boolean, "whether UIKit raises an exception for it (the app would have crashed)"),
                SQLColumn("controllers", .text, "the controllers involved, by id, space-separated"),
                SQLColumn("message", .text, "what happened, in a sentence"),
            ]
        case .exits:
            return Self.tagColumns + [
                SQLColumn("timestamp", .integer, "when the app left: app.background or the session's last event, µs since the epoch"),
                SQLColumn("screen", .text, "the screen focused then"),
                SQLColumn("reason", .text, "background or end"),
            ]
        }
    }

    /// The session and its tags, first in every table but events (where lsn comes first).
    static let tagColumns = [
        SQLColumn("session", .text, "the session id"),
        SQLColumn("app", .text, "the app (session.start's app)"),
        SQLColumn("version", .text, "the app's version ('' when not given)"),
        SQLColumn("idiom", .text, "phone, pad, mac, tv, vision ('' when not given)"),
        SQLColumn("device", .text, "the device model ('' when not given)"),
    ]

    /// The tables whose names a SQL text mentions as a word (case-insensitive): only those need
    /// loading. A mention inside a string literal or a comment counts too (it only costs time).
    public static func mentioned(in sql: String) -> Set<SQLTable> {
        var words = Set<String>()
        var word: [UInt8] = []
        func end() {
            if !word.isEmpty { words.insert(String(decoding: word, as: UTF8.self)) }
            word.removeAll(keepingCapacity: true)
        }
        for byte in sql.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), 0x80...:
                word.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                word.append(byte + 32)
            default:
                end()
            }
        }
        end()
        return Set(allCases.filter { words.contains($0.name) })
    }
}

/// Receives a row's values in column order (see ``SQLTable/columns``). SQLite statements, JSON
/// Lines and CSV writers implement it, so every output writes the same columns.
public protocol SQLRowEncoder {
    /// An INTEGER value.
    mutating func integer(_ value: Int64)
    /// A TEXT value.
    mutating func text(_ value: String)
    /// A truth value.
    mutating func boolean(_ value: Bool)
    /// NULL.
    mutating func null()
}

extension SQLRowEncoder {
    /// An INTEGER value or NULL.
    @inline(__always)
    mutating func optionalInteger(_ value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    /// A TEXT value or NULL.
    @inline(__always)
    mutating func optionalText(_ value: String?) {
        if let value { text(value) } else { null() }
    }

    @inline(__always)
    mutating func tags(_ session: String, _ tags: SessionTags) {
        text(session)
        text(tags.app)
        text(tags.version)
        text(tags.idiom)
        text(tags.device)
    }
}

@inline(__always)
func sqlInteger(_ value: UInt64?) -> Int64? {
    value.map { $0 > UInt64(Int64.max) ? Int64.max : Int64($0) }
}

extension EventRow {
    /// Writes the row's values in the order of ``SQLTable/events``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.integer(sqlInteger(lsn)!)
        encoder.tags(session, tags)
        encoder.optionalInteger(sqlInteger(sequence))
        encoder.integer(timestamp)
        encoder.integer(receivedAt)
        encoder.text(type)
        encoder.optionalText(key)
    }
}

extension ScreenVisit {
    /// Writes the row's values in the order of ``SQLTable/screenVisits``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.tags(session, tags)
        encoder.text(view.screen)
        encoder.optionalText(view.storyboardID)
        encoder.text(view.controller)
        encoder.integer(view.start)
        encoder.integer(view.end)
        encoder.integer(view.dwell)
        encoder.text(view.how)
        encoder.integer(Int64(view.index))
    }
}

extension TransitionRow {
    /// Writes the row's values in the order of ``SQLTable/transitions``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.tags(session, tags)
        encoder.integer(timestamp)
        encoder.optionalInteger(sqlInteger(sequence))
        encoder.optionalText(from)
        encoder.text(to)
        encoder.text(how)
    }
}

extension SessionRow {
    /// Writes the row's values in the order of ``SQLTable/sessions``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.tags(session, tags)
        encoder.integer(first)
        encoder.integer(last)
        encoder.integer(Int64(events))
        encoder.integer(Int64(visits))
        encoder.integer(Int64(screens))
        encoder.integer(Int64(anomalies))
        encoder.integer(Int64(maxStackDepth))
        encoder.integer(Int64(maxPresentationDepth))
        encoder.optionalText(exitScreen)
        encoder.boolean(ended)
    }
}

extension AnomalyRow {
    /// Writes the row's values in the order of ``SQLTable/anomalies``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.tags(session, tags)
        encoder.integer(timestamp)
        encoder.optionalInteger(sqlInteger(sequence))
        encoder.optionalInteger(sqlInteger(lsn))
        encoder.text(code)
        encoder.text(name)
        encoder.optionalText(rule)
        encoder.boolean(fatal)
        encoder.text(controllers)
        encoder.text(message)
    }
}

extension ExitRow {
    /// Writes the row's values in the order of ``SQLTable/exits``'s columns.
    public func encodeColumns<Encoder: SQLRowEncoder>(into encoder: inout Encoder) {
        encoder.tags(session, tags)
        encoder.integer(timestamp)
        encoder.text(screen)
        encoder.text(reason)
    }
}

/// A `navlog query sql --schema` listing of every table: name, summary, then one line per column
/// with its SQLite type and meaning.
public func sqlSchemaDescription(markdown: Bool = false) -> String {
    var text = ""
    for table in SQLTable.allCases {
        if markdown {
            text += "### `\(table.name)`\n\n\(table.summary.prefix(1).uppercased() + table.summary.dropFirst()). Day partition: `\(table.timeColumn)`.\n\n"
            text += "| column | SQLite type | export type | NULL | meaning |\n|---|---|---|---|---|\n"
            for column in table.columns {
                let export =
                    switch column.type {
                    case .integer: "integer"
                    case .text: "string"
                    case .boolean: "boolean"
                    }
                let type = column.type == .boolean ? "INTEGER (0/1)" : column.type.sqlType
                text += "| `\(column.name)` | \(type) | \(export) | \(column.nullable ? "yes" : "") | \(column.meaning.replacingPipes) |\n"
            }
            text += "\n"
        } else {
            text += "\(table.name): \(table.summary)\n"
            let width = table.columns.map(\.name.count).max() ?? 0
            for column in table.columns {
                let type = (column.type == .boolean ? "INTEGER 0/1" : column.type.sqlType) + (column.nullable ? " NULL" : "")
                text += "  " + column.name.padded(to: width) + "  " + type.padded(to: 12) + "  " + column.meaning + "\n"
            }
            text += "\n"
        }
    }
    return text
}

extension String {
    fileprivate func padded(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    fileprivate var replacingPipes: String { split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
}
