import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogZstd

/// Where a session's events in one block begin, and its replay state just before them.
struct ReplayPiece: Sendable, Equatable {
    /// The block number in the segment; ``endOfSegment`` for the state after the last covered block.
    var block: UInt32
    /// The 0-based index, in the session, of its first event in the block (for the end piece:
    /// the number of events so far).
    var startIndex: UInt64
    /// The `seq` and time of that first event (for the end piece: of the last event).
    var firstSequence: UInt64?
    var firstTimestamp: Int64
    /// The LSN of that first event: a piece may start inside a block (every
    /// ``ReplayIndex/checkpointInterval`` events of the session), and a replay from it skips
    /// the session's events in the block below this LSN. 0 for the end piece.
    var firstLSN: UInt64 = 0
    /// The state: which compressed frame holds it (``noState`` when the session had no
    /// earlier events), and where in the decompressed frame.
    var frame: UInt32 = ReplayPiece.noState
    var stateOffset: UInt32 = 0
    var stateLength: UInt32 = 0
    /// For an end piece: ``ended``, ``outOfOrder`` and ``hindsight``.
    var flags: UInt8 = 0

    /// The session ended (its `session.end` is in the segment) and its end state was let go: a
    /// replay to its end starts from its last checkpoint (issue 14: end states of every session
    /// were half the index).
    static let ended: UInt8 = 1
    /// Events of the session arrived out of `seq` order or twice (E4): replays sort them.
    static let outOfOrder: UInt8 = 2
    /// A later event of the session proved a navigation-only gesture cancelled (E7): its
    /// checkpoints, taken before that was known, do not hold; replays start from its first
    /// event knowing the gestures (``SessionReplayer/replayingWithHindsight(_:)``).
    static let hindsight: UInt8 = 4

    /// Whether the piece holds the session's state at the end of the segment.
    var hasEndState: Bool { block == ReplayPiece.endOfSegment && flags & ReplayPiece.ended == 0 }

    static let endOfSegment = UInt32.max
    static let noState = UInt32.max
}

/// One replay index file (`replay/<segment>.nrx`): for one segment, every session's state at
/// the start of each block that holds its events, and at the end of the blocks covered.
///
/// Layout (little-endian):
/// - header, 96 bytes (84 used, then zeros): magic `NLRX`, format version (u16), state version (u16), covered block
///   count (u32), the last covered block's offset (u64), size (u32), first LSN (u64) and event
///   count (u32) — the identity that ties the file to the segment's bytes —, directory offset
///   (u64), directory entries (u32), directory CRC-32C (u32), frame table offset (u64), frame
///   count (u32), journal offset (u64), journal length (u32), journal CRC-32C (u32), header
///   CRC-32C (u32);
/// - zstd frames, each holding many serialized states (~64 KiB before compression: states of
///   one app share most of their strings, so together they compress several times better);
/// - the frame table: offset (u64), length (u32), CRC-32C (u32) of each frame;
/// - the focus journal: zstd frames of ``FocusJournal`` records;
/// - per session: id length (varint), id, piece count (varint), pieces (block, index in the
///   session, seq + 1, zigzag time, LSN, frame, state offset and length, flags: varints);
/// - directory, sorted by session hash: hash (u64), offset (u64), length (u32), CRC-32C (u32)
///   of that session's pieces.
///
/// Everything read is checked (CRCs, bounds, versions); a file that fails is rebuilt.
enum ReplayIndexFile {
    static let magic: [UInt8] = Array("NLRX".utf8)
    /// 2: the focus journal (``FocusJournal``) added. 3: journals start with a string table.
    /// 4: journals record screen views as they close (E3), with the view they came from.
    /// 5: journals start with the sessions they re-derived after a late event (E4).
    /// 6: a checkpoint every ``ReplayIndex/checkpointInterval`` events of a session (not one
    /// per block it has events in), pieces carry their first event's LSN.
    /// 7: journals stored column by column (``FocusJournal/Column``); end pieces carry flags and
    /// an ended session keeps no end state.
    /// 8: each session's pieces are compressed, in frames of their own after the states'; a
    /// directory record names the frame and where in it (they were a twelfth of a file, stored
    /// as they are: session ids and varints).
    static let formatVersion: UInt16 = 8
    static let headerSize = 96
    static let frameRecordSize = 16
    /// States are gathered into frames of about this many bytes before compression.
    static let frameTarget = 64 << 10
    /// Sessions' pieces are gathered into frames of about this many bytes: a lookup decompresses
    /// one (small, so that a seek's lookup stays cheap).
    static let pieceFrameTarget = 32 << 10
    static let directoryRecordSize = 24

    /// The identity of the covered part of a segment.
    struct Coverage: Sendable, Equatable {
        var blockCount: UInt32
        var lastOffset: UInt64
        var lastSize: UInt32
        var lastFirstLSN: UInt64
        var lastCount: UInt32

        init(blocks: ArraySlice<SegmentIndex.Entry>) {
            blockCount = UInt32(blocks.count)
            let last = blocks.last
            lastOffset = UInt64(last?.offset ?? 0)
            lastSize = UInt32(last?.size ?? 0)
            lastFirstLSN = last?.firstLSN ?? 0
            lastCount = UInt32(last?.count ?? 0)
        }

        init(blockCount: UInt32, lastOffset: UInt64, lastSize: UInt32, lastFirstLSN: UInt64, lastCount: UInt32) {
            (self.blockCount, self.lastOffset, self.lastSize, self.lastFirstLSN, self.lastCount) = (blockCount, lastOffset, lastSize, lastFirstLSN, lastCount)
        }

        /// Whether these are the first blocks of `blocks` (the segment still holds what was indexed).
        func isPrefix(of blocks: [SegmentIndex.Entry]) -> Bool {
            guard Int(blockCount) <= blocks.count else { return false }
            return Coverage(blocks: blocks.prefix(Int(blockCount))) == self
        }
    }

    /// Builds a file.
    struct Writer: ~Copyable {
        private var frames: [UInt8] = []
        private var frameTable: [(offset: UInt64, length: UInt32, checksum: UInt32)] = []
        private var pending: [UInt8] = []
        private var sessions: [(id: [UInt8], pieces: [ReplayPiece])] = []
        private var sessionNumbers = ByteStringTable()
        private let compressor: ZstdCompressor

        /// A writer compressing state frames at zstd `level`.
        init(level: Int32) throws(ZstdError) {
            compressor = try ZstdCompressor(level: level, contentChecksum: false)
        }

        /// Adds a piece for `session`; `state` is nil when the session has no earlier events.
        mutating func add(session: UnsafeRawBufferPointer, piece: ReplayPiece, state: SessionReplayer?) throws(ZstdError) {
            var piece = piece
            if let state {
                let start = pending.count
                state.encodeCheckpoint(into: &pending)
                try placeState(of: &piece, from: start)
            } else {
                piece.frame = ReplayPiece.noState
            }
            append(piece, of: session)
        }

        /// Adds a piece for `session` whose state is `encoded` as a checkpoint (read from the
        /// file an extension carries on: ``Reader/encodedState(_:)``), as it is: decoding and
        /// encoding every carried state again was a third of an extension's time.
        mutating func add(session: UnsafeRawBufferPointer, piece: ReplayPiece, encodedState encoded: ArraySlice<UInt8>) throws(ZstdError) {
            var piece = piece
            let start = pending.count
            pending.append(contentsOf: encoded)
            try placeState(of: &piece, from: start)
            append(piece, of: session)
        }

        /// Points `piece` at the state written to the frame being filled from `start` on, and
        /// compresses the frame once it is full.
        private mutating func placeState(of piece: inout ReplayPiece, from start: Int) throws(ZstdError) {
            piece.frame = UInt32(frameTable.count)
            piece.stateOffset = UInt32(start)
            piece.stateLength = UInt32(pending.count - start)
            if pending.count >= ReplayIndexFile.frameTarget { try flushFrame() }
        }

        /// Adds `piece` to `session`'s pieces.
        private mutating func append(_ piece: ReplayPiece, of session: UnsafeRawBufferPointer) {
            let (number, inserted) = sessionNumbers.insert(session)
            if inserted { sessions.append((Array(session), [])) }
            sessions[Int(number)].pieces.append(piece)
        }

        private mutating func flushFrame() throws(ZstdError) {
            guard !pending.isEmpty else { return }
            let start = frames.count
            _ = try pending.withBytes { (raw) throws(ZstdError) in try compressor.compress(raw, appendingTo: &frames) }
            let checksum = frames.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            frameTable.append((UInt64(ReplayIndexFile.headerSize + start), UInt32(frames.count - start), checksum))
            pending.removeAll(keepingCapacity: true)
        }

        /// Adds what `other` holds (another worker's sessions, or later pieces of sessions this
        /// one has) after what this writer holds, and empties it.
        mutating func append(_ other: inout Writer) throws(ZstdError) {
            try flushFrame()
            try other.flushFrame()
            let frameBase = UInt32(frameTable.count)
            let byteBase = UInt64(frames.count)
            frames.append(contentsOf: other.frames)
            for frame in other.frameTable { frameTable.append((frame.offset + byteBase, frame.length, frame.checksum)) }
            for session in other.sessions {
                let (number, inserted) = session.id.withUnsafeBytes { sessionNumbers.insert($0) }
                if inserted { sessions.append((session.id, [])) }
                for var piece in session.pieces {
                    if piece.frame != ReplayPiece.noState { piece.frame += frameBase }
                    sessions[Int(number)].pieces.append(piece)
                }
            }
            other.frames = []
            other.frameTable = []
            other.sessions = []
            other.sessionNumbers = ByteStringTable()
        }

        /// The file's bytes; `journal` is the focus journal, already compressed.
        consuming func finish(coverage: Coverage, journal: [UInt8]) throws(ZstdError) -> [UInt8] {
            try flushFrame()
            // Each session's pieces, compressed in frames of their own after the states'.
            var directory: [(hash: UInt64, frame: UInt32, offset: UInt32, length: UInt32, checksum: UInt32)] = []
            for session in sessions {
                let start = pending.count
                Varint.append(UInt64(session.id.count), to: &pending)
                pending.append(contentsOf: session.id)
                Varint.append(UInt64(session.pieces.count), to: &pending)
                for piece in session.pieces {
                    Varint.append(UInt64(piece.block), to: &pending)
                    Varint.append(piece.startIndex, to: &pending)
                    Varint.append(piece.firstSequence.map { $0 &+ 1 } ?? 0, to: &pending)
                    Varint.append(Varint.zigzag(piece.firstTimestamp), to: &pending)
                    Varint.append(piece.firstLSN, to: &pending)
                    Varint.append(UInt64(piece.frame), to: &pending)
                    Varint.append(UInt64(piece.stateOffset), to: &pending)
                    Varint.append(UInt64(piece.stateLength), to: &pending)
                    Varint.append(UInt64(piece.flags), to: &pending)
                }
                let checksum = pending.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
                let hash = session.id.withUnsafeBytes { StringHash.hash($0) }
                directory.append((hash, UInt32(frameTable.count), UInt32(start), UInt32(pending.count - start), checksum))
                if pending.count >= ReplayIndexFile.pieceFrameTarget { try flushFrame() }
            }
            try flushFrame()
            directory.sort { ($0.hash, $0.frame, $0.offset) < ($1.hash, $1.frame, $1.offset) }
            var output = [UInt8](repeating: 0, count: ReplayIndexFile.headerSize)
            output.append(contentsOf: frames)
            let journalOffset = output.count
            output.append(contentsOf: journal)
            let frameTableOffset = output.count
            for frame in frameTable {
                appendLittleEndian(frame.offset, to: &output)
                appendLittleEndian(frame.length, to: &output)
                appendLittleEndian(frame.checksum, to: &output)
            }
            let directoryOffset = output.count
            for record in directory {
                appendLittleEndian(record.hash, to: &output)
                appendLittleEndian(record.frame, to: &output)
                appendLittleEndian(record.offset, to: &output)
                appendLittleEndian(record.length, to: &output)
                appendLittleEndian(record.checksum, to: &output)
            }
            let directoryChecksum = output.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[directoryOffset...])) }
            var header: [UInt8] = ReplayIndexFile.magic
            appendLittleEndian(ReplayIndexFile.formatVersion, to: &header)
            appendLittleEndian(UInt16(SessionReplayer.checkpointVersion), to: &header)
            appendLittleEndian(coverage.blockCount, to: &header)
            appendLittleEndian(coverage.lastOffset, to: &header)
            appendLittleEndian(coverage.lastSize, to: &header)
            appendLittleEndian(coverage.lastFirstLSN, to: &header)
            appendLittleEndian(coverage.lastCount, to: &header)
            appendLittleEndian(UInt64(directoryOffset), to: &header)
            appendLittleEndian(UInt32(directory.count), to: &header)
            appendLittleEndian(directoryChecksum, to: &header)
            appendLittleEndian(UInt64(frameTableOffset), to: &header)
            appendLittleEndian(UInt32(frameTable.count), to: &header)
            appendLittleEndian(UInt64(journalOffset), to: &header)
            appendLittleEndian(UInt32(journal.count), to: &header)
            appendLittleEndian(CRC32C.checksum(journal), to: &header)
            appendLittleEndian(CRC32C.checksum(header), to: &header)
            output.replaceSubrange(0..<header.count, with: header)
            return output
        }
    }

    /// An opened, checked file.
    final class Reader {
        let file: StoreFile
        let coverage: Coverage
        private let directory: [UInt8]
        private let frameTable: [UInt8]
        private let journalLocation: (offset: UInt64, length: UInt32, checksum: UInt32)
        private let decompressor: ZstdDecompressor
        /// The last two frames decompressed, the newest first: a seek looks a session's pieces
        /// up (a pieces frame), then loads a state (a state frame), and pieces of one lookup are
        /// often in the same frame.
        private var cachedFrames: [(number: UInt32, bytes: [UInt8])] = []

        /// The format and checkpoint versions of the index file at `path` when they are not this
        /// navlog's (a file another version wrote); nil when they are, or it is no index file.
        static func otherVersion(path: String) -> (format: UInt16, checkpoint: UInt16)? {
            guard let file = try? StoreFile(path: path, writable: false), let header = try? file.read(at: 0, count: 8), header.count == 8,
                Array(header[0..<4]) == ReplayIndexFile.magic
            else { return nil }
            var reader = LittleEndianReader(bytes: header, offset: 4)
            let format = reader.u16(), checkpoint = reader.u16()
            if format == ReplayIndexFile.formatVersion && checkpoint == UInt16(SessionReplayer.checkpointVersion) { return nil }
            return (format, checkpoint)
        }

        /// Opens `path`; nil when it is missing, of another version, or damaged.
        init?(path: String) {
            guard let file = try? StoreFile(path: path, writable: false), let header = try? file.read(at: 0, count: ReplayIndexFile.headerSize),
                header.count == ReplayIndexFile.headerSize, Array(header[0..<4]) == ReplayIndexFile.magic
            else { return nil }
            var reader = LittleEndianReader(bytes: header, offset: 4)
            guard reader.u16() == ReplayIndexFile.formatVersion, reader.u16() == UInt16(SessionReplayer.checkpointVersion) else { return nil }
            let coverage = Coverage(blockCount: reader.u32(), lastOffset: reader.u64(), lastSize: reader.u32(), lastFirstLSN: reader.u64(), lastCount: reader.u32())
            let directoryOffset = reader.u64(), directoryCount = reader.u32(), directoryChecksum = reader.u32()
            let frameTableOffset = reader.u64(), frameCount = reader.u32()
            let journalOffset = reader.u64(), journalLength = reader.u32(), journalChecksum = reader.u32()
            let headerEnd = reader.offset
            // The CRC covers the used part; the padding after it must be zero.
            guard reader.u32() == CRC32C.checksum(Array(header[0..<headerEnd])), header[reader.offset...].allSatisfy({ $0 == 0 }),
                directoryOffset >= UInt64(ReplayIndexFile.headerSize),
                directoryOffset < 1 << 40, directoryCount < 1 << 26,
                let directory = try? file.read(at: Int(directoryOffset), count: Int(directoryCount) * ReplayIndexFile.directoryRecordSize),
                directory.count == Int(directoryCount) * ReplayIndexFile.directoryRecordSize, CRC32C.checksum(directory) == directoryChecksum,
                frameTableOffset < 1 << 40, frameCount < 1 << 26,
                let frameTable = try? file.read(at: Int(frameTableOffset), count: Int(frameCount) * ReplayIndexFile.frameRecordSize),
                frameTable.count == Int(frameCount) * ReplayIndexFile.frameRecordSize,
                let decompressor = try? ZstdDecompressor()
            else { return nil }
            self.frameTable = frameTable
            self.journalLocation = (journalOffset, journalLength, journalChecksum)
            self.file = file
            self.coverage = coverage
            self.directory = directory
            self.decompressor = decompressor
        }

        private var recordCount: Int { directory.count / ReplayIndexFile.directoryRecordSize }

        private func record(_ index: Int) -> DirectoryRecord {
            var reader = LittleEndianReader(bytes: directory, offset: index * ReplayIndexFile.directoryRecordSize)
            return DirectoryRecord(hash: reader.u64(), frame: reader.u32(), offset: reader.u32(), length: reader.u32(), checksum: reader.u32())
        }

        /// Where a session's pieces are: its id's hash, the frame and the bytes in it, their CRC.
        private struct DirectoryRecord {
            var hash: UInt64
            var frame: UInt32
            var offset: UInt32
            var length: UInt32
            var checksum: UInt32
        }

        /// Every session in the file (in the order of their pieces, so each frame is
        /// decompressed once).
        func sessions() -> [String] {
            (0..<recordCount).map(record).sorted { ($0.frame, $0.offset) < ($1.frame, $1.offset) }.compactMap { entries($0)?.session }
        }

        /// What the file holds for one session.
        enum Lookup {
            /// The session has no events in the covered blocks.
            case absent
            /// Its pieces, in block order, the end piece last.
            case found([ReplayPiece])
            /// Its entry fails its CRC or does not parse: the file must be rebuilt.
            case damaged
        }

        /// The pieces of `session`.
        func lookup(_ session: String) -> Lookup {
            let hash = StringHash.hash(session)
            var low = 0, high = recordCount
            while low < high {
                let mid = (low + high) / 2
                if record(mid).hash < hash { low = mid + 1 } else { high = mid }
            }
            while low < recordCount, record(low).hash == hash {
                guard let found = entries(record(low)) else { return .damaged }
                if found.session == session { return .found(found.pieces) }
                low += 1
            }
            return .absent
        }

        /// The pieces of `session`, nil when absent or damaged.
        func pieces(of session: String) -> [ReplayPiece]? {
            if case .found(let pieces) = lookup(session) { return pieces }
            return nil
        }

        private func entries(_ record: DirectoryRecord) -> (session: String, pieces: [ReplayPiece])? {
            guard let frame = frame(record.frame), UInt64(record.offset) + UInt64(record.length) <= UInt64(frame.count) else { return nil }
            return frame.withUnsafeBytes { whole -> (String, [ReplayPiece])? in
                let raw = UnsafeRawBufferPointer(rebasing: whole[Int(record.offset)..<Int(record.offset + record.length)])
                guard CRC32C.checksum(raw) == record.checksum else { return nil }
                var reader = ByteReader(raw)
                guard let length = reader.readCount(limit: raw.count), let id = reader.readBytes(length), let count = reader.readCount(limit: raw.count)
                else { return nil }
                var pieces: [ReplayPiece] = []
                for _ in 0..<count {
                    guard let block = reader.readVarint(), block <= UInt64(UInt32.max), let start = reader.readVarint(), let sequence = reader.readVarint(),
                        let timestamp = reader.readVarint(), let firstLSN = reader.readVarint(), let frame = reader.readVarint(), frame <= UInt64(UInt32.max),
                        let offset = reader.readVarint(),
                        offset <= UInt64(UInt32.max), let length = reader.readVarint(), length <= UInt64(UInt32.max),
                        let flags = reader.readVarint(), flags <= 7
                    else { return nil }
                    pieces.append(
                        ReplayPiece(
                            block: UInt32(block), startIndex: start, firstSequence: sequence == 0 ? nil : sequence - 1,
                            firstTimestamp: Varint.unzigzag(timestamp), firstLSN: firstLSN, frame: UInt32(frame), stateOffset: UInt32(offset),
                            stateLength: UInt32(length), flags: UInt8(flags)))
                }
                return (String(decoding: id, as: UTF8.self), pieces)
            }
        }

        /// The state a piece starts from: a new session for a piece without one; nil when the
        /// stored state is damaged.
        func state(_ piece: ReplayPiece) -> SessionReplayer? {
            guard piece.frame != ReplayPiece.noState else { return SessionReplayer() }
            guard let encoded = encodedState(piece) else { return nil }
            return encoded.withUnsafeBytes { SessionReplayer(checkpoint: $0) }
        }

        /// The checkpoint `piece` holds, as encoded (nil when its frame is damaged, or for a
        /// piece without a state): what an extension carries on without decoding it.
        func encodedState(_ piece: ReplayPiece) -> ArraySlice<UInt8>? {
            guard piece.frame != ReplayPiece.noState, let frame = frame(piece.frame),
                UInt64(piece.stateOffset) + UInt64(piece.stateLength) <= UInt64(frame.count)
            else { return nil }
            return frame[Int(piece.stateOffset)..<Int(piece.stateOffset + piece.stateLength)]
        }

        /// The focus journal as stored (zstd frames), nil when damaged.
        func compressedJournal() -> [UInt8]? {
            guard journalLocation.offset < 1 << 40, let bytes = try? file.read(at: Int(journalLocation.offset), count: Int(journalLocation.length)),
                bytes.count == Int(journalLocation.length), CRC32C.checksum(bytes) == journalLocation.checksum
            else { return nil }
            return bytes
        }

        /// The focus journal's frames, each a string table and its records; nil when damaged.
        func journal() -> [[UInt8]]? {
            guard let compressed = compressedJournal() else { return nil }
            var output: [[UInt8]] = []
            var offset = 0
            while offset < compressed.count {
                // Each frame's size found where it is (a copy of the rest of the journal for each
                // frame took time quadratic in the frames); the frame alone is copied.
                guard
                    let size = try? compressed.withUnsafeBytes({ (raw) throws(ZstdError) in try ZstdDecompressor.frameSize(in: UnsafeRawBufferPointer(rebasing: raw[offset...])) }),
                    size > 0, let frame = try? decompressor.decompress(frame: Array(compressed[offset..<(offset + size)]), limit: 1 << 30)
                else { return nil }
                output.append(frame)
                offset += size
            }
            return output
        }

        /// Frame `number`, decompressed after its CRC is checked.
        private func frame(_ number: UInt32) -> [UInt8]? {
            if let cached = cachedFrames.firstIndex(where: { $0.number == number }) {
                if cached > 0 { cachedFrames.swapAt(0, cached) }
                return cachedFrames[0].bytes
            }
            guard Int(number) < frameTable.count / ReplayIndexFile.frameRecordSize else { return nil }
            var reader = LittleEndianReader(bytes: frameTable, offset: Int(number) * ReplayIndexFile.frameRecordSize)
            let offset = reader.u64(), length = reader.u32(), checksum = reader.u32()
            guard offset < 1 << 40, let bytes = try? file.read(at: Int(offset), count: Int(length)), bytes.count == Int(length),
                CRC32C.checksum(bytes) == checksum, let decoded = try? decompressor.decompress(frame: bytes, limit: 1 << 28)
            else { return nil }
            cachedFrames.insert((number, decoded), at: 0)
            if cachedFrames.count > 2 { cachedFrames.removeLast() }
            return decoded
        }
    }
}

func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to output: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) }
}

/// Reads little-endian integers from a buffer whose size the caller checked.
struct LittleEndianReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func read<T: FixedWidthInteger>(_: T.Type) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        offset += MemoryLayout<T>.size
        return value
    }

    mutating func u16() -> UInt16 { read(UInt16.self) }
    mutating func u32() -> UInt32 { read(UInt32.self) }
    mutating func u64() -> UInt64 { read(UInt64.self) }
}
