import NavlogEvents

/// Collects events into one block and encodes its payload.
///
/// The payload is columnar so zstd sees similar bytes together (layout, all varints unless
/// noted): format version (byte), event count, string count, string lengths, string bytes;
/// then one column per field: types (bytes), session refs, event times (zig-zag delta from the
/// same session's previous event in the block, the first from the block's minimum), sequence
/// numbers (0 = none, else zig-zag delta from the session's previous + 1), receive times
/// (zig-zag delta from the previous event), flags (bytes; bit 0 = `ts` was missing), the peer
/// table (count, then uid, gid, zig-zag pid) and each event's peer index, body lengths, and
/// the bodies in interned ``BodyForm``. LSNs are implicit: first LSN + position.
///
/// The string table is ordered by how often the block uses each string, most used first, so
/// the references zstd sees most are one-byte varints; the order costs the encoder one sort
/// and the decoder nothing.
struct BlockEncoder {
    static let payloadVersion: UInt8 = 1

    private(set) var count = 0
    private var interner = ByteStringTable()
    private var types: [UInt8] = []
    private var sessions: [UInt32] = []
    private var timestamps: [Int64] = []
    private var sequences: [UInt64] = []  // seq + 1, 0 = none
    private var receiveTimes: [Int64] = []
    private var flags: [UInt8] = []
    private var peers: [PeerCredentials] = []
    private var peerIndexes: [UInt32] = []
    private var bodyLengths: [UInt32] = []
    private var bodies: [UInt8] = []
    /// String references of the bodies, in intern order (renumbered when encoding).
    private var references: [UInt32] = []
    private var referenceCounts: [UInt32] = []
    /// Hashes of the distinct session ids, and which string refs are already among them.
    private(set) var sessionHashes: [UInt64] = []
    private var isSessionRef: [Bool] = []
    private(set) var minTimestamp = Int64.max, maxTimestamp = Int64.min
    private(set) var minReceived = Int64.max, maxReceived = Int64.min

    /// A rough size of the payload so far, to cap blocks by size as well as by count.
    var approximateSize: Int { interner.bytes.count + bodies.count + count * 8 }

    mutating func removeAll() {
        count = 0
        interner.removeAll()
        types.removeAll(keepingCapacity: true)
        sessions.removeAll(keepingCapacity: true)
        timestamps.removeAll(keepingCapacity: true)
        sequences.removeAll(keepingCapacity: true)
        receiveTimes.removeAll(keepingCapacity: true)
        flags.removeAll(keepingCapacity: true)
        peers.removeAll(keepingCapacity: true)
        peerIndexes.removeAll(keepingCapacity: true)
        bodyLengths.removeAll(keepingCapacity: true)
        bodies.removeAll(keepingCapacity: true)
        references.removeAll(keepingCapacity: true)
        referenceCounts.removeAll(keepingCapacity: true)
        sessionHashes.removeAll(keepingCapacity: true)
        isSessionRef.removeAll(keepingCapacity: true)
        minTimestamp = .max; maxTimestamp = .min
        minReceived = .max; maxReceived = .min
    }

    /// Adds event `index` of `batch`.
    mutating func append(_ batch: EventBatch, _ index: Int) {
        let header = batch.headers[index]
        types.append(header.type.rawValue)
        let sessionRef = batch.withSession(of: index) { session -> UInt32 in
            let ref = interner.intern(session)
            if isSessionRef.count <= Int(ref) { isSessionRef.append(contentsOf: repeatElement(false, count: Int(ref) + 1 - isSessionRef.count)) }
            if !isSessionRef[Int(ref)] {
                isSessionRef[Int(ref)] = true
                sessionHashes.append(StringHash.hash(session))
            }
            return ref
        }
        sessions.append(sessionRef)
        timestamps.append(header.timestamp)
        sequences.append(header.sequence.map { $0 &+ 1 } ?? 0)
        receiveTimes.append(header.receivedAt)
        flags.append(header.timestampWasMissing ? 1 : 0)
        if let last = peers.last, last == header.peer {
            peerIndexes.append(UInt32(peers.count - 1))
        } else if let found = peers.firstIndex(of: header.peer) {
            peerIndexes.append(UInt32(found))
        } else {
            peers.append(header.peer)
            peerIndexes.append(UInt32(peers.count - 1))
        }
        let before = bodies.count
        let referencesBefore = references.count
        batch.bytes.withUnsafeBytes { raw in
            BodyTranscoder.intern(UnsafeRawBufferPointer(rebasing: raw[header.body]), into: &bodies, references: &references) { interner.intern($0) }
        }
        bodyLengths.append(UInt32(bodies.count - before))
        referenceCounts.append(UInt32(references.count - referencesBefore))
        minTimestamp = min(minTimestamp, header.timestamp)
        maxTimestamp = max(maxTimestamp, header.timestamp)
        minReceived = min(minReceived, header.receivedAt)
        maxReceived = max(maxReceived, header.receivedAt)
        count += 1
    }

    /// Copies one value's tokens from the encoder's reference-free form, putting each string,
    /// number and unknown key's renumbered reference back in place.
    private static func mergeValue(
        _ structure: UnsafeRawBufferPointer,
        _ position: inout Int,
        _ references: [UInt32],
        _ renumbered: [UInt32],
        _ next: inout Int,
        _ output: inout [UInt8]
    ) {
        func copyVarint() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = structure[position]
                output.append(byte)
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        func reference() {
            Varint.append(UInt64(renumbered[Int(references[next])]), to: &output)
            next += 1
        }
        let tag = structure[position]
        output.append(tag)
        position += 1
        switch BodyToken(rawValue: tag) {
        case .object:
            for _ in 0..<copyVarint() {
                let key = structure[position]
                output.append(key)
                position += 1
                if key == BodyToken.unknownKey { reference() }
                mergeValue(structure, &position, references, renumbered, &next, &output)
            }
        case .array:
            for _ in 0..<copyVarint() { mergeValue(structure, &position, references, renumbered, &next, &output) }
        case .string, .number:
            reference()
        case .integer:
            _ = copyVarint()
        default:
            break
        }
    }

    /// Encodes the payload of the events added so far into `payload` (replacing its contents).
    mutating func encodePayload(into payload: inout [UInt8]) {
        payload.removeAll(keepingCapacity: true)
        payload.append(Self.payloadVersion)
        Varint.append(UInt64(count), to: &payload)
        Varint.append(UInt64(interner.count), to: &payload)
        // Renumber strings by use, most used first (ties keep first-appearance order).
        var uses = [UInt32](repeating: 0, count: interner.count)
        for ref in sessions { uses[Int(ref)] += 1 }
        for ref in references { uses[Int(ref)] += 1 }
        let order = (0..<interner.count).sorted { uses[$0] != uses[$1] ? uses[$0] > uses[$1] : $0 < $1 }
        var renumbered = [UInt32](repeating: 0, count: interner.count)
        for (new, old) in order.enumerated() { renumbered[old] = UInt32(new) }
        for old in order {
            let start = old == 0 ? 0 : interner.ends[old - 1]
            Varint.append(UInt64(interner.ends[old] - start), to: &payload)
        }
        interner.bytes.withUnsafeBytes { raw in
            for old in order {
                let start = old == 0 ? 0 : Int(interner.ends[old - 1])
                payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[start..<Int(interner.ends[old])]))
            }
        }
        payload.append(contentsOf: types)
        for ref in sessions { Varint.append(UInt64(renumbered[Int(ref)]), to: &payload) }
        // Deltas are per session; indexing by the old ref is fine, it is the same session.
        var lastBySession = [Int64](repeating: minTimestamp, count: interner.count)
        var lastSequence = [UInt64](repeating: 0, count: interner.count)
        for index in 0..<count {
            let session = Int(sessions[index])
            Varint.append(Varint.zigzag(timestamps[index] &- lastBySession[session]), to: &payload)
            lastBySession[session] = timestamps[index]
        }
        for index in 0..<count {
            let stored = sequences[index]
            if stored == 0 {
                payload.append(0)
            } else {
                let session = Int(sessions[index])
                let sequence = stored - 1
                Varint.append(Varint.zigzag(Int64(bitPattern: sequence &- lastSequence[session])) &+ 1, to: &payload)
                lastSequence[session] = sequence
            }
        }
        var lastReceived = minReceived
        for value in receiveTimes {
            Varint.append(Varint.zigzag(value &- lastReceived), to: &payload)
            lastReceived = value
        }
        payload.append(contentsOf: flags)
        Varint.append(UInt64(peers.count), to: &payload)
        for peer in peers {
            Varint.append(UInt64(peer.uid), to: &payload)
            Varint.append(UInt64(peer.gid), to: &payload)
            Varint.append(Varint.zigzag(Int64(peer.pid)), to: &payload)
        }
        for index in peerIndexes { Varint.append(UInt64(index), to: &payload) }
        // Bodies: each event's tokens with its references, renumbered, put back in place.
        var merged: [UInt8] = []
        merged.reserveCapacity(bodies.count + references.count * 2)
        var mergedLengths: [Int] = []
        mergedLengths.reserveCapacity(count)
        bodies.withUnsafeBytes { structure in
            var position = 0
            var next = 0
            for index in 0..<count {
                let before = merged.count
                Self.mergeValue(structure, &position, references, renumbered, &next, &merged)
                precondition(merged.count > before && position <= structure.count, "body tokens out of step")
                mergedLengths.append(merged.count - before)
                _ = index
            }
        }
        for length in mergedLengths { Varint.append(UInt64(length), to: &payload) }
        payload.append(contentsOf: merged)
    }
}
