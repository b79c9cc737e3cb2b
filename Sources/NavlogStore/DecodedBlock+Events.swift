public import NavlogEvents

extension DecodedBlock {
    /// A borrowed view of a decoded block's events: each one's string table, session id and
    /// interned body, read without a closure per event.
    ///
    /// A loop over a block's events (the replay index build applies every one) sets the view up
    /// once with ``DecodedBlock/withEvents(_:)``; setting up the payload, string ends and
    /// columns once per event was a tenth of a build's CPU.
    ///
    /// - Important: it points into the block's storage; use it only inside the closure that
    ///   provided it.
    public struct Events {
        let payload: UnsafeRawBufferPointer
        let stringEnds: UnsafeBufferPointer<UInt32>
        let stringTables: UnsafeBufferPointer<(bytesStart: Int, ends: Range<Int>)>
        let sessions: UnsafeBufferPointer<UInt32>
        let sessionGroups: UnsafeBufferPointer<UInt8>
        let bodyStarts: UnsafeBufferPointer<Int>
        let bodyEnds: UnsafeBufferPointer<Int>
        let grouped: Bool
        let decodedGroups: UInt64
        let decodedSession: Int
        /// The string table ``DecodedBlock/sessions`` refer to.
        public let sessionStrings: StringTable

        /// String table `table` (0: the sessions'; of a grouped block, 1 + g: group g's) of a
        /// payload, or an empty table when there is no such table.
        static func table(
            _ table: Int, payload: UnsafeRawBufferPointer, stringEnds: UnsafeBufferPointer<UInt32>,
            stringTables: UnsafeBufferPointer<(bytesStart: Int, ends: Range<Int>)>
        ) -> StringTable {
            guard table < stringTables.count else {
                return StringTable(bytes: UnsafeRawBufferPointer(start: nil, count: 0), ends: UnsafeBufferPointer(start: nil, count: 0))
            }
            let location = stringTables[table]
            let ends = UnsafeBufferPointer(rebasing: stringEnds[location.ends])
            let end = location.bytesStart + Int(ends.last ?? 0)
            return StringTable(bytes: UnsafeRawBufferPointer(rebasing: payload[location.bytesStart..<end]), ends: ends)
        }

        /// The string table event `index`'s body refers to.
        public func strings(ofEvent index: Int) -> StringTable {
            guard grouped else { return sessionStrings }
            let session = Int(sessions[index])
            precondition(
                session != Int(DecodedBlock.undecodedSession) && decodedGroups & (1 << UInt64(sessionGroups[session])) != 0
                    && (decodedSession < 0 || session == decodedSession),
                "the event was not decoded (the block was read for another session)")
            return Self.table(1 + Int(sessionGroups[session]), payload: payload, stringEnds: stringEnds, stringTables: stringTables)
        }

        /// The session id bytes of event `index`.
        public func session(ofEvent index: Int) -> UnsafeRawBufferPointer { sessionStrings[Int(sessions[index])]! }

        /// The interned body of the event `header` describes (read with ``strings(ofEvent:)``).
        public func tokens(of header: EventHeader) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: payload[header.bodyStart..<header.bodyEnd])
        }

        /// The interned body of event `index` (read with ``strings(ofEvent:)``).
        public func tokens(ofEvent index: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: payload[bodyStarts[index]..<bodyEnds[index]])
        }
    }

    /// What a reader of a block's events in another order than the log's reads of each:
    /// copied out of the columns by ``gatherHeaders(at:into:)``.
    public struct EventHeader: Sendable {
        /// The event's position in the block.
        public var position: Int32
        /// Its session number (a reference into ``Events/sessionStrings``).
        public var session: UInt32
        public var type: EventType
        /// Its `seq` + 1 (0: none).
        public var sequencePlusOne: UInt64
        public var timestamp: Int64
        var bodyStart: Int
        var bodyEnd: Int

        /// Its `seq`, if it has one.
        public var sequence: UInt64? { sequencePlusOne == 0 ? nil : sequencePlusOne - 1 }
    }

    /// Sets `headers` to the headers of the events at `positions`, in that order.
    ///
    /// A reader that goes through a block session by session (the replay index build) reads
    /// each column at scattered places; gathering them first, in a loop whose loads do not
    /// wait on each other, lets the processor fetch many at once, where the replay loop waited
    /// for each in turn.
    public func gatherHeaders(at positions: [Int32], into headers: inout [EventHeader]) {
        precondition(bodiesLocated, "the block was decoded without its bodies (locatingBodies: false)")
        headers.removeAll(keepingCapacity: true)
        headers.reserveCapacity(positions.count)
        for position in positions {
            let index = Int(position)
            headers.append(
                EventHeader(
                    position: position, session: sessions[index], type: types[index], sequencePlusOne: sequencesPlusOne[index], timestamp: timestamps[index],
                    bodyStart: bodyStarts[index], bodyEnd: bodyEnds[index]))
        }
    }

    /// Calls `body` with a view of the block's events (their bodies must have been located).
    public func withEvents<R>(_ body: (Events) throws -> R) rethrows -> R {
        precondition(bodiesLocated, "the block was decoded without its bodies (locatingBodies: false); use withSession(_:_:)")
        return try payload.withUnsafeBytes { payload in
            try stringEnds.withUnsafeBufferPointer { stringEnds in
                try stringTables.withUnsafeBufferPointer { stringTables in
                    try sessions.withUnsafeBufferPointer { sessions in
                        try sessionGroups.withUnsafeBufferPointer { sessionGroups in
                            try bodyStarts.withUnsafeBufferPointer { bodyStarts in
                                try bodyEnds.withUnsafeBufferPointer { bodyEnds in
                                    let sessionStrings = Events.table(0, payload: payload, stringEnds: stringEnds, stringTables: stringTables)
                                    let events = Events(
                                        payload: payload, stringEnds: stringEnds, stringTables: stringTables, sessions: sessions, sessionGroups: sessionGroups,
                                        bodyStarts: bodyStarts, bodyEnds: bodyEnds, grouped: groupCount > 0, decodedGroups: decodedGroups,
                                        decodedSession: decodedSession, sessionStrings: sessionStrings)
                                    return try body(events)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
