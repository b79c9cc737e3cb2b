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
struct BlockEncoder {
    static let payloadVersion: UInt8 = 1

    private(set) var count = 0
    private var interner = StringInterner()
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
        batch.bytes.withUnsafeBytes { raw in
            BodyTranscoder.intern(UnsafeRawBufferPointer(rebasing: raw[header.body]), into: &bodies) { interner.intern($0) }
        }
        bodyLengths.append(UInt32(bodies.count - before))
        minTimestamp = min(minTimestamp, header.timestamp)
        maxTimestamp = max(maxTimestamp, header.timestamp)
        minReceived = min(minReceived, header.receivedAt)
        maxReceived = max(maxReceived, header.receivedAt)
        count += 1
    }

    /// Encodes the payload of the events added so far into `payload` (replacing its contents).
    mutating func encodePayload(into payload: inout [UInt8]) {
        payload.removeAll(keepingCapacity: true)
        payload.append(Self.payloadVersion)
        Varint.append(UInt64(count), to: &payload)
        Varint.append(UInt64(interner.count), to: &payload)
        var start: UInt32 = 0
        for end in interner.ends {
            Varint.append(UInt64(end - start), to: &payload)
            start = end
        }
        payload.append(contentsOf: interner.bytes)
        payload.append(contentsOf: types)
        for ref in sessions { Varint.append(UInt64(ref), to: &payload) }
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
        for length in bodyLengths { Varint.append(UInt64(length), to: &payload) }
        payload.append(contentsOf: bodies)
    }
}
