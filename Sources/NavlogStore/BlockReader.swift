import NavlogEvents
import NavlogZstd

/// Reads blocks' data frames: checks the frame checksum, decompresses, decodes.
/// One per reader; it reuses its buffers and zstd context.
struct BlockReader: ~Copyable {
    private let decompressor: ZstdDecompressor
    private var frame: [UInt8] = []
    private var payload: [UInt8] = []

    init() throws(StoreError) {
        do { decompressor = try ZstdDecompressor() } catch { throw StoreError(code: .compression, message: error.message) }
    }

    /// Reads the block at `location` of `file` into `block`.
    /// - Throws: ``StoreError`` with code `.damaged` naming the file and offset when the block
    ///   fails its checksum, does not decompress, or does not decode.
    /// `locatingBodies`: see ``DecodedBlock/decode(payload:header:locatingBodies:)``.
    mutating func read(
        _ location: BlockLocation, from file: borrowing StoreFile, into block: inout DecodedBlock, locatingBodies: Bool = true
    ) throws(StoreError) {
        let header = location.header
        let frameOffset = location.offset + header.encodedSize
        try file.read(at: frameOffset, count: header.frameSize, into: &frame)
        guard frame.count == header.frameSize else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(frameOffset): the data frame of the block with LSNs \(header.firstLSN)–\(header.lastLSN) is cut short.",
                path: file.path, offset: frameOffset)
        }
        guard frame.withUnsafeBytes({ CRC32C.checksum($0) }) == header.frameChecksum else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(frameOffset): the data frame of the block with LSNs \(header.firstLSN)–\(header.lastLSN) fails its checksum.",
                path: file.path, offset: frameOffset)
        }
        do {
            try frame.withBytes { (raw) throws(ZstdError) in
                try decompressor.decompress(frame: raw, expectedSize: header.payloadSize, into: &payload)
            }
        } catch {
            throw StoreError(code: .damaged, message: "\(file.path) at byte \(frameOffset): \(error.message)", path: file.path, offset: frameOffset)
        }
        // Hand the payload to the block and take its old buffer back, so neither reallocates.
        swap(&payload, &block.payload)
        let decoded = block.payload
        block.payload = []
        do {
            try block.decode(payload: decoded, header: header, locatingBodies: locatingBodies)
        } catch {
            throw StoreError(code: .damaged, message: "\(file.path) at byte \(frameOffset): \(error.reason).", path: file.path, offset: frameOffset)
        }
    }
}

/// Builds a segment's index from the segment itself (every block checked and decoded).
enum SegmentIndexBuilder {
    static func build(_ file: borrowing StoreFile, segmentSize: Int) throws(StoreError) -> SegmentIndex {
        let scan = try BlockScanner.scan(file, verifyFrames: false)
        var reader = try BlockReader()
        var block = DecodedBlock()
        var postings: [SegmentIndex.Posting] = []
        for (number, location) in scan.blocks.enumerated() {
            try reader.read(location, from: file, into: &block)
            postings.append(contentsOf: Self.postings(of: block, number: number))
        }
        return SegmentIndex(segmentSize: segmentSize, entries: scan.blocks.map(SegmentIndex.Entry.init), postings: postings)
    }

    /// The session postings of one decoded block (each session once).
    static func postings(of block: borrowing DecodedBlock, number: Int) -> [SegmentIndex.Posting] {
        var postings: [SegmentIndex.Posting] = []
        var seen = Set<UInt32>()
        block.withStrings { strings in
            for ref in block.sessions where seen.insert(ref).inserted {
                if let bytes = strings[Int(ref)] {
                    postings.append(SegmentIndex.Posting(sessionHash: StringHash.hash(bytes), block: UInt32(number)))
                }
            }
        }
        return postings
    }
}
