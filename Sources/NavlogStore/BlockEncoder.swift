import NavlogEvents

/// Collects events into one block and encodes its payload.
///
/// The payload is columnar so zstd sees similar bytes together (layout, all varints unless
/// noted): format version (byte), event count, string count, string lengths, string bytes;
/// then one column per field: types (bytes), session refs, event times (zig-zag delta from the
/// same session's previous event in the block, the first from the block's minimum), sequence
/// numbers (0 = none, else zig-zag delta from the session's previous + 1), receive times
/// (zig-zag delta from the previous event), flags (bytes; bit 0 = `ts` was missing), the peer
/// table (count, then uid, gid, zig-zag pid) and each event's peer index, then the bodies in
/// interned ``BodyForm`` one after another (each is one value, so it says where it ends:
/// payload version 1 also wrote every body's length, 0.48 bytes per event after compression
/// on production's shape). LSNs are implicit: first LSN + position.
///
/// The string table is in order of first appearance, so each event's body is written in its
/// final form as it is added (references inline) and sealing a block is one pass over columns.
/// (Ordering the table by use, most used first, as the encoder once did, took a second pass
/// over every body and gained nothing: 10.46 bytes per event then, 10.44 now, with
/// `navlog-bench --only size`.)
struct BlockEncoder {
    /// 2: no body lengths. Readers read 1 too.
    static let payloadVersion: UInt8 = 2

    /// The fixed fields of one event, kept together so adding an event is one append.
    private struct Row {
        var timestamp: Int64
        var receivedAt: Int64
        /// seq + 1, 0 = none.
        var sequencePlusOne: UInt64
        var session: UInt32
        var peerIndex: UInt32
        var bodyLength: UInt32
        var type: UInt8
        var flags: UInt8
    }

    private(set) var count = 0
    private var interner = ByteStringTable()
    private var rows: [Row] = []
    private var peers: [PeerCredentials] = []
    /// Every body in the interned (stored) form, one after another.
    private var bodies: [UInt8] = []
    /// Where a body is transcoded before it is appended to ``bodies`` (reused).
    private var scratch: [UInt8] = []
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
        rows.removeAll(keepingCapacity: true)
        peers.removeAll(keepingCapacity: true)
        bodies.removeAll(keepingCapacity: true)
        sessionHashes.removeAll(keepingCapacity: true)
        isSessionRef.removeAll(keepingCapacity: true)
        minTimestamp = .max; maxTimestamp = .min
        minReceived = .max; maxReceived = .min
    }

    /// Adds event `index` of `batch`.
    mutating func append(_ batch: EventBatch, _ index: Int) {
        let header = batch.headers[index]
        let sessionRef = batch.withSession(of: index) { session -> UInt32 in
            let ref = interner.insert(session, hash: header.sessionHash).reference
            if isSessionRef.count <= Int(ref) { isSessionRef.append(contentsOf: repeatElement(false, count: Int(ref) + 1 - isSessionRef.count)) }
            if !isSessionRef[Int(ref)] {
                isSessionRef[Int(ref)] = true
                sessionHashes.append(header.sessionHash)
            }
            return ref
        }
        let peerIndex: Int
        if let last = peers.last, last == header.peer {
            peerIndex = peers.count - 1
        } else if let found = peers.firstIndex(of: header.peer) {
            peerIndex = found
        } else {
            peers.append(header.peer)
            peerIndex = peers.count - 1
        }
        let bodyLength = header.body.count
        if scratch.count < bodyLength { scratch = [UInt8](repeating: 0, count: max(bodyLength, 2 * scratch.count, 4096)) }
        let written = batch.bytes.withUnsafeBytes { raw in
            scratch.withUnsafeMutableBytes { output in
                BodyTranscoder.intern(UnsafeRawBufferPointer(rebasing: raw[header.body]), into: output) { interner.intern($0) }
            }
        }
        scratch.withUnsafeBytes { bodies.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<written])) }
        rows.append(
            Row(
                timestamp: header.timestamp, receivedAt: header.receivedAt, sequencePlusOne: header.sequence.map { $0 &+ 1 } ?? 0,
                session: sessionRef, peerIndex: UInt32(peerIndex), bodyLength: UInt32(written), type: header.type.rawValue,
                flags: header.timestampWasMissing ? 1 : 0))
        minTimestamp = min(minTimestamp, header.timestamp)
        maxTimestamp = max(maxTimestamp, header.timestamp)
        minReceived = min(minReceived, header.receivedAt)
        maxReceived = max(maxReceived, header.receivedAt)
        count += 1
    }

    /// Encodes the payload of the events added so far into `payload` (replacing its contents).
    mutating func encodePayload(into payload: inout [UInt8]) {
        payload.removeAll(keepingCapacity: true)
        payload.reserveCapacity(interner.bytes.count + bodies.count + count * 24 + 64)
        payload.append(Self.payloadVersion)
        Varint.append(UInt64(count), to: &payload)
        Varint.append(UInt64(interner.count), to: &payload)
        var start: UInt32 = 0
        for end in interner.ends {
            Varint.append(UInt64(end - start), to: &payload)
            start = end
        }
        payload.append(contentsOf: interner.bytes)
        for row in rows { payload.append(row.type) }
        for row in rows { Varint.append(UInt64(row.session), to: &payload) }
        // Deltas are per session, indexed by the session's string reference.
        var lastBySession = [Int64](repeating: minTimestamp, count: interner.count)
        var lastSequence = [UInt64](repeating: 0, count: interner.count)
        for row in rows {
            let session = Int(row.session)
            Varint.append(Varint.zigzag(row.timestamp &- lastBySession[session]), to: &payload)
            lastBySession[session] = row.timestamp
        }
        for row in rows {
            if row.sequencePlusOne == 0 {
                payload.append(0)
            } else {
                let session = Int(row.session)
                let sequence = row.sequencePlusOne - 1
                Varint.append(Varint.zigzag(Int64(bitPattern: sequence &- lastSequence[session])) &+ 1, to: &payload)
                lastSequence[session] = sequence
            }
        }
        var lastReceived = minReceived
        for row in rows {
            Varint.append(Varint.zigzag(row.receivedAt &- lastReceived), to: &payload)
            lastReceived = row.receivedAt
        }
        for row in rows { payload.append(row.flags) }
        Varint.append(UInt64(peers.count), to: &payload)
        for peer in peers {
            Varint.append(UInt64(peer.uid), to: &payload)
            Varint.append(UInt64(peer.gid), to: &payload)
            Varint.append(Varint.zigzag(Int64(peer.pid)), to: &payload)
        }
        for row in rows { Varint.append(UInt64(row.peerIndex), to: &payload) }
        payload.append(contentsOf: bodies)
    }
}
