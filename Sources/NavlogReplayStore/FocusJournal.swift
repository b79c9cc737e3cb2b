public import NavlogEvents
public import NavlogReplay

/// What happened to the focused screen in one segment, recorded while the segment's replay
/// checkpoints are built: every screen view that closed (E3: a focused screen that held the
/// focus for a positive time, with the view it came from), backgrounding, session starts and
/// ends, and the anomalies raised. Analytics reads these instead of replaying the log again;
/// like checkpoints, they are derived data, rebuilt with the index file that holds them.
///
/// ``changes(made:before:after:timestamp:_:)`` is the one place that says what an event
/// changed for analytics: the journal writer records its changes, and a replay of the log
/// without an index (NavlogAnalytics' `DerivedTableScanner`) makes its rows from the same
/// changes, so both routes count screens alike.
public enum FocusJournal {
    /// What one event changed in its session, for analytics.
    public enum Change: Sendable, Hashable {
        /// `session.start`: who the session is.
        case start(app: String, version: String, idiom: String, device: String)
        /// A screen view closed (E3): the focus moved on after a positive time.
        case view(ScreenView)
        /// `app.background`, with the screen focused then.
        case background(screen: String?)
        /// `session.end`: the last view and the session's figures.
        case end(Ending)
        /// An anomaly the event raised.
        case anomaly(AnomalyEntry)
    }

    /// One record: a change of a session at a time.
    public struct Record: Sendable, Hashable {
        /// The session the record is about.
        public var session: String
        /// When: the event's time (an anomaly's: the time of the event it is about).
        public var timestamp: Int64
        /// What changed.
        public var change: Change
    }

    /// An anomaly as the journal records it: the engine's ``Anomaly`` with its controllers
    /// named.
    public struct AnomalyEntry: Sendable, Hashable {
        /// The `seq` and LSN of the event it is about.
        public var sequence: UInt64?
        public var lsn: UInt64?
        public var code: AnomalyCode
        /// The rule of uikit-navigation-rules.md it violates, nil for transport anomalies.
        public var rule: String?
        /// The controllers involved, by id, space-separated.
        public var controllers: String
        public var message: String
    }

    /// What a session's end record holds: the view still open at its end, and its figures.
    public struct Ending: Sendable, Hashable {
        /// The view open at the end (closed by it), nil when no screen was focused.
        public var closed: ScreenView?
        /// How many events and anomalies the session has.
        public var events: Int
        public var anomalies: Int
        /// Its first and last event's time, µs since the epoch.
        public var first: Int64
        public var last: Int64
        /// How many screen views it had (E3), the open one included.
        public var visits: Int
        /// The deepest navigation stack and presentation chain it reached.
        public var stack: Int
        public var presentations: Int
    }

    /// The state of a session before an event, for ``changes(made:before:after:timestamp:_:)``.
    public struct Before {
        var anomalies: Int

        /// Takes what the journal compares from `state` (borrowed: the index build calls this
        /// per event, and a copy of a state retains every one of its arrays).
        public init(_ state: borrowing SessionReplayer) {
            anomalies = state.anomalies.count
        }

        /// A session that had raised `anomalies` anomalies before the event.
        public init(anomalies: Int) {
            self.anomalies = anomalies
        }
    }

    /// Whether event `type` can have changed anything ``changes(made:before:after:timestamp:_:)``
    /// gives, from three figures of the state: a reader that keeps its state in a class asks
    /// this per event before lending the whole state (a class's stored state lent to a function
    /// is copied, every array of it retained).
    public static func mayHaveChanged(_ type: EventType, anomaliesBefore: Int, anomaliesAfter: Int, viewsClosedByLastEvent: Int) -> Bool {
        type == .sessionStart || type == .appBackground || type == .sessionEnd || anomaliesAfter > anomaliesBefore || viewsClosedByLastEvent > 0
    }

    /// Calls `body` with what event `type` at `timestamp` changed between `before` and `after`
    /// (the session's state after applying it), in the order the journal records them: the
    /// session's start; the anomalies it raised; the views it closed, the earlier first (two
    /// only when a pop found completed closes one, E6); backgrounding; the session's end.
    /// Most events change nothing, and then nothing is made.
    public static func changes(
        made type: EventType, before: Before, after: borrowing SessionReplayer, timestamp: Int64, _ body: (_ timestamp: Int64, Change) throws -> Void
    ) rethrows {
        guard
            mayHaveChanged(
                type, anomaliesBefore: before.anomalies, anomaliesAfter: after.anomalies.count, viewsClosedByLastEvent: after.viewsClosedByLastEvent)
        else { return }
        if type == .sessionStart {
            let info = after.info
            try body(timestamp, .start(app: info.app ?? "", version: info.version ?? "", idiom: info.idiom == .unknown ? "" : "\(info.idiom)", device: info.device ?? ""))
        }
        if after.anomalies.count > before.anomalies {
            for anomaly in after.anomalies[before.anomalies...] {
                let entry = AnomalyEntry(
                    sequence: anomaly.event.sequence, lsn: anomaly.event.lsn, code: anomaly.code, rule: anomaly.rule,
                    controllers: anomaly.controllers.map { after.id(of: $0) }.joined(separator: " "), message: anomaly.message)
                try body(anomaly.event.timestamp, .anomaly(entry))
            }
        }
        if after.viewsClosedByLastEvent > 0 {
            if let earlier = after.earlierClosedView, let closed = after.screenView(earlier, end: earlier.end ?? timestamp) {
                try body(timestamp, .view(closed))
            }
            if let closedView = after.closedView, let closed = after.screenView(closedView, end: closedView.end ?? timestamp) {
                try body(timestamp, .view(closed))
            }
        }
        if type == .appBackground {
            try body(timestamp, .background(screen: after.focusedScreenHandle.map { after.controllers[$0].className ?? after.id(of: $0) }))
        }
        if type == .sessionEnd {
            try body(timestamp, .end(Ending(after, end: timestamp)))
        }
    }

    /// The columns of a journal frame, in the order they are written. Records are split
    /// across them by kind of value, and times, sequence numbers and controller addresses are
    /// written as differences from the same session's previous ones, so that zstd finds the
    /// repeats (issue 14: the row-per-record form took ~20 bytes a record compressed).
    enum Column: Int, CaseIterable {
        /// One byte per record: its kind (1 start, 2 view, 3 background, 4 end, 5 anomaly).
        case tags
        /// Records are grouped by session (in the order of each session's first record in the
        /// frame, a session's records in their order): per group, the session's string number
        /// and its record count.
        case sessions
        /// Per record, its time less the session's previous record's time (zigzag).
        case times
        /// Per visit: a byte of which optional parts it has (``VisitFlags``); per background,
        /// whether it has a screen; per anomaly, whether it has a rule.
        case flags
        /// Screen string numbers: a visit's screen and the one it came from (unless it is the
        /// session's previous visit's screen: ``VisitFlags/fromPrevious``), a background's screen.
        case screens
        /// Per visit, its controller, in the low two bits how: 2, a hexadecimal address (`0x…`)
        /// among the session's eight most recent ones (its position above them: users go back
        /// to screens they saw); 1, another address, as its difference from the most recent one
        /// (zigzag, above); 0, any other id, as its string number (above).
        case controllers
        /// Per visit: end less the record time, start less the session's previous visit's end,
        /// and (end − start) less dwell, all zigzag: mostly zeros.
        case visitTimes
        /// Small numbers: a visit's cause, index (less the one after the session's previous
        /// visit's) and `seq` (less the session's previous one), a session end's figures, an
        /// anomaly's `seq`, LSN and code.
        case numbers
        /// Other string numbers: a start's app, version, idiom and device; a visit's storyboard
        /// id and detail; an anomaly's rule, controllers and message.
        case strings
    }

    /// Which optional parts a visit has.
    enum VisitFlags {
        static let present: UInt8 = 1
        static let storyboardID: UInt8 = 2
        static let detail: UInt8 = 4
        static let from: UInt8 = 8
        static let sequence: UInt8 = 16
        /// The view came from the screen of the session's previous visit (not written again).
        static let fromPrevious: UInt8 = 32
    }

    /// What a session's previous records were, for the differences the columns hold.
    struct SessionPrevious {
        var time: Int64 = 0
        var visitEnd: Int64 = 0
        var sequence: UInt64 = 0
        /// The session's most recent controller addresses, the latest first.
        var addresses = SIMD8<UInt64>()

        /// Where `address` is among ``addresses`` (nil: not there); moves it to the front.
        mutating func use(_ address: UInt64) -> Int? {
            withUnsafeMutableBytes(of: &addresses) { raw in
                let slots = raw.assumingMemoryBound(to: UInt64.self)
                var position = 0
                while position < 8 && slots[position] != address { position += 1 }
                Self.moveToFront(address, from: position, in: slots)
                return position < 8 ? position : nil
            }
        }

        /// Puts `address`, found at `position` (8: not there), first, the addresses before it
        /// one place further back (the last one out when it was not there).
        mutating func moveToFront(_ address: UInt64, from position: Int) {
            withUnsafeMutableBytes(of: &addresses) { raw in Self.moveToFront(address, from: position, in: raw.assumingMemoryBound(to: UInt64.self)) }
        }

        /// Through a pointer: a SIMD vector's lanes indexed by a variable are read and written
        /// one at a time through a copy of the vector (6.5% of a `query screens`).
        private static func moveToFront(_ address: UInt64, from position: Int, in slots: UnsafeMutableBufferPointer<UInt64>) {
            var index = min(position, 7)
            while index > 0 {
                slots[index] = slots[index - 1]
                index -= 1
            }
            slots[0] = address
        }
        /// The index the next visit has when none was skipped.
        var nextIndex: Int = 0
        /// The previous visit's screen string number + 1 (0: none yet).
        var screen: UInt64 = 0
    }

    /// Builds one segment's journal: records refer to strings by their number in a table
    /// written first, so reading makes each distinct string once (session ids repeat in every
    /// record of the session); the records are stored column by column (``Column``).
    public struct Writer {
        /// One session's records: they are written together (grouped), so that a session's
        /// deltas follow one another.
        private struct SessionGroup {
            /// The session's string number.
            var key: Int
            /// Its records.
            var records = 0
            /// Its records' bytes, per ``Column``.
            var columns = [[UInt8]](repeating: [], count: Column.allCases.count)
        }

        /// Per session, in the order of its first record.
        private var groups: [SessionGroup] = []
        /// Per string number, its group + 1 (0: none).
        private var groupOfKey: [Int] = []
        /// The group being written.
        private var current = 0
        /// The columns of the group being written (``openGroup``), out of ``groups`` while it is:
        /// an append then checks two arrays for uniqueness, not three (the index build appends
        /// a few bytes per event).
        private var open = [[UInt8]](repeating: [], count: Column.allCases.count)
        private var openGroup = -1
        private var strings = ByteStringTable()
        /// Per string number (for the strings that are sessions), the session's previous values.
        private var previous: [SessionPrevious] = []
        /// Records written so far.
        private var records = 0
        /// Sessions re-derived in this journal (E4), with how many of their records in this
        /// journal came before their re-derived ones.
        private var rederived: [(session: [UInt8], key: Int, recordsBefore: Int)] = []

        public init() {}

        /// Whether nothing was recorded.
        public var isEmpty: Bool { records == 0 && rederived.isEmpty }

        /// Bytes of records so far (a builder starts a new journal frame past a size).
        public var recordBytes: Int { groups.indices.reduce(0) { total, group in columns(of: group).reduce(total) { $0 + $1.count } } }

        /// The columns of `group` so far.
        private func columns(of group: Int) -> [[UInt8]] { group == openGroup ? open : groups[group].columns }

        /// Starts the records of `session` replayed again from its first event in `seq` order
        /// (E4, after a late event): readers drop every record of the session before this
        /// point, in this journal and in the earlier ones, and read these instead.
        public mutating func beginRederived(session: UnsafeRawBufferPointer) {
            let key = Int(strings.intern(session))
            let group = key < groupOfKey.count ? groupOfKey[key] : 0
            rederived.append((Array(session), key, group == 0 ? 0 : groups[group - 1].records))
        }

        /// The journal: the re-derived sessions, the string table, then the columns (each its
        /// length and bytes).
        public func finished() -> [UInt8] {
            var output: [UInt8] = []
            // A re-derived session's first record, numbered in the frame's (grouped) order.
            var groupStart: [Int] = []
            var recordNumber = 0
            for group in groups {
                groupStart.append(recordNumber)
                recordNumber += group.records
            }
            Varint.append(UInt64(rederived.count), to: &output)
            for (session, key, recordsBefore) in rederived {
                Varint.append(UInt64(session.count), to: &output)
                output.append(contentsOf: session)
                let group = key < groupOfKey.count ? groupOfKey[key] : 0
                Varint.append(UInt64(group == 0 ? recordNumber : groupStart[group - 1] + recordsBefore), to: &output)
            }
            Varint.append(UInt64(strings.count), to: &output)
            for number in 0..<strings.count {
                strings.withString(UInt32(number)) { raw in
                    Varint.append(UInt64(raw.count), to: &output)
                    output.append(contentsOf: raw)
                }
            }
            Varint.append(UInt64(Column.allCases.count), to: &output)
            for column in Column.allCases {
                var bytes: [UInt8] = []
                if column == .sessions {
                    for group in groups {
                        Varint.append(UInt64(group.key), to: &bytes)
                        Varint.append(UInt64(group.records), to: &bytes)
                    }
                } else {
                    for group in groups.indices { bytes.append(contentsOf: columns(of: group)[column.rawValue]) }
                }
                Varint.append(UInt64(bytes.count), to: &output)
                output.append(contentsOf: bytes)
            }
            return output
        }

        /// Appends what event `type` of `session` changed between `before` and `after`.
        public mutating func record(
            _ type: EventType, session: UnsafeRawBufferPointer, before: Before, after: SessionReplayer, timestamp: Int64
        ) {
            record(type, key: key(of: session), before: before, after: after, timestamp: timestamp)
        }

        /// The number this journal knows `session` by, for ``record(_:key:before:after:timestamp:)``
        /// (the same until the journal is finished): a builder that keeps it per session hashes
        /// the session's id once per journal instead of once per event.
        public mutating func key(of session: UnsafeRawBufferPointer) -> Int {
            let key = Int(strings.intern(session))
            if key >= previous.count {
                previous.append(contentsOf: repeatElement(SessionPrevious(), count: key + 1 - previous.count))
                groupOfKey.append(contentsOf: repeatElement(0, count: key + 1 - groupOfKey.count))
            }
            return key
        }

        /// Appends what event `type` changed between `before` and `after` of the session this
        /// journal numbers `key` (``key(of:)``): the records of ``FocusJournal/changes(made:before:after:timestamp:_:)``.
        public mutating func record(
            _ type: EventType, key: Int, before: Before, after: borrowing SessionReplayer, timestamp: Int64
        ) {
            FocusJournal.changes(made: type, before: before, after: after, timestamp: timestamp) { time, change in
                record(change, key: key, timestamp: time)
            }
        }

        /// Appends one record of the session this journal numbers `key`.
        mutating func record(_ change: Change, key: Int, timestamp: Int64) {
            switch change {
            case .start(let app, let version, let idiom, let device):
                begin(1, key: key, timestamp: timestamp)
                for text in [app, version, idiom, device] { string(text, .strings) }
            case .view(let view):
                begin(2, key: key, timestamp: timestamp)
                visit(view, key: key, timestamp: timestamp)
            case .background(let screen):
                begin(3, key: key, timestamp: timestamp)
                append(screen == nil ? 0 : 1, .flags)
                if let screen { string(screen, .screens) }
            case .end(let ending):
                begin(4, key: key, timestamp: timestamp)
                visit(ending.closed, key: key, timestamp: timestamp)
                number(UInt64(ending.events))
                number(UInt64(ending.anomalies))
                number(Varint.zigzag(ending.first &- timestamp))
                number(Varint.zigzag(ending.last &- timestamp))
                number(UInt64(ending.visits))
                number(UInt64(ending.stack))
                number(UInt64(ending.presentations))
            case .anomaly(let anomaly):
                begin(5, key: key, timestamp: timestamp)
                number(anomaly.sequence.map { $0 &+ 1 } ?? 0)
                number(anomaly.lsn.map { $0 &+ 1 } ?? 0)
                append(anomaly.code.rawValue, .numbers)
                append(anomaly.rule == nil ? 0 : 1, .flags)
                if let rule = anomaly.rule { string(rule, .strings) }
                string(anomaly.controllers, .strings)
                string(anomaly.message, .strings)
            }
        }

        private mutating func begin(_ tag: UInt8, key: Int, timestamp: Int64) {
            records += 1
            if groupOfKey[key] == 0 {
                groups.append(SessionGroup(key: key))
                groupOfKey[key] = groups.count
            }
            current = groupOfKey[key] - 1
            if current != openGroup {
                if openGroup >= 0 { swap(&open, &groups[openGroup].columns) }
                swap(&open, &groups[current].columns)
                openGroup = current
            }
            groups[current].records += 1
            append(tag, .tags)
            varint(Varint.zigzag(timestamp &- previous[key].time), .times)
            previous[key].time = timestamp
        }

        private mutating func append(_ byte: UInt8, _ column: Column) {
            open[column.rawValue].append(byte)
        }

        private mutating func varint(_ value: UInt64, _ column: Column) {
            Varint.append(value, to: &open[column.rawValue])
        }

        private mutating func number(_ value: UInt64) {
            varint(value, .numbers)
        }

        @discardableResult
        private mutating func string(_ text: String, _ column: Column) -> UInt32 {
            var text = text
            let number = text.withUTF8 { strings.intern(UnsafeRawBufferPointer($0)) }
            varint(UInt64(number), column)
            return number
        }

        private mutating func visit(_ visit: ScreenView?, key: Int, timestamp: Int64) {
            guard let visit else {
                append(0, .flags)
                return
            }
            var fromNumber: UInt32?
            if let from = visit.from {
                var from = from
                fromNumber = from.withUTF8 { strings.intern(UnsafeRawBufferPointer($0)) }
            }
            var flags = VisitFlags.present
            if visit.storyboardID != nil { flags |= VisitFlags.storyboardID }
            if visit.detail != nil { flags |= VisitFlags.detail }
            if let fromNumber {
                flags |= UInt64(fromNumber) + 1 == previous[key].screen ? VisitFlags.fromPrevious : VisitFlags.from
            }
            if visit.sequence != nil { flags |= VisitFlags.sequence }
            append(flags, .flags)
            let screen = string(visit.screen, .screens)
            previous[key].screen = UInt64(screen) + 1
            if flags & VisitFlags.from != 0, let fromNumber { varint(UInt64(fromNumber), .screens) }
            if let storyboardID = visit.storyboardID { string(storyboardID, .strings) }
            if let detail = visit.detail { string(detail, .strings) }
            if let address = FocusJournal.address(visit.controller) {
                let latest = previous[key].addresses[0]
                if let position = previous[key].use(address) {
                    varint(UInt64(position) << 2 | 2, .controllers)
                } else {
                    varint(Varint.zigzag(Int64(bitPattern: address &- latest)) << 2 | 1, .controllers)
                }
            } else {
                var controller = visit.controller
                let number = controller.withUTF8 { strings.intern(UnsafeRawBufferPointer($0)) }
                varint(UInt64(number) << 2, .controllers)
            }
            varint(Varint.zigzag(timestamp &- visit.end), .visitTimes)
            varint(Varint.zigzag(visit.start &- previous[key].visitEnd), .visitTimes)
            varint(Varint.zigzag((visit.end &- visit.start) &- visit.dwell), .visitTimes)
            previous[key].visitEnd = visit.end
            append(visit.cause.rawValue, .numbers)
            number(Varint.zigzag(Int64(visit.index &- previous[key].nextIndex)))
            previous[key].nextIndex = visit.index &+ 1
            if let sequence = visit.sequence {
                number(Varint.zigzag(Int64(bitPattern: sequence &- previous[key].sequence)))
                previous[key].sequence = sequence
            }
        }
    }

    /// The value of a controller id that is a hexadecimal address in the form `0x` + lowercase
    /// digits without leading zeros (what UIKit's `%p` prints), so that ``addressText(_:)``
    /// gives the same text back; nil for any other id.
    static func address(_ id: String) -> UInt64? {
        var id = id
        return id.withUTF8 { raw -> UInt64? in
            guard raw.count >= 3, raw.count <= 18, raw[0] == UInt8(ascii: "0"), raw[1] == UInt8(ascii: "x") else { return nil }
            var value: UInt64 = 0
            for index in 2..<raw.count {
                let byte = raw[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                default: return nil
                }
                if index == 2 && digit == 0 && raw.count > 3 { return nil }
                value = value << 4 | UInt64(digit)
            }
            return value
        }
    }

    /// The text of an address (the inverse of ``address(_:)``).
    static func addressText(_ value: UInt64) -> String {
        "0x" + String(value, radix: 16)
    }

    /// Checks a journal's structure without making any string (readers check all journals
    /// before they use any, so that a damaged one never leaves a report half made).
    public static func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (try? decode(bytes, makeStrings: false) { _, _ in }) ?? false
    }

    /// Decodes records; stops (returning false) at the first malformed one. `visit` also gets
    /// the number of the record's session in this journal's string table (stable within one
    /// journal: cheaper to look up than the id). `controllerIDs`: false leaves each visit's
    /// ``ScreenView/controller`` empty, for a reader that does not show it.
    public static func decode(_ bytes: UnsafeRawBufferPointer, controllerIDs: Bool = true, _ visit: (Record, Int) throws -> Void) rethrows -> Bool {
        try decode(bytes, makeStrings: true, controllerIDs: controllerIDs, visit)
    }

    /// The sessions a journal re-derived (``Writer/beginRederived(session:)``), each with the
    /// number of its first re-derived record; nil when the journal is malformed.
    public static func rederivedSessions(_ bytes: UnsafeRawBufferPointer) -> [(session: String, firstRecord: Int)]? {
        var reader = ByteReader(bytes)
        return readRederived(&reader, makeStrings: true)
    }

    static func readRederived(_ reader: inout ByteReader, makeStrings: Bool) -> [(session: String, firstRecord: Int)]? {
        guard let count = reader.readCount(limit: reader.remaining) else { return nil }
        var sessions: [(String, Int)] = []
        for _ in 0..<count {
            guard let length = reader.readCount(limit: reader.remaining), let raw = reader.readBytes(length), let first = reader.readVarint(),
                first <= UInt64(Int.max)
            else { return nil }
            if makeStrings { sessions.append((String(decoding: raw, as: UTF8.self), Int(first))) }
        }
        return sessions
    }
}

// In an extension, so that Swift still makes the memberwise initializer the journal's decoder uses.
extension FocusJournal.Ending {
    /// The view `state` has open, closed at `end`, and its figures.
    public init(_ state: borrowing SessionReplayer, end: Int64) {
        let info = state.info
        closed = state.screenView(state.visit, end: end)
        events = state.eventCount
        anomalies = state.anomalies.count
        first = info.firstTimestamp ?? 0
        last = info.lastTimestamp ?? 0
        visits = state.viewsClosed + (closed == nil ? 0 : 1)
        stack = state.deepest.stack
        presentations = state.deepest.presentations
    }
}
