import NavlogEvents

extension DecodedBlock {
    /// Which session groups of a grouped block a payload holds besides its spine.
    enum GroupSelection {
        /// Every group: the whole block.
        case all
        /// One session (a reader of one session): its group's columns, and its own bodies only.
        case one(group: Int, session: Int)
        /// None: only the spine (the session read for is not in the block).
        case none
    }

    /// The number and group of `session` in a grouped block's spine (`spine`: its decompressed
    /// bytes), or nil when the block has no event of it or the spine does not parse that far.
    static func sessionGroup(inSpine spine: UnsafeRawBufferPointer, of session: UnsafeRawBufferPointer) -> (number: Int, group: Int)? {
        var reader = ByteReader(spine)
        guard reader.readByte() == BlockEncoder.groupedPayloadVersion, reader.readVarint() != nil, reader.readVarint() != nil,
            let count = reader.readCount(limit: spine.count)
        else { return nil }
        var lengths = reader
        var bytes = 0
        for _ in 0..<count {
            guard let length = reader.readCount(limit: spine.count) else { return nil }
            bytes += length
        }
        var start = reader.offset
        let groups = start + bytes
        guard bytes + count <= reader.remaining else { return nil }
        for number in 0..<count {
            let length = lengths.readCount(limit: spine.count)!
            if length == session.count && UnsafeRawBufferPointer(rebasing: spine[start..<(start + length)]).elementsEqual(session) {
                return (number, Int(spine[groups + number]))
            }
            start += length
        }
        return nil
    }

    /// Decodes a grouped payload (version 3, see ``BlockEncoder``): `raw` holds the spine, then
    /// (`only`) every group's part as the header's frame table lists them, one group's part, or
    /// nothing more.
    mutating func decodeGrouped(_ raw: UnsafeRawBufferPointer, header: BlockHeader, only: GroupSelection, locatingBodies: Bool) throws(DecodingError) {
        let groups = header.groupCount
        let spineSize = header.frames[0].payloadSize
        var partSizes: [(group: Int, size: Int)] = []
        switch only {
        case .all:
            for group in 0..<groups { partSizes.append((group, header.frames[1 + group].payloadSize)) }
        case .one(let group, _):
            guard group >= 0 && group < groups else { throw DecodingError(reason: "the block has no session group \(group)") }
            partSizes.append((group, header.frames[1 + group].payloadSize))
        case .none:
            break
        }
        guard spineSize + partSizes.reduce(0, { $0 + $1.size }) == raw.count else {
            throw DecodingError(reason: "the block payload is \(raw.count) bytes where its frame table says \(spineSize + partSizes.reduce(0) { $0 + $1.size })")
        }
        let n = header.eventCount
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[0..<spineSize]))
        func fail(_ what: String, at offset: Int) -> DecodingError {
            DecodingError(reason: "the block payload is malformed at byte \(offset): \(what)")
        }
        // The spine.
        guard reader.readByte() == BlockEncoder.groupedPayloadVersion else { throw fail("a grouped block whose spine is not payload version 3", at: 0) }
        guard reader.readCount(limit: raw.count) == n else { throw fail("the event count disagrees with the block header", at: reader.offset) }
        guard reader.readCount(limit: BlockEncoder.maximumGroups) == groups else { throw fail("the group count disagrees with the block header", at: reader.offset) }
        guard let sessionCount = reader.readCount(limit: n), sessionCount > 0 else { throw fail("bad session count", at: reader.offset) }
        let sessionTableOK = readStringTable(&reader, count: sessionCount, base: 0)
        guard sessionTableOK else { throw fail("bad session id lengths", at: reader.offset) }
        guard let groupBytes = reader.readBytes(sessionCount) else { throw fail("truncated session groups", at: reader.offset) }
        sessionGroups.removeAll(keepingCapacity: true)
        sessionGroups.append(contentsOf: groupBytes)
        guard sessionGroups.allSatisfy({ Int($0) < groups }) else { throw fail("a session group past the group count", at: reader.offset) }
        sessions.append(contentsOf: repeatElement(0, count: n))
        let sessionsOK = sessions.withUnsafeMutableBufferPointer { column in
            for index in 0..<n {
                guard let number = reader.readVarint(), number < UInt64(sessionCount) else { return false }
                column[index] = UInt32(truncatingIfNeeded: number)
            }
            return true
        }
        guard sessionsOK else { throw fail("bad session number", at: reader.offset) }
        guard decodeReceiveTimes(&reader, count: n, minReceived: header.minReceived) else { throw fail("truncated receive-time column", at: reader.offset) }
        if let failure = decodePeers(&reader, count: n) { throw fail(failure, at: reader.offset) }
        guard reader.remaining == 0 else { throw fail("the spine has \(reader.remaining) bytes past its columns", at: reader.offset) }

        // Events by group, session-major (a counting sort of positions: per group its sessions in
        // order of number, each one's events in log order), checked against the frame table.
        let groupOfSession = sessionGroups
        sessionEventCounts.removeAll(keepingCapacity: true)
        sessionEventCounts.append(contentsOf: repeatElement(0, count: sessionCount))
        sessions.withUnsafeBufferPointer { sessionColumn in
            sessionEventCounts.withUnsafeMutableBufferPointer { counts in
                for session in sessionColumn { counts[Int(session)] += 1 }
            }
        }
        groupRuns.removeAll(keepingCapacity: true)
        groupRuns.append(contentsOf: repeatElement(0, count: groups + 1))
        for session in 0..<sessionCount { groupRuns[Int(groupOfSession[session]) + 1] += sessionEventCounts[session] }
        for group in 0..<groups {
            guard (groupRuns[group + 1] == 0) == (header.frames[1 + group].payloadSize == 0) else {
                throw fail("session group \(group) has \(groupRuns[group + 1]) events but a part of \(header.frames[1 + group].payloadSize) bytes", at: spineSize)
            }
            groupRuns[group + 1] += groupRuns[group]
        }
        // Where each session's run starts; after the placing pass, where it ends.
        sessionRunEnds.removeAll(keepingCapacity: true)
        sessionRunEnds.append(contentsOf: repeatElement(0, count: sessionCount))
        var next = groupRuns
        for session in 0..<sessionCount {
            let group = Int(groupOfSession[session])
            sessionRunEnds[session] = next[group]
            next[group] += sessionEventCounts[session]
        }
        positionsByGroup.removeAll(keepingCapacity: true)
        positionsByGroup.append(contentsOf: repeatElement(0, count: n))
        sessions.withUnsafeBufferPointer { sessionColumn in
            positionsByGroup.withUnsafeMutableBufferPointer { positions in
                sessionRunEnds.withUnsafeMutableBufferPointer { slots in
                    if case .one(let only, _) = only {
                        // Only the one group's runs are read.
                        for index in 0..<n where Int(groupOfSession[Int(sessionColumn[index])]) == only {
                            let session = Int(sessionColumn[index])
                            positions[slots[session]] = Int32(truncatingIfNeeded: index)
                            slots[session] += 1
                        }
                    } else {
                        for index in 0..<n {
                            let session = Int(sessionColumn[index])
                            positions[slots[session]] = Int32(truncatingIfNeeded: index)
                            slots[session] += 1
                        }
                    }
                }
            }
        }
        if case .one(_, let session) = only {
            guard session >= 0 && session < sessionCount else { throw fail("no session \(session)", at: spineSize) }
            decodedSession = session
        }

        // The groups' columns, at their events' positions.
        types.append(contentsOf: repeatElement(.mark, count: n))
        timestamps.append(contentsOf: repeatElement(0, count: n))
        sequencesPlusOne.append(contentsOf: repeatElement(0, count: n))
        flags.append(contentsOf: repeatElement(0, count: n))
        bodiesLocated = locatingBodies
        if locatingBodies {
            bodyStarts.append(contentsOf: repeatElement(0, count: n))
            bodyEnds.append(contentsOf: repeatElement(0, count: n))
        }
        // Per session number, its previous time and seq (deltas are per session).
        var lastTime = [Int64](repeating: header.minTimestamp, count: sessionCount)
        var lastSequence = [UInt64](repeating: 0, count: sessionCount)
        for _ in 0..<groups { stringTables.append((bytesStart: 0, ends: 0..<0)) }
        var partStart = spineSize
        for (group, size) in partSizes {
            defer { partStart += size }
            guard size > 0 else { continue }
            try decodeGroupPart(
                raw, start: partStart, size: size, group: group, sessionCount: sessionCount, lastTime: &lastTime, lastSequence: &lastSequence,
                locatingBodies: locatingBodies)
            decodedGroups |= 1 << UInt64(group)
        }
        groupCount = groups
        count = n
    }

    /// Reads a string table of `count` strings at `reader` (lengths, then bytes) as a new table;
    /// `base` is where `reader`'s bytes start in ``payload``.
    mutating func readStringTable(_ reader: inout ByteReader, count: Int, base: Int) -> Bool {
        let first = stringEnds.count
        var total: UInt64 = 0
        for _ in 0..<count {
            guard let length = reader.readVarint(), length <= UInt64(reader.bytes.count) else { return false }
            total += length
            guard total <= UInt64(reader.remaining) else { return false }
            stringEnds.append(UInt32(total))
        }
        stringTables.append((base + reader.offset, first..<stringEnds.count))
        reader.offset += Int(total)
        return true
    }

    private mutating func decodeGroupPart(
        _ raw: UnsafeRawBufferPointer, start: Int, size: Int, group: Int, sessionCount: Int, lastTime: inout [Int64], lastSequence: inout [UInt64],
        locatingBodies: Bool
    ) throws(DecodingError) {
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)]))
        func fail(_ what: String) -> DecodingError {
            DecodingError(reason: "the block payload is malformed at byte \(start + reader.offset) (session group \(group)): \(what)")
        }
        let tableIndex = stringTables.count
        guard let stringCount = reader.readCount(limit: size) else { throw fail("bad string count") }
        guard readStringTable(&reader, count: stringCount, base: start) else { throw fail("bad string length") }
        // The table just read belongs at 1 + group: move it there.
        stringTables[1 + group] = stringTables[tableIndex]
        stringTables.removeLast()
        let members = groupRuns[group]..<groupRuns[group + 1]
        guard let typeBytes = reader.readBytes(members.count) else { throw fail("truncated type column") }
        var ok = true
        positionsByGroup.withUnsafeBufferPointer { positions in
            types.withUnsafeMutableBufferPointer { column in
                for (k, member) in members.enumerated() {
                    guard let type = EventType(rawValue: typeBytes[k]) else {
                        ok = false
                        return
                    }
                    column[Int(positions[member])] = type
                }
            }
        }
        guard ok else { throw fail("unknown event type") }
        positionsByGroup.withUnsafeBufferPointer { positions in
            sessions.withUnsafeBufferPointer { sessionColumn in
                timestamps.withUnsafeMutableBufferPointer { column in
                    for member in members {
                        let position = Int(positions[member])
                        guard let value = reader.readVarint() else {
                            ok = false
                            return
                        }
                        let session = Int(sessionColumn[position])
                        lastTime[session] = lastTime[session] &+ Varint.unzigzag(value)
                        column[position] = lastTime[session]
                    }
                }
            }
        }
        guard ok else { throw fail("truncated time column") }
        positionsByGroup.withUnsafeBufferPointer { positions in
            sessions.withUnsafeBufferPointer { sessionColumn in
                sequencesPlusOne.withUnsafeMutableBufferPointer { column in
                    for member in members {
                        let position = Int(positions[member])
                        guard let value = reader.readVarint() else {
                            ok = false
                            return
                        }
                        if value != 0 {
                            let session = Int(sessionColumn[position])
                            lastSequence[session] = lastSequence[session] &+ UInt64(bitPattern: Varint.unzigzag(value - 1))
                            column[position] = lastSequence[session] &+ 1
                        }
                    }
                }
            }
        }
        guard ok else { throw fail("truncated sequence column") }
        guard let flagBytes = reader.readBytes(members.count) else { throw fail("truncated flag column") }
        for (k, member) in members.enumerated() { flags[Int(positionsByGroup[member])] = flagBytes[k] }
        // Each session's bodies' length in bytes, in the order of the runs.
        var runBytes: [(session: Int, bytes: Int)] = []
        for session in 0..<sessionCount where Int(sessionGroups[session]) == group && sessionEventCounts[session] > 0 {
            guard let length = reader.readCount(limit: size) else { throw fail("bad body run length") }
            runBytes.append((session, length))
        }
        guard locatingBodies else { return }
        let base = start + reader.offset
        let bodies = UnsafeRawBufferPointer(rebasing: raw[base..<(start + size)])
        guard runBytes.reduce(0, { $0 + $1.bytes }) == bodies.count else { throw fail("the body runs do not fill the rest of the group's part") }
        var runStart = 0
        for (session, bytes) in runBytes {
            defer { runStart += bytes }
            // A reader of one session walks its own bodies only.
            if decodedSession >= 0 && session != decodedSession { continue }
            let run = (sessionRunEnds[session] - sessionEventCounts[session])..<sessionRunEnds[session]
            var position = runStart
            positionsByGroup.withUnsafeBufferPointer { positions in
                bodyStarts.withUnsafeMutableBufferPointer { starts in
                    bodyEnds.withUnsafeMutableBufferPointer { ends in
                        for member in run {
                            let event = Int(positions[member])
                            starts[event] = base + position
                            guard let end = StoredValue.skip(bodies, position, depth: 0), end <= runStart + bytes else {
                                ok = false
                                return
                            }
                            position = end
                            ends[event] = base + position
                        }
                    }
                }
            }
            guard ok else { throw fail("a malformed body") }
            guard position == runStart + bytes else { throw fail("the bodies of a session do not fill its run") }
        }
    }
}
