public import NavlogEvents

/// Encodes a batch into a block payload and decodes it again, without compression or I/O: the
/// events come out exactly as a reader of the log sees them (interned bodies, per-session
/// times). The simulator drives the replay engine through this, so that what it believes is on
/// screen is what `navlog replay` will say.
public struct InMemoryBlockCodec {
    private var encoder = BlockEncoder()
    private var payload: [UInt8] = []

    /// A codec with empty buffers (they are reused between calls).
    public init() {}

    /// Replaces `block`'s contents with the events of `batch`, numbered from `firstLSN`.
    /// - Throws: ``DecodedBlock/DecodingError`` only if the encoder and decoder disagree (a bug).
    public mutating func roundTrip(_ batch: EventBatch, firstLSN: UInt64 = 1, into block: inout DecodedBlock) throws(DecodedBlock.DecodingError) {
        encoder.removeAll()
        for index in 0..<batch.count { encoder.append(batch, index) }
        payload.removeAll(keepingCapacity: true)
        let layout = encoder.encodePayload(into: &payload)
        let parts = layout.count > 1 ? layout.map { $0.reduce(0, +) } : []
        let header = BlockHeader(
            firstLSN: firstLSN, eventCount: batch.count, frameSize: 0, payloadSize: payload.count, frameChecksum: 0,
            minTimestamp: encoder.minTimestamp, maxTimestamp: encoder.maxTimestamp, minReceived: encoder.minReceived,
            maxReceived: encoder.maxReceived, sessionFilter: [],
            frames: parts.map { BlockHeader.DataFrame(size: $0, payloadSize: $0, checksum: 0) })
        // The block shares the payload's buffer until this codec writes to it again.
        try block.decode(payload: payload, header: header)
    }
}
