import NavlogEvents
import NavlogReplay

extension FocusJournal {
    static func decode(
        _ bytes: UnsafeRawBufferPointer, makeStrings: Bool, controllerIDs: Bool = true, _ visitor: (Record, Int) throws -> Void
    ) rethrows -> Bool {
        guard var decoder = FrameDecoder(bytes, makeStrings: makeStrings, controllerIDs: controllerIDs) else { return false }
        return try decoder.decodeRecords { record, key, _ in try visitor(record, key) }
    }

    /// Decodes the records of the sessions of part `part` of `parts` (split by the hash of
    /// their ids), passing each with its session's number in the frame's string table and its
    /// number among all the frame's records; the other sessions' records are read past without
    /// making their strings. False at the first malformed record.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, controllerIDs: Bool, part: Int, of parts: Int, _ visitor: (Record, Int, Int) throws -> Void
    ) rethrows -> Bool {
        guard var decoder = FrameDecoder(bytes, makeStrings: true, controllerIDs: controllerIDs) else { return false }
        if parts > 1 {
            decoder.select(part: part, of: parts)
            // The index build's workers split sessions the same way, each writing frames of its
            // own: most frames hold none of a part's sessions, and are passed over whole.
            guard decoder.holdsSelectedSessions() else { return true }
        }
        return try decoder.decodeRecords(visitor)
    }

    /// Reads one journal frame: its string table and columns (``Column``), then its records in
    /// order, each session's values relative to its previous record (``SessionPrevious``).
    /// Every read is checked; any damage ends the frame as malformed.
    struct FrameDecoder {
        /// What a record's visit part holds.
        enum VisitReading {
            /// The record is damaged.
            case damaged
            /// The record closed no view.
            case absent
            /// The view it closed.
            case visit(ScreenView)
        }

        private var columns: [ByteReader] = []
        private var table: [String] = []
        private let tableCount: Int
        /// Whether strings are made (false: the structure is only checked), for the frame and
        /// for the records being read (false for those of sessions not selected).
        private let stringsWanted: Bool
        private var makeStrings: Bool
        /// Whether a visit's controller id is made (false: it is left empty; an id kept as an
        /// address is written out in hex, a string per visit that most reports never read).
        private let controllerIDsWanted: Bool
        private var makeControllerIDs: Bool { makeStrings && controllerIDsWanted }
        /// The part of the sessions whose records are given (``select(part:of:)``), and per
        /// session number whether it is in it (-1: not looked at yet).
        private var part: (number: UInt64, of: UInt64)?
        private var selected: [Int8] = []
        private var previous: [SessionPrevious]

        /// Reads the frame's header; nil when it is malformed.
        init?(_ bytes: UnsafeRawBufferPointer, makeStrings: Bool, controllerIDs: Bool) {
            var reader = ByteReader(bytes)
            guard FocusJournal.readRederived(&reader, makeStrings: false) != nil, let tableCount = reader.readCount(limit: bytes.count) else { return nil }
            if makeStrings { table.reserveCapacity(tableCount) }
            for _ in 0..<tableCount {
                guard let length = reader.readCount(limit: reader.remaining), let raw = reader.readBytes(length) else { return nil }
                if makeStrings { table.append(String(decoding: raw, as: UTF8.self)) }
            }
            guard let columnCount = reader.readCount(limit: reader.remaining), columnCount == Column.allCases.count else { return nil }
            for _ in 0..<columnCount {
                guard let length = reader.readCount(limit: reader.remaining), let raw = reader.readBytes(length) else { return nil }
                columns.append(ByteReader(raw))
            }
            guard reader.isAtEnd else { return nil }
            self.tableCount = tableCount
            self.makeStrings = makeStrings
            stringsWanted = makeStrings
            controllerIDsWanted = controllerIDs
            previous = [SessionPrevious](repeating: SessionPrevious(), count: tableCount)
        }

        private mutating func varint(_ column: Column) -> UInt64? { columns[column.rawValue].readVarint() }
        private mutating func byte(_ column: Column) -> UInt8? { columns[column.rawValue].readByte() }
        private mutating func signed(_ column: Column) -> Int64? { varint(column).map(Varint.unzigzag) }
        private mutating func number() -> Int? { varint(.numbers).flatMap { $0 <= UInt64(Int.max) ? Int($0) : nil } }

        /// A string of the table, by the number in `column`.
        private mutating func string(_ column: Column) -> String? {
            guard let number = varint(column), number < UInt64(tableCount) else { return nil }
            return makeStrings ? table[Int(number)] : ""
        }

        /// A string the record holds only when its `flag` is set: `.some(nil)` without it, nil when damaged.
        private mutating func optionalString(_ column: Column, if flag: Bool) -> String?? {
            guard flag else { return .some(nil) }
            guard let text = string(column) else { return nil }
            return .some(text)
        }

        /// Gives only the records of the sessions in part `part` of `parts`, by the hash of
        /// their ids (the frame's strings must be made).
        mutating func select(part: Int, of parts: Int) {
            self.part = (UInt64(part), UInt64(parts))
            selected = [Int8](repeating: -1, count: tableCount)
        }

        /// Whether a record of the frame is of a selected session, from the sessions column
        /// alone. True for a frame with no record in the first part, so that one part checks
        /// its columns; true when the column is malformed, for the decoding to say so.
        mutating func holdsSelectedSessions() -> Bool {
            var sessions = columns[Column.sessions.rawValue]
            if sessions.isAtEnd { return part?.number == 0 }
            while !sessions.isAtEnd {
                guard let key = sessions.readVarint(), key < UInt64(tableCount), sessions.readVarint() != nil else { return true }
                if isSelected(Int(key)) { return true }
            }
            return false
        }

        /// Whether the records of session number `key` are given.
        private mutating func isSelected(_ key: Int) -> Bool {
            guard let part else { return true }
            if selected[key] < 0 {
                var id = table[key]
                selected[key] = id.withUTF8 { StringHash.hash(UnsafeRawBufferPointer($0)) } % part.of == part.number ? 1 : 0
            }
            return selected[key] == 1
        }

        /// Calls `visitor` with each record (of the selected sessions), its session's number and
        /// its number among the frame's records; false at the first malformed record, or when
        /// a column has bytes left after the last.
        mutating func decodeRecords(_ visitor: (Record, Int, Int) throws -> Void) rethrows -> Bool {
            var key = 0
            var leftInGroup = 0
            var recordNumber = 0
            var visiting = true
            while let tag = byte(.tags) {
                if leftInGroup == 0 {
                    guard let keyNumber = varint(.sessions), keyNumber < UInt64(tableCount), let count = varint(.sessions), count > 0,
                        count <= UInt64(columns[Column.tags.rawValue].remaining + 1)
                    else { return false }
                    key = Int(keyNumber)
                    leftInGroup = Int(count)
                    if part != nil {
                        visiting = isSelected(key)
                        makeStrings = stringsWanted && visiting
                    }
                }
                leftInGroup -= 1
                guard let difference = signed(.times) else { return false }
                let timestamp = previous[key].time &+ difference
                previous[key].time = timestamp
                guard let record = readRecord(tag: tag, key: key, timestamp: timestamp) else { return false }
                if visiting { try visitor(record, key, recordNumber) }
                recordNumber += 1
            }
            // Every column read to its end: anything left over means the frame is not what it says.
            return leftInGroup == 0 && columns.allSatisfy(\.isAtEnd)
        }

        /// The record of `tag` for session number `key` at `timestamp`; nil when damaged.
        /// (This and the readers below are inlined: returned through calls, a record, a large
        /// struct, is copied at each return; `perf` of a screens query put that at 5% of it.)
        @inline(__always)
        private mutating func readRecord(tag: UInt8, key: Int, timestamp: Int64) -> Record? {
            let change: Change
            switch tag {
            case 1:
                guard let app = string(.strings), let version = string(.strings), let idiom = string(.strings), let device = string(.strings) else { return nil }
                change = .start(app: app, version: version, idiom: idiom, device: device)
            case 2:
                guard case .visit(let view) = readVisit(key: key, timestamp: timestamp) else { return nil }
                change = .view(view)
            case 3:
                guard let flag = byte(.flags), let screen = optionalString(.screens, if: flag != 0) else { return nil }
                change = .background(screen: screen)
            case 4:
                guard let ending = readEnding(key: key, timestamp: timestamp) else { return nil }
                change = .end(ending)
            case 5:
                guard let anomaly = readAnomaly() else { return nil }
                change = .anomaly(anomaly)
            default:
                return nil
            }
            return Record(session: makeStrings ? table[key] : "", timestamp: timestamp, change: change)
        }

        /// A session's end: the view it closed and its totals.
        @inline(__always)
        private mutating func readEnding(key: Int, timestamp: Int64) -> Ending? {
            let closed: ScreenView?
            switch readVisit(key: key, timestamp: timestamp) {
            case .damaged: return nil
            case .absent: closed = nil
            case .visit(let visit): closed = visit
            }
            guard let events = number(), let anomalies = number(), let first = signed(.numbers), let last = signed(.numbers), let visits = number(),
                let stack = number(), let presentations = number()
            else { return nil }
            return Ending(
                closed: closed, events: events, anomalies: anomalies, first: timestamp &+ first, last: timestamp &+ last, visits: visits, stack: stack,
                presentations: presentations)
        }

        /// An anomaly record.
        @inline(__always)
        private mutating func readAnomaly() -> AnomalyEntry? {
            guard let sequence = varint(.numbers), let lsn = varint(.numbers), let code = byte(.numbers).flatMap(AnomalyCode.init(rawValue:)),
                let hasRule = byte(.flags), let rule = optionalString(.strings, if: hasRule != 0), let controllers = string(.strings),
                let message = string(.strings)
            else { return nil }
            return AnomalyEntry(
                sequence: sequence == 0 ? nil : sequence - 1, lsn: lsn == 0 ? nil : lsn - 1, code: code, rule: rule, controllers: controllers, message: message)
        }

        /// The visit part of a view or end record.
        @inline(__always)
        private mutating func readVisit(key: Int, timestamp: Int64) -> VisitReading {
            guard let flags = byte(.flags) else { return .damaged }
            if flags & VisitFlags.present == 0 { return .absent }
            guard let screenNumber = varint(.screens), screenNumber < UInt64(tableCount) else { return .damaged }
            let screen = makeStrings ? table[Int(screenNumber)] : ""
            var from: String?
            if flags & VisitFlags.fromPrevious != 0 {
                guard previous[key].screen > 0 else { return .damaged }
                from = makeStrings ? table[Int(previous[key].screen - 1)] : ""
            }
            previous[key].screen = screenNumber + 1
            if flags & VisitFlags.from != 0 {
                guard let text = string(.screens) else { return .damaged }
                from = text
            }
            guard let storyboardID = optionalString(.strings, if: flags & VisitFlags.storyboardID != 0),
                let detail = optionalString(.strings, if: flags & VisitFlags.detail != 0), let controller = readController(key: key),
                let endOffset = signed(.visitTimes), let startOffset = signed(.visitTimes), let dwellOffset = signed(.visitTimes),
                let cause = byte(.numbers).flatMap(EventType.init(rawValue:)), let indexDifference = signed(.numbers)
            else { return .damaged }
            let index = previous[key].nextIndex &+ Int(truncatingIfNeeded: indexDifference)
            previous[key].nextIndex = index &+ 1
            let end = timestamp &- endOffset
            let start = previous[key].visitEnd &+ startOffset
            previous[key].visitEnd = end
            var sequence: UInt64?
            if flags & VisitFlags.sequence != 0 {
                guard let difference = signed(.numbers) else { return .damaged }
                sequence = previous[key].sequence &+ UInt64(bitPattern: difference)
                previous[key].sequence = sequence ?? 0
            }
            return .visit(
                ScreenView(
                    screen: screen, storyboardID: storyboardID, controller: controller, start: start, end: end, dwell: (end &- start) &- dwellOffset,
                    cause: cause, detail: detail, index: index, from: from, sequence: sequence))
        }

        /// A visit's controller id: one of the session's last eight addresses, an address near
        /// the last, or a string of the table.
        private mutating func readController(key: Int) -> String? {
            guard let code = varint(.controllers) else { return nil }
            switch code & 3 {
            case 2:
                guard code >> 2 < 8 else { return nil }
                let position = Int(code >> 2)
                let address = previous[key].addresses[position]
                // The writer names the address by its first place among the recent ones.
                previous[key].moveToFront(address, from: position)
                return makeControllerIDs ? FocusJournal.addressText(address) : ""
            case 1:
                let address = previous[key].addresses[0] &+ UInt64(bitPattern: Varint.unzigzag(code >> 2))
                _ = previous[key].use(address)
                return makeControllerIDs ? FocusJournal.addressText(address) : ""
            case 0:
                guard code >> 2 < UInt64(tableCount) else { return nil }
                return makeStrings ? table[Int(code >> 2)] : ""
            default:
                return nil
            }
        }
    }
}
