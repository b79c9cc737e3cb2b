#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What an import holds of sessions still open, moved out of memory into an unnamed temporary
/// file (`tmpfile`, gone when the process ends) in sorted runs, so that memory does not grow with
/// the sessions that stay open until the end (Sentry events tied by a session tag).
///
/// Each ``spill(_:)`` writes one run: sessions in increasing order of id, each with one block of
/// bytes the caller encoded. ``take(_:)`` then hands back, for ids asked in increasing order, the
/// blocks written for that id, oldest run first.
///
/// `@unchecked Sendable`: the `FILE` is owned by this one value and used only by the import that
/// made it (an ``Importer`` is used from one thread at a time, as its mutating API requires).
final class SessionSpill: @unchecked Sendable {
    /// The file, or `nil` once it could not be written (the caller then holds everything in memory).
    private var file: UnsafeMutablePointer<FILE>?
    /// The bytes written so far.
    private var written = 0
    /// Each run's cursor: where its next session begins and where the run ends.
    private var runs: [(next: Int, end: Int)] = []
    /// The id of each run's next session, read ahead (`nil` when the run is done).
    private var heads: [String?] = []
    private var buffer: [UInt8] = []

    /// A spill with a temporary file, or `nil` if none can be made.
    init?() {
        guard let file = tmpfile() else { return nil }
        self.file = file
    }

    deinit {
        if let file { fclose(file) }
    }

    /// Writes one run: `sessions` (id, block), in increasing order of id. Returns `false` if the
    /// file could not be written (nothing more can be spilled; what was taken in is kept).
    func spill(_ sessions: [(String, [UInt8])]) -> Bool {
        guard let file else { return false }
        let start = written
        for (id, block) in sessions {
            buffer.removeAll(keepingCapacity: true)
            Self.append(UInt64(id.utf8.count), to: &buffer)
            buffer.append(contentsOf: id.utf8)
            Self.append(UInt64(block.count), to: &buffer)
            guard fwrite(buffer, 1, buffer.count, file) == buffer.count, fwrite(block, 1, block.count, file) == block.count else {
                fail()
                return false
            }
            written += buffer.count + block.count
        }
        guard fflush(file) == 0 else {
            fail()
            return false
        }
        runs.append((start, written))
        heads.append(readID(run: runs.count - 1))
        return true
    }

    /// The blocks spilled for `id`, oldest first; ids must be asked in increasing order (an id
    /// passed over is never returned). Empty for an id with nothing spilled.
    func take(_ id: String) -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        for run in runs.indices {
            // Sessions of this run that sort before `id` were not asked for: passed over.
            while let head = heads[run], head < id { readBlock(run: run) }
            guard heads[run] == id else { continue }
            blocks.append(readBlock(run: run))
        }
        return blocks
    }

    private func fail() {
        if let file { fclose(file) }
        file = nil
    }

    private func readBytes(_ count: Int, at offset: Int) -> [UInt8] {
        guard let file, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fileno(file), $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0, errno == EINTR { continue }
            // Written and flushed by this process: a short read is a broken disk, not bad input.
            precondition(n > 0, "the import's temporary file could not be read back: \(String(cString: strerror(errno)))")
            done += n
        }
        return bytes
    }

    private func uint64(at offset: Int) -> Int {
        Int(readBytes(8, at: offset).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
    }

    /// Reads the id at the run's cursor (the cursor then points at its block's length).
    private func readID(run: Int) -> String? {
        guard runs[run].next < runs[run].end else { return nil }
        let length = uint64(at: runs[run].next)
        let id = String(decoding: readBytes(length, at: runs[run].next + 8), as: UTF8.self)
        runs[run].next += 8 + length
        return id
    }

    /// Reads the block at the run's cursor and the next id after it.
    @discardableResult
    private func readBlock(run: Int) -> [UInt8] {
        let length = uint64(at: runs[run].next)
        let block = readBytes(length, at: runs[run].next + 8)
        runs[run].next += 8 + length
        heads[run] = readID(run: run)
        return block
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
