public import NavlogEvents
public import NavlogReplay

/// What happened to the focused screen in one segment, recorded while the segment's replay
/// checkpoints are built: every screen view that closed (E3: a focused screen that held the
/// focus for a positive time, with the view it came from), backgrounding, session starts and
/// ends, and the anomalies raised. Analytics reads these
/// instead of replaying the log again; like checkpoints, they are derived data, rebuilt with
/// the index file that holds them.
public enum FocusJournal {
    /// A screen visit as the journal records it.
    public struct Visit: Sendable, Hashable {
        public var screen: String
        public var storyboardID: String?
        public var controller: String
        public var start: Int64
        public var end: Int64
        public var dwell: Int64
        public var cause: EventType
        public var detail: String?
        public var index: Int
        /// The screen of the view before it (the transition into it came from there).
        public var from: String?
        /// The `seq` of the event that began it.
        public var sequence: UInt64?
    }

    /// One record.
    public enum Record: Sendable, Hashable {
        /// `session.start`: who the session is.
        case start(session: String, timestamp: Int64, app: String, version: String, idiom: String, device: String)
        /// A screen view closed at `timestamp` (E3): the focus moved on after a positive time.
        case view(session: String, timestamp: Int64, visit: Visit)
        /// `app.background`, with the screen focused then.
        case background(session: String, timestamp: Int64, screen: String?)
        /// `session.end`: the last visit and the session's figures.
        case end(
            session: String, timestamp: Int64, closed: Visit?, events: Int, anomalies: Int, first: Int64, last: Int64, visits: Int, stack: Int,
            presentations: Int)
        /// An anomaly.
        case anomaly(
            session: String, timestamp: Int64, sequence: UInt64?, lsn: UInt64?, code: String, name: String, rule: String?, fatal: Bool,
            controllers: String, message: String)

        /// The session the record is about.
        public var session: String {
            switch self {
            case .start(let session, _, _, _, _, _), .view(let session, _, _), .background(let session, _, _),
                .end(let session, _, _, _, _, _, _, _, _, _), .anomaly(let session, _, _, _, _, _, _, _, _, _):
                session
            }
        }
    }

    /// The state of a session before an event, for ``Writer/record(_:session:before:after:sequence:timestamp:body:)``.
    public struct Before {
        var anomalies: Int

        /// Takes what the journal compares from `state`.
        public init(_ state: SessionReplayer) {
            anomalies = state.anomalies.count
        }
    }

    /// `visit` of `state` (the view ``SessionReplayer/closedView`` reports, or the one still
    /// open) as a journal visit ending at `end`; nil when it has no screen.
    public static func view(_ state: SessionReplayer, _ visit: SessionReplayer.FocusVisit, end: Int64) -> Visit? {
        guard visit.screen >= 0, Int(visit.screen) < state.controllers.count else { return nil }
        let handle = ControllerHandle(index: visit.screen)
        let controller = state.controllers[handle]
        // The screen's dwell now, less its dwell when the view began (the view's share of F4).
        // A closed view is read right after the event that closed it, when no dwell was added since.
        let total = Int(handle.index) < state.dwell.count ? state.dwell[Int(handle.index)] : 0
        let (difference, overflow) = total.subtractingReportingOverflow(visit.dwellBaseline)
        let dwell = overflow ? 0 : difference
        let from = visit.from >= 0 && Int(visit.from) < state.controllers.count ? state.controllers[ControllerHandle(index: visit.from)] : nil
        return Visit(
            screen: controller.className ?? controller.id, storyboardID: controller.storyboardID, controller: controller.id, start: visit.since,
            end: max(end, visit.since), dwell: max(0, dwell), cause: visit.cause, detail: visit.detail, index: visit.index,
            from: from.map { $0.className ?? $0.id }, sequence: visit.sequence)
    }

    /// The view a session still has open at the end of the log, and its figures (for sessions
    /// with no `session.end` yet).
    public static func openSession(_ state: SessionReplayer) -> (closed: Visit?, figures: Record)? {
        let info = state.info
        let end = info.lastTimestamp ?? 0
        let closed = view(state, state.visit, end: end)
        return (
            closed,
            .end(
                session: "", timestamp: end, closed: closed, events: state.eventCount, anomalies: state.anomalies.count, first: info.firstTimestamp ?? 0,
                last: end, visits: state.viewsClosed + (closed == nil ? 0 : 1), stack: state.deepest.stack, presentations: state.deepest.presentations)
        )
    }

    /// Builds one segment's journal: records refer to strings by their number in a table
    /// written first, so reading makes each distinct string once (session ids repeat in every
    /// record of the session).
    public struct Writer {
        private(set) var bytes: [UInt8] = []
        private var strings = ByteStringTable()
        /// Records written so far.
        private var records = 0
        /// Sessions re-derived in this journal (E4), with the number of the record where their
        /// re-derived records begin.
        private var rederived: [(session: [UInt8], firstRecord: Int)] = []

        public init() {}

        /// Whether nothing was recorded.
        public var isEmpty: Bool { bytes.isEmpty && rederived.isEmpty }

        /// Bytes of records so far (a builder starts a new journal frame past a size).
        public var recordBytes: Int { bytes.count }

        /// Starts the records of `session` replayed again from its first event in `seq` order
        /// (E4, after a late event): readers drop every record of the session before this
        /// point, in this journal and in the earlier ones, and read these instead.
        public mutating func beginRederived(session: UnsafeRawBufferPointer) {
            rederived.append((Array(session), records))
        }

        /// The journal: the re-derived sessions, the string table, then the records.
        public func finished() -> [UInt8] {
            var output: [UInt8] = []
            Varint.append(UInt64(rederived.count), to: &output)
            for (session, firstRecord) in rederived {
                Varint.append(UInt64(session.count), to: &output)
                output.append(contentsOf: session)
                Varint.append(UInt64(firstRecord), to: &output)
            }
            Varint.append(UInt64(strings.count), to: &output)
            for number in 0..<strings.count {
                strings.withString(UInt32(number)) { raw in
                    Varint.append(UInt64(raw.count), to: &output)
                    output.append(contentsOf: raw)
                }
            }
            output.append(contentsOf: bytes)
            return output
        }

        /// Appends what event `type` of `session` changed between `before` and `after`.
        public mutating func record(
            _ type: EventType, session: UnsafeRawBufferPointer, before: Before, after: SessionReplayer, sequence: UInt64?, timestamp: Int64, body: StoredBody
        ) {
            if type == .sessionStart {
                let info = after.info
                records += 1
                bytes.append(1)
                string(session)
                Varint.append(Varint.zigzag(timestamp), to: &bytes)
                for text in [info.app ?? "", info.version ?? "", info.idiom == .unknown ? "" : "\(info.idiom)", info.device ?? ""] { string(text) }
            }
            if after.anomalies.count > before.anomalies {
                for anomaly in after.anomalies[before.anomalies...] {
                    records += 1
                    bytes.append(5)
                    string(session)
                    Varint.append(Varint.zigzag(anomaly.event.timestamp), to: &bytes)
                    Varint.append(anomaly.event.sequence.map { $0 &+ 1 } ?? 0, to: &bytes)
                    Varint.append(anomaly.event.lsn.map { $0 &+ 1 } ?? 0, to: &bytes)
                    bytes.append(anomaly.code.rawValue)
                    optional(anomaly.rule)
                    string(anomaly.controllers.map { after.id(of: $0) }.joined(separator: " "))
                    string(anomaly.message)
                }
            }
            let focus = after.focusedScreenHandle
            if let closedView = after.closedView, let closed = FocusJournal.view(after, closedView, end: timestamp) {
                records += 1
                bytes.append(2)
                string(session)
                Varint.append(Varint.zigzag(timestamp), to: &bytes)
                visit(closed)
            }
            if type == .appBackground {
                records += 1
                bytes.append(3)
                string(session)
                Varint.append(Varint.zigzag(timestamp), to: &bytes)
                optional(focus.map { after.controllers[$0].className ?? after.id(of: $0) })
            }
            if type == .sessionEnd {
                let info = after.info
                records += 1
                bytes.append(4)
                string(session)
                Varint.append(Varint.zigzag(timestamp), to: &bytes)
                let open = FocusJournal.view(after, after.visit, end: timestamp)
                visit(open)
                for value in [after.eventCount, after.anomalies.count] { Varint.append(UInt64(value), to: &bytes) }
                Varint.append(Varint.zigzag(info.firstTimestamp ?? 0), to: &bytes)
                Varint.append(Varint.zigzag(info.lastTimestamp ?? 0), to: &bytes)
                Varint.append(UInt64(after.viewsClosed + (open == nil ? 0 : 1)), to: &bytes)
                Varint.append(UInt64(after.deepest.stack), to: &bytes)
                Varint.append(UInt64(after.deepest.presentations), to: &bytes)
            }
        }

        private mutating func string(_ raw: UnsafeRawBufferPointer) {
            Varint.append(UInt64(strings.intern(raw)), to: &bytes)
        }

        private mutating func string(_ text: String) {
            var text = text
            text.withUTF8 { string(UnsafeRawBufferPointer($0)) }
        }

        private mutating func optional(_ text: String?) {
            if let text {
                bytes.append(1)
                string(text)
            } else {
                bytes.append(0)
            }
        }

        private mutating func visit(_ visit: Visit?) {
            guard let visit else {
                bytes.append(0)
                return
            }
            bytes.append(1)
            string(visit.screen)
            optional(visit.storyboardID)
            string(visit.controller)
            Varint.append(Varint.zigzag(visit.start), to: &bytes)
            Varint.append(Varint.zigzag(visit.end), to: &bytes)
            Varint.append(Varint.zigzag(visit.dwell), to: &bytes)
            bytes.append(visit.cause.rawValue)
            optional(visit.detail)
            Varint.append(UInt64(visit.index), to: &bytes)
            optional(visit.from)
            Varint.append(visit.sequence.map { $0 &+ 1 } ?? 0, to: &bytes)
        }
    }

    /// Checks a journal's structure without making any string (readers check all journals
    /// before they use any, so that a damaged one never leaves a report half made).
    public static func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (try? decode(bytes, makeStrings: false) { _, _ in }) ?? false
    }

    /// Decodes records; stops (returning false) at the first malformed one. `visit` also gets
    /// the number of the record's session in this journal's string table (stable within one
    /// journal: cheaper to look up than the id).
    public static func decode(_ bytes: UnsafeRawBufferPointer, _ visit: (Record, Int) throws -> Void) rethrows -> Bool {
        try decode(bytes, makeStrings: true, visit)
    }

    /// The sessions a journal re-derived (``Writer/beginRederived(session:)``), each with the
    /// number of its first re-derived record; nil when the journal is malformed.
    public static func rederivedSessions(_ bytes: UnsafeRawBufferPointer) -> [(session: String, firstRecord: Int)]? {
        var reader = ByteReader(bytes)
        return readRederived(&reader, makeStrings: true)
    }

    private static func readRederived(_ reader: inout ByteReader, makeStrings: Bool) -> [(session: String, firstRecord: Int)]? {
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

    private static func decode(_ bytes: UnsafeRawBufferPointer, makeStrings: Bool, _ visitor: (Record, Int) throws -> Void) rethrows -> Bool {
        var reader = ByteReader(bytes)
        guard readRederived(&reader, makeStrings: false) != nil else { return false }
        guard let tableCount = reader.readCount(limit: bytes.count) else { return false }
        var table: [String] = []
        if makeStrings { table.reserveCapacity(tableCount) }
        for _ in 0..<tableCount {
            guard let length = reader.readCount(limit: reader.remaining), let raw = reader.readBytes(length) else { return false }
            if makeStrings { table.append(String(decoding: raw, as: UTF8.self)) }
        }
        func string() -> String? {
            guard let number = reader.readVarint(), number < UInt64(tableCount) else { return nil }
            return makeStrings ? table[Int(number)] : ""
        }
        func optional() -> String?? {
            guard let flag = reader.readByte() else { return nil }
            return flag == 0 ? .some(nil) : string().map { .some($0) }
        }
        func signed() -> Int64? { reader.readVarint().map(Varint.unzigzag) }
        func number() -> Int? { reader.readVarint().flatMap { $0 <= UInt64(Int.max) ? Int($0) : nil } }
        func type() -> EventType? { reader.readByte().flatMap(EventType.init(rawValue:)) }
        func visitRecord() -> Visit?? {
            guard let flag = reader.readByte() else { return nil }
            if flag == 0 { return .some(nil) }
            guard let screen = string(), let storyboardID = optional(), let controller = string(), let start = signed(), let end = signed(),
                let dwell = signed(), let cause = type(), let detail = optional(), let index = number(), let from = optional(), let sequence = reader.readVarint()
            else { return nil }
            return .some(
                Visit(
                    screen: screen, storyboardID: storyboardID, controller: controller, start: start, end: end, dwell: dwell, cause: cause, detail: detail, index: index,
                    from: from, sequence: sequence == 0 ? nil : sequence - 1))
        }
        while !reader.isAtEnd {
            guard let tag = reader.readByte(), let key = reader.readVarint(), key < UInt64(tableCount), let timestamp = signed() else { return false }
            let session = makeStrings ? table[Int(key)] : ""
            func visit(_ record: Record) throws { try visitor(record, Int(key)) }
            switch tag {
            case 1:
                guard let app = string(), let version = string(), let idiom = string(), let device = string() else { return false }
                try visit(.start(session: session, timestamp: timestamp, app: app, version: version, idiom: idiom, device: device))
            case 2:
                guard let closed = visitRecord(), let view = closed else { return false }
                try visit(.view(session: session, timestamp: timestamp, visit: view))
            case 3:
                guard let screen = optional() else { return false }
                try visit(.background(session: session, timestamp: timestamp, screen: screen))
            case 4:
                guard let closed = visitRecord(), let events = number(), let anomalies = number(), let first = signed(), let last = signed(),
                    let visits = number(), let stack = number(), let presentations = number()
                else { return false }
                try visit(
                    .end(
                        session: session, timestamp: timestamp, closed: closed, events: events, anomalies: anomalies, first: first, last: last, visits: visits,
                        stack: stack, presentations: presentations))
            case 5:
                guard let sequence = reader.readVarint(), let lsn = reader.readVarint(), let code = reader.readByte().flatMap(AnomalyCode.init(rawValue:)),
                    let rule = optional(), let controllers = string(), let message = string()
                else { return false }
                try visit(
                    .anomaly(
                        session: session, timestamp: timestamp, sequence: sequence == 0 ? nil : sequence - 1, lsn: lsn == 0 ? nil : lsn - 1, code: code.code,
                        name: code.name, rule: rule, fatal: code.isFatal, controllers: controllers, message: message))
            default:
                return false
            }
        }
        return true
    }
}
