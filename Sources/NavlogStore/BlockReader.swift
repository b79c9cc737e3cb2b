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
        let frameOffset = try readCheckedData(location, from: file)
        do {
            try frame.withBytes { (raw) throws(ZstdError) in
                try Self.decompressData(raw, header: header, decompressor: decompressor, into: &payload)
            }
        } catch {
            throw StoreError(code: .damaged, message: "\(file.path) at byte \(frameOffset): \(error.message)", path: file.path, offset: frameOffset)
        }
        try decodePayload(into: &block, path: file.path, offset: frameOffset) { (block, payload) throws(DecodedBlock.DecodingError) in
            try block.decode(payload: payload, header: header, locatingBodies: locatingBodies)
        }
    }
}

extension BlockReader {
    /// Reads what one of `modulus` workers building derived data needs of the block at
    /// `location`: of a grouped block whose group count is a multiple of `modulus`, the spine
    /// and the groups g with g % `modulus` == `residue` (the sessions whose id hash is
    /// `residue` modulo `modulus`); of any other block, all of it. Every frame's checksum is
    /// checked either way, so that every worker finds the same damage.
    /// - Throws: ``StoreError`` as ``read(_:from:into:locatingBodies:)``.
    mutating func read(
        _ location: BlockLocation, from file: borrowing StoreFile, into block: inout DecodedBlock, groupResidue residue: Int, modulus: Int
    ) throws(StoreError) {
        let header = location.header
        guard modulus > 1, !header.frames.isEmpty, header.groupCount % modulus == 0 else {
            try read(location, from: file, into: &block)
            return
        }
        let frameOffset = try readCheckedData(location, from: file)
        var frameStart = 0
        payload.removeAll(keepingCapacity: true)
        for (number, entry) in header.frames.enumerated() {
            defer { frameStart += entry.size }
            let bytes = frameStart..<(frameStart + entry.size)
            guard entry.size > 0, number == 0 || (number - 1) % modulus == residue else { continue }
            do {
                try frame.withBytes { (raw) throws(ZstdError) in
                    try decompressor.decompress(frame: UnsafeRawBufferPointer(rebasing: raw[bytes]), expectedSize: entry.payloadSize, appendingTo: &payload)
                }
            } catch {
                throw StoreError(code: .damaged, message: "\(file.path) at byte \(frameOffset + frameStart): \(error.message)", path: file.path, offset: frameOffset + frameStart)
            }
        }
        try decodePayload(into: &block, path: file.path, offset: frameOffset) { (block, payload) throws(DecodedBlock.DecodingError) in
            try block.decode(payload: payload, header: header, groupResidue: residue, modulus: modulus)
        }
    }
}

extension BlockReader {
    /// Reads the data frames of the block at `location` into ``frame`` and checks them: the
    /// one frame's checksum, or each of a grouped block's frames' (which together cover every
    /// byte of its data: a whole read checks those, so `navlog verify` finds a wrong frame
    /// table, and not the bytes a second time). Returns where the data starts in the file.
    private mutating func readCheckedData(_ location: BlockLocation, from file: borrowing StoreFile) throws(StoreError) -> Int {
        let header = location.header
        let frameOffset = location.offset + header.encodedSize
        try file.read(at: frameOffset, count: header.frameSize, into: &frame)
        guard frame.count == header.frameSize else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(frameOffset): the data frame of the block with LSNs \(header.firstLSN)–\(header.lastLSN) is cut short.",
                path: file.path, offset: frameOffset)
        }
        guard !header.frames.isEmpty || frame.withUnsafeBytes({ CRC32C.checksum($0) }) == header.frameChecksum else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(frameOffset): the data frame of the block with LSNs \(header.firstLSN)–\(header.lastLSN) fails its checksum.",
                path: file.path, offset: frameOffset)
        }
        var frameStart = 0
        for (number, entry) in header.frames.enumerated() {
            let checksum = frame.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[frameStart..<(frameStart + entry.size)])) }
            guard checksum == entry.checksum else {
                throw StoreError(
                    code: .damaged,
                    message:
                        "\(file.path) at byte \(frameOffset + frameStart): \(number == 0 ? "the spine frame" : "the frame of session group \(number - 1)") of the block with LSNs \(header.firstLSN)–\(header.lastLSN) fails its checksum.",
                    path: file.path, offset: frameOffset + frameStart)
            }
            frameStart += entry.size
        }
        return frameOffset
    }
}

extension BlockReader {
    /// Decompresses a block's data (`data`: all of its data frames) into `payload`: one frame,
    /// or a grouped block's frames one after another.
    static func decompressData(
        _ data: UnsafeRawBufferPointer, header: BlockHeader, decompressor: borrowing ZstdDecompressor, into payload: inout [UInt8]
    ) throws(ZstdError) {
        guard !header.frames.isEmpty else {
            try decompressor.decompress(frame: data, expectedSize: header.payloadSize, into: &payload)
            return
        }
        payload.removeAll(keepingCapacity: true)
        var offset = 0
        for frame in header.frames where frame.size > 0 {
            try decompressor.decompress(
                frame: UnsafeRawBufferPointer(rebasing: data[offset..<(offset + frame.size)]), expectedSize: frame.payloadSize, appendingTo: &payload)
            offset += frame.size
        }
    }

    /// Reads what a reader of one session needs of the block at `location`: for a grouped block
    /// the spine and the session's group only (``DecodedBlock/isDecoded(_:)``), else all of it;
    /// `receiveTimesAndPeers`: see ``DecodedBlock/decode(payload:header:session:receiveTimesAndPeers:)``.
    /// - Throws: ``StoreError`` as ``read(_:from:into:locatingBodies:)``.
    mutating func read(
        _ location: BlockLocation, from file: borrowing StoreFile, into block: inout DecodedBlock, session: [UInt8], receiveTimesAndPeers: Bool
    ) throws(StoreError) {
        let header = location.header
        guard !header.frames.isEmpty else {
            try read(location, from: file, into: &block)
            return
        }
        let dataOffset = location.offset + header.encodedSize
        // The frames are decompressed over the buffer's old bytes (only growth is cleared), and
        // the buffer cut to what they filled.
        let spineSize = header.frames[0].payloadSize
        payload.setCount(max(payload.count, spineSize), filler: 0)
        // A replay needs the spine's sessions only: its receive times and peers, which follow
        // them (about 40% of a large spine), are not decompressed.
        var spineRead = spineSize
        if receiveTimesAndPeers {
            try readFrame(0, of: location, from: file, at: 0)
        } else {
            spineRead = try readSpineSessions(of: location, from: file)
        }
        let found = payload.withUnsafeBytes { spine in
            session.withUnsafeBytes { DecodedBlock.sessionGroup(inSpine: UnsafeRawBufferPointer(rebasing: spine[..<spineRead]), of: $0) }
        }
        // A damaged spine can name any group: the decoder refuses one past the count.
        let wanted = found.map { (number: $0.number, group: min($0.group, header.groupCount - 1)) }
        var size = spineSize
        if let wanted {
            let part = header.frames[1 + wanted.group]
            payload.setCount(max(payload.count, spineSize + part.payloadSize), filler: 0)
            try readFrame(1 + wanted.group, of: location, from: file, at: spineSize)
            size += part.size > 0 ? part.payloadSize : 0
        }
        payload.setCount(size, filler: 0)
        try decodePayload(into: &block, path: file.path, offset: dataOffset) { (block, payload) throws(DecodedBlock.DecodingError) in
            try block.decode(payload: payload, header: header, session: wanted, receiveTimesAndPeers: receiveTimesAndPeers)
        }
    }

    /// Reads and checks a grouped block's spine frame, and decompresses it over the start of
    /// ``payload`` up to the end of its session column (or a little past: libzstd decodes whole
    /// blocks); returns how many of its bytes are there, the whole spine when its table does not
    /// parse (the decoder then says what is wrong).
    private mutating func readSpineSessions(of location: BlockLocation, from file: borrowing StoreFile) throws(StoreError) -> Int {
        let header = location.header
        let entry = header.frames[0]
        let offset = try readFrameBytes(0, of: location, from: file)
        var progress = ZstdDecompressor.PrefixProgress()
        do {
            // Enough for the counts and a session table of a few thousand ids, then (once the
            // table says where the session column starts) up to the column's longest end.
            var wanted = 65_536
            while true {
                try frame.withBytes { (raw) throws(ZstdError) in
                    try decompressor.decompressPrefix(of: raw, expectedSize: entry.payloadSize, over: &payload, at: 0, upTo: wanted, progress: &progress)
                }
                if progress.finished { return progress.produced }
                let produced = progress.produced
                let end = payload.withUnsafeBytes { DecodedBlock.sessionColumnEnd(inSpinePrefix: UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
                guard let end else {
                    wanted *= 4
                    continue
                }
                if produced >= end { return produced }
                wanted = end
            }
        } catch {
            throw StoreError(code: .damaged, message: "\(file.path) at byte \(offset): \(error.message)", path: file.path, offset: offset)
        }
    }

    /// Reads, checks and decompresses data frame `index` of a grouped block over ``payload`` at
    /// `start` (``payload`` must be long enough).
    private mutating func readFrame(_ index: Int, of location: BlockLocation, from file: borrowing StoreFile, at start: Int) throws(StoreError) {
        let entry = location.header.frames[index]
        guard entry.size > 0 else { return }
        let offset = try readFrameBytes(index, of: location, from: file)
        do {
            try frame.withBytes { (raw) throws(ZstdError) in try decompressor.decompress(frame: raw, expectedSize: entry.payloadSize, over: &payload, at: start) }
        } catch {
            throw StoreError(code: .damaged, message: "\(file.path) at byte \(offset): \(error.message)", path: file.path, offset: offset)
        }
    }

    /// Reads data frame `index` of a grouped block into ``frame`` and checks its CRC; returns
    /// its offset in the file.
    private mutating func readFrameBytes(_ index: Int, of location: BlockLocation, from file: borrowing StoreFile) throws(StoreError) -> Int {
        let header = location.header
        let entry = header.frames[index]
        let offset = location.offset + header.encodedSize + header.offset(ofFrame: index)
        let what = index == 0 ? "the spine frame" : "the frame of session group \(index - 1)"
        try file.read(at: offset, count: entry.size, into: &frame)
        guard frame.count == entry.size else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(offset): \(what) of the block with LSNs \(header.firstLSN)–\(header.lastLSN) is cut short.",
                path: file.path, offset: offset)
        }
        guard frame.withUnsafeBytes({ CRC32C.checksum($0) }) == entry.checksum else {
            throw StoreError(
                code: .damaged, message: "\(file.path) at byte \(offset): \(what) of the block with LSNs \(header.firstLSN)–\(header.lastLSN) fails its checksum.",
                path: file.path, offset: offset)
        }
        return offset
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
        return SegmentIndex(segmentSize: segmentSize, blocks: scan.blocks, postings: postings)
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

extension BlockReader {
    /// Hands the payload read to `block` and takes the block's old buffer back, so neither
    /// reallocates, then decodes it with `decode`. A payload that does not decode is damage at
    /// byte `offset` of the file at `path`.
    @inline(__always)
    fileprivate mutating func decodePayload(
        into block: inout DecodedBlock, path: String, offset: Int,
        _ decode: (inout DecodedBlock, consuming [UInt8]) throws(DecodedBlock.DecodingError) -> Void
    ) throws(StoreError) {
        swap(&payload, &block.payload)
        let decoded = block.payload
        block.payload = []
        do {
            try decode(&block, decoded)
        } catch {
            throw StoreError(code: .damaged, message: "\(path) at byte \(offset): \(error.reason).", path: path, offset: offset)
        }
    }
}
