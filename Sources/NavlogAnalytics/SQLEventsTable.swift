import GRDBSQLite
import NavlogEvents
import NavlogStore

/// `navlog query sql`'s `events` table: an SQLite virtual table that reads its rows from the log
/// while the query runs (``EventRowSource/Cursor``), so that no row is copied into the
/// database. It has a row per stored event: loaded into memory, 10M events took 1.2 GB and
/// 18 s before the first result; read in place, memory stays that of one decoded block.
///
/// It offers SQLite no index: every plan scans it once, in log order, and its cost is the number
/// of events, so that in a join SQLite puts it in the outer loop and indexes the other side.
final class SQLEventsTable {
    /// The rows to read; none until a scan gives its source.
    var source: EventRowSource?

    /// The module's name in SQLite.
    static let moduleName = "navlog_events"

    /// `CREATE TABLE` text declaring the columns of ``SQLTable/events`` to SQLite. Without a
    /// rowid (its key is the LSN): a grouped scan (below) has no row identity to give.
    static var declaration: String {
        let columns = SQLTable.events.columns.map { "\(SQLAnalyticsDatabase.quoted($0.name)) \($0.type.sqlType)\($0.nullable ? "" : " NOT NULL")" }
        return "CREATE TABLE x(\(columns.joined(separator: ", ")), PRIMARY KEY (lsn)) WITHOUT ROWID"
    }

    /// Columns by position in ``SQLTable/events`` (a test checks them against its columns).
    enum Column: Int32, CaseIterable {
        case lsn, session, app, version, idiom, device, sequence, timestamp, receivedAt, type, key

        /// Columns with few distinct values per log (a session's, and the event type): a query
        /// that reads no others gets rows grouped by them (``EventsScan``).
        var isGroupable: Bool {
            switch self {
            case .session, .app, .version, .idiom, .device, .type: true
            case .lsn, .sequence, .timestamp, .receivedAt, .key: false
            }
        }
    }

    /// Registers the module on `connection` (it keeps this object until the connection closes)
    /// and creates the `events` table with it.
    /// - Returns: SQLite's result code.
    func install(on connection: OpaquePointer) -> Int32 {
        let context = Unmanaged.passRetained(self).toOpaque()
        let registered = sqlite3_create_module_v2(connection, Self.moduleName, eventsModule, context) { context in
            if let context { Unmanaged<SQLEventsTable>.fromOpaque(context).release() }
        }
        guard registered == SQLITE_OK else { return registered }
        return sqlite3_exec(connection, "CREATE VIRTUAL TABLE events USING \(Self.moduleName)", nil, nil, nil)
    }
}

/// The C layout SQLite allocates nothing of: a `sqlite3_vtab` followed by a pointer to the
/// ``SQLEventsTable`` (SQLite sees only the first part).
private enum VTabMemory {
    static let size = MemoryLayout<sqlite3_vtab>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride

    static func make(_ table: UnsafeMutableRawPointer) -> UnsafeMutablePointer<sqlite3_vtab> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<sqlite3_vtab>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        raw.storeBytes(of: table, toByteOffset: MemoryLayout<sqlite3_vtab>.stride, as: UnsafeMutableRawPointer.self)
        return raw.bindMemory(to: sqlite3_vtab.self, capacity: 1)
    }

    static func table(_ vtab: UnsafeMutablePointer<sqlite3_vtab>) -> SQLEventsTable {
        let pointer = UnsafeMutableRawPointer(vtab).load(fromByteOffset: MemoryLayout<sqlite3_vtab>.stride, as: UnsafeMutableRawPointer.self)
        return Unmanaged<SQLEventsTable>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// A scan in progress (SQLite may run several over one table, e.g. in a self-join).
///
/// Plain, it walks the log a row at a time. Grouped, for a query that reads only session
/// columns and the type (`SELECT type, count(*) FROM events GROUP BY 1`): rows equal in every
/// column the query reads cannot be told apart, so one pass counts each distinct
/// (session, type) and the scan then gives each that many times, in the order SQLite asked for
/// (so it need not sort millions of rows: 2M events grouped by type, 2.9 s → 0.6 s).
private final class EventsScan {
    var cursor: EventRowSource.Cursor?
    var atEnd = true
    /// Grouped: the distinct (session slot, type) pairs with their row counts, in output order.
    var groups: [(slot: Int, type: EventType, count: Int)] = []
    var group = 0
    var remaining = 0
    var grouped = false

    /// Grouped by what `plan` says: counts in one pass, sorts the groups.
    func group(_ plan: GroupedPlan) throws(StoreError) {
        grouped = true
        groups = []
        // The pass works on a local cursor (no exclusivity check on the scan per event).
        guard var cursor = self.cursor.take() else { return }
        defer { self.cursor = cursor }
        // Counts by (session slot, type); by type alone in an array when no session column is
        // read (the common case: no hashing per event).
        if plan.bySession {
            var counts: [Int: Int] = [:]
            while try cursor.next() { counts[cursor.sessionSlot << 8 | Int(cursor.type.rawValue), default: 0] += 1 }
            for (key, count) in counts {
                if let type = EventType(rawValue: UInt8(key & 0xFF)) { groups.append((key >> 8, type, count)) }
            }
        } else {
            var byType = [Int](repeating: 0, count: 256)
            while try cursor.next() { byType[Int(cursor.type.rawValue)] += 1 }
            for (raw, count) in byType.enumerated() where count > 0 {
                if let type = EventType(rawValue: UInt8(raw)) { groups.append((0, type, count)) }
            }
        }
        let final = cursor
        func value(_ column: SQLEventsTable.Column, _ group: (slot: Int, type: EventType, count: Int)) -> String {
            switch column {
            case .session: final.session(ofSlot: group.slot).id
            case .app: final.session(ofSlot: group.slot).tags.app
            case .version: final.session(ofSlot: group.slot).tags.version
            case .idiom: final.session(ofSlot: group.slot).tags.idiom
            case .device: final.session(ofSlot: group.slot).tags.device
            case .type: group.type.name
            case .lsn, .sequence, .timestamp, .receivedAt, .key: ""
            }
        }
        // SQLite's BINARY collation: UTF-8 bytes compared as unsigned bytes.
        groups.sort { a, b in
            for (column, descending) in plan.order {
                let (x, y) = (value(column, a), value(column, b))
                if x == y { continue }
                let less = x.utf8.lexicographicallyPrecedes(y.utf8)
                return descending ? !less : less
            }
            return (a.slot, a.type.rawValue) < (b.slot, b.type.rawValue)
        }
        group = 0
        remaining = groups.first?.count ?? 0
        atEnd = groups.isEmpty
    }

    /// The next grouped row.
    func nextGrouped() {
        remaining -= 1
        while remaining <= 0 {
            group += 1
            guard group < groups.count else {
                atEnd = true
                return
            }
            remaining = groups[group].count
        }
    }
}

/// A grouped scan's plan, passed from xBestIndex to xFilter as its `idxStr`
/// (`g` when grouped, then `s` when a session column is read, then `column:asc|desc` terms).
struct GroupedPlan {
    /// Whether a session column is read (else only the type, or nothing).
    var bySession: Bool
    /// The ORDER BY (or GROUP BY) terms the scan gives its rows in.
    var order: [(SQLEventsTable.Column, Bool)]

    var encoded: String {
        "g" + (bySession ? "s" : "") + order.map { ",\($0.0.rawValue):\($0.1 ? "d" : "a")" }.joined()
    }

    init(bySession: Bool, order: [(SQLEventsTable.Column, Bool)]) {
        self.bySession = bySession
        self.order = order
    }

    init?(encoded: String) {
        var parts = encoded.split(separator: ",", omittingEmptySubsequences: false)
        guard let head = parts.first, head == "g" || head == "gs" else { return nil }
        bySession = head == "gs"
        parts.removeFirst()
        order = []
        for part in parts {
            let pair = part.split(separator: ":")
            guard pair.count == 2, let raw = Int32(pair[0]), let column = SQLEventsTable.Column(rawValue: raw) else { return nil }
            order.append((column, pair[1] == "d"))
        }
    }
}

/// A `sqlite3_vtab_cursor` followed by a retained pointer to its ``EventsScan``.
private enum CursorMemory {
    static let size = MemoryLayout<sqlite3_vtab_cursor>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride

    static func make(_ scan: EventsScan) -> UnsafeMutablePointer<sqlite3_vtab_cursor> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<sqlite3_vtab_cursor>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        raw.storeBytes(of: Unmanaged.passRetained(scan).toOpaque(), toByteOffset: MemoryLayout<sqlite3_vtab_cursor>.stride, as: UnsafeMutableRawPointer.self)
        return raw.bindMemory(to: sqlite3_vtab_cursor.self, capacity: 1)
    }

    static func scan(_ cursor: UnsafeMutablePointer<sqlite3_vtab_cursor>) -> Unmanaged<EventsScan> {
        let pointer = UnsafeMutableRawPointer(cursor).load(fromByteOffset: MemoryLayout<sqlite3_vtab_cursor>.stride, as: UnsafeMutableRawPointer.self)
        return Unmanaged<EventsScan>.fromOpaque(pointer)
    }
}

/// Sets `text` as a column's result (SQLite copies it).
private func resultText(_ context: OpaquePointer?, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { chars in
            if let base = chars.baseAddress {
                sqlite3_result_text(context, base, Int32(chars.count), sqliteTransient)
            } else {
                sqlite3_result_text(context, "", 0, sqliteTransient)
            }
        }
    }
}

/// Each event type's name as a C string that lives as long as the process (no copy per row).
nonisolated(unsafe) private let typeNames: [(UnsafeMutablePointer<CChar>, Int32)] = (0...255).map { raw in
    let name = EventType(rawValue: UInt8(raw))?.name ?? ""
    let bytes = Array(name.utf8)
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
    for (index, byte) in bytes.enumerated() { pointer[index] = CChar(bitPattern: byte) }
    pointer[bytes.count] = 0
    return (pointer, Int32(bytes.count))
}

/// Sets an event type's name as a column's result, without a copy.
private func resultStatic(_ context: OpaquePointer?, _ type: EventType) {
    let (pointer, count) = typeNames[Int(type.rawValue)]
    sqlite3_result_text(context, pointer, count, nil)
}

/// Puts `message` where SQLite reports a virtual table's error (its own allocation, which it frees).
private func setError(_ vtab: UnsafeMutablePointer<sqlite3_vtab>?, _ message: String) {
    guard let vtab, let copy = sqliteCopy(message) else { return }
    if let old = vtab.pointee.zErrMsg { sqlite3_free(old) }
    vtab.pointee.zErrMsg = copy
}

/// Moves `scan` to its next row, reporting a log error to SQLite.
private func advance(_ scan: EventsScan, _ vtab: UnsafeMutablePointer<sqlite3_vtab>?) -> Int32 {
    if scan.grouped {
        scan.nextGrouped()
        return SQLITE_OK
    }
    guard scan.cursor != nil else {
        scan.atEnd = true
        return SQLITE_OK
    }
    do {
        scan.atEnd = try !(scan.cursor?.next() ?? false)
        return SQLITE_OK
    } catch {
        scan.atEnd = true
        setError(vtab, "reading the log for the events table: \(error.message)")
        return SQLITE_ERROR
    }
}

/// The module's methods (a read-only, eponymous-free table: created by `CREATE VIRTUAL TABLE`).
nonisolated(unsafe) private let eventsModule: UnsafeMutablePointer<sqlite3_module> = {
    let module = UnsafeMutablePointer<sqlite3_module>.allocate(capacity: 1)
    module.initialize(to: sqlite3_module())
    let connect:
        @convention(c) (
            OpaquePointer?, UnsafeMutableRawPointer?, Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafeMutablePointer<UnsafeMutablePointer<sqlite3_vtab>?>?,
            UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        ) -> Int32 = { connection, context, _, _, vtab, _ in
            guard let context, let vtab else { return SQLITE_ERROR }
            let declared = sqlite3_declare_vtab(connection, SQLEventsTable.declaration)
            guard declared == SQLITE_OK else { return declared }
            vtab.pointee = VTabMemory.make(context)
            return SQLITE_OK
        }
    module.pointee.iVersion = 1
    module.pointee.xCreate = connect
    module.pointee.xConnect = connect
    module.pointee.xBestIndex = { vtab, info in
        guard let vtab, let info else { return SQLITE_ERROR }
        // No constraint is used: SQLite checks them on the rows. A scan costs every event.
        let events = Double(max(VTabMemory.table(vtab).source?.reader.eventCount ?? 0, 1))
        info.pointee.estimatedCost = events
        info.pointee.estimatedRows = sqlite3_int64(events)
        // Grouped when every column read is a session column or the type (bit 63: columns past
        // the 63rd, none here), and then in the ORDER BY's order when its terms are such columns.
        let used = info.pointee.colUsed
        let columns = SQLEventsTable.Column.allCases
        guard used & (1 << 63) == 0, columns.allSatisfy({ $0.isGroupable || used & (1 << UInt64($0.rawValue)) == 0 }) else { return SQLITE_OK }
        let bySession = columns.contains { $0 != .type && $0.isGroupable && used & (1 << UInt64($0.rawValue)) != 0 }
        var order: [(SQLEventsTable.Column, Bool)] = []
        for term in 0..<Int(info.pointee.nOrderBy) {
            let item = info.pointee.aOrderBy[term]
            guard let column = SQLEventsTable.Column(rawValue: item.iColumn), column.isGroupable else {
                order = []
                break
            }
            order.append((column, item.desc != 0))
        }
        info.pointee.orderByConsumed = order.isEmpty ? 0 : 1
        guard let plan = sqliteCopy(GroupedPlan(bySession: bySession, order: order).encoded) else { return SQLITE_NOMEM }
        info.pointee.idxStr = plan
        info.pointee.needToFreeIdxStr = 1
        info.pointee.idxNum = 1
        return SQLITE_OK
    }
    let release: @convention(c) (UnsafeMutablePointer<sqlite3_vtab>?) -> Int32 = { vtab in
        if let vtab {
            if let message = vtab.pointee.zErrMsg { sqlite3_free(message) }
            UnsafeMutableRawPointer(vtab).deallocate()
        }
        return SQLITE_OK
    }
    module.pointee.xDisconnect = release
    module.pointee.xDestroy = release
    module.pointee.xOpen = { vtab, cursor in
        guard let cursor else { return SQLITE_ERROR }
        cursor.pointee = CursorMemory.make(EventsScan())
        return SQLITE_OK
    }
    module.pointee.xClose = { cursor in
        guard let cursor else { return SQLITE_OK }
        CursorMemory.scan(cursor).release()
        UnsafeMutableRawPointer(cursor).deallocate()
        return SQLITE_OK
    }
    module.pointee.xFilter = { cursor, number, text, _, _ in
        guard let cursor, let vtab = cursor.pointee.pVtab else { return SQLITE_ERROR }
        let scan = CursorMemory.scan(cursor).takeUnretainedValue()
        scan.cursor = VTabMemory.table(vtab).source.map { EventRowSource.Cursor($0) }
        scan.grouped = false
        if number == 1, let text, let plan = GroupedPlan(encoded: String(cString: text)) {
            do {
                try scan.group(plan)
                return SQLITE_OK
            } catch {
                scan.atEnd = true
                setError(vtab, "reading the log for the events table: \((error as? StoreError)?.message ?? "\(error)")")
                return SQLITE_ERROR
            }
        }
        return advance(scan, vtab)
    }
    module.pointee.xNext = { cursor in
        guard let cursor else { return SQLITE_ERROR }
        return advance(CursorMemory.scan(cursor).takeUnretainedValue(), cursor.pointee.pVtab)
    }
    module.pointee.xEof = { cursor in
        guard let cursor else { return 1 }
        return CursorMemory.scan(cursor).takeUnretainedValue().atEnd ? 1 : 0
    }
    module.pointee.xColumn = { cursor, context, column in
        guard let cursor else { return SQLITE_ERROR }
        let scan = CursorMemory.scan(cursor).takeUnretainedValue()
        guard !scan.atEnd, scan.cursor != nil else {
            sqlite3_result_null(context)
            return SQLITE_OK
        }
        if scan.grouped {
            let group = scan.groups[scan.group]
            switch SQLEventsTable.Column(rawValue: column) {
            case .session: resultText(context, scan.cursor!.session(ofSlot: group.slot).id)
            case .app: resultText(context, scan.cursor!.session(ofSlot: group.slot).tags.app)
            case .version: resultText(context, scan.cursor!.session(ofSlot: group.slot).tags.version)
            case .idiom: resultText(context, scan.cursor!.session(ofSlot: group.slot).tags.idiom)
            case .device: resultText(context, scan.cursor!.session(ofSlot: group.slot).tags.device)
            case .type: resultStatic(context, group.type)
            default: sqlite3_result_null(context)
            }
            return SQLITE_OK
        }
        // Read in place (`scan.cursor!.…`): a copy of the cursor per column would cost more than the column.
        // The order of SQLTable.events.columns (a test compares the two).
        switch column {
        case 0: sqlite3_result_int64(context, sqlInteger(scan.cursor!.lsn) ?? 0)
        case 1: resultText(context, scan.cursor!.session)
        case 2: resultText(context, scan.cursor!.tags.app)
        case 3: resultText(context, scan.cursor!.tags.version)
        case 4: resultText(context, scan.cursor!.tags.idiom)
        case 5: resultText(context, scan.cursor!.tags.device)
        case 6:
            if let sequence = sqlInteger(scan.cursor!.sequence) {
                sqlite3_result_int64(context, sequence)
            } else {
                sqlite3_result_null(context)
            }
        case 7: sqlite3_result_int64(context, scan.cursor!.timestamp)
        case 8: sqlite3_result_int64(context, scan.cursor!.receivedAt)
        case 9: resultStatic(context, scan.cursor!.type)
        case 10:
            if let key = scan.cursor!.key {
                resultText(context, key)
            } else {
                sqlite3_result_null(context)
            }
        default: sqlite3_result_null(context)
        }
        return SQLITE_OK
    }
    return module
}()
