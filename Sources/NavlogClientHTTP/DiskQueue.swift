import Foundation  // JSONSerialization for the queue's small state files
import NavlogClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A batch closed on disk: a gzip body sent as it is until the intake answers it.
struct SealedBatch {
    /// The queue index of its first event.
    var first: UInt64
    /// Its events.
    var count: Int
    /// Its file.
    var path: String
    /// Its size on disk.
    var size: Int
    /// The client's numbers of its events (empty for batches an earlier process queued).
    var localIDs: [UInt64]
}

/// The HTTP transport's queue directory. Used by the client's thread only.
///
/// - `open-F.jsonl`: the open batch's event lines as they arrive (F: the queue index of its
///   first event). Appended with one `write` per wake-up, so an app killed at any moment keeps
///   every line it wrote; a torn last line is cut at the next start.
/// - `batch-F-C.gz`: a closed batch of C events, written under a temporary name and renamed, then
///   the open file it came from is removed (a start that finds both drops the open file).
/// - `state.json`: the next queue index and the events dropped over the queue's life, written
///   before a batch file is removed, so the index never goes back.
/// - `sequences.json`: the last `seq` the client gave each session (written before the events
///   that carry them), so numbers are never reused after a restart.
///
/// Files are not fsynced: they survive the app being killed, not the device losing power.
final class DiskQueue {
    let directory: String
    /// The queue index the next appended event gets.
    private(set) var next: UInt64 = 0
    /// Closed batches, oldest first.
    private(set) var sealed: [SealedBatch] = []
    private(set) var openFirst: UInt64 = 0
    private(set) var openCount = 0
    private(set) var openBytes: [UInt8] = []
    private(set) var openLocalIDs: [UInt64] = []
    /// When the open batch got its first event (the transport's clock).
    private(set) var openSince: Double?
    private var openWritten = 0
    private var openDescriptor: Int32 = -1
    /// Events dropped over the queue's life (the bound), kept across restarts.
    private(set) var droppedOverLife: UInt64 = 0
    /// The last `seq` given to each session without one.
    var sequences: [String: Int64] = [:]
    private var sequencesChanged = false
    let compressionLevel: Int32

    /// Opens (creating it if needed) and recovers the queue: every open batch a previous
    /// process left is closed, so it is sent as it was.
    init(directory: String, compressionLevel: Int32) throws {
        self.directory = directory
        self.compressionLevel = compressionLevel
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw NavlogClient.HTTPTransportError(code: .queue, "Cannot create the queue directory \(directory): \(error.localizedDescription).")
        }
        let listing = try Self.list(directory)
        let state = Self.readState(directory)
        next = state.next
        droppedOverLife = state.dropped
        sealed = listing.sealed
        for batch in sealed { next = max(next, batch.first + UInt64(batch.count)) }
        for name in listing.temporary { unlink(directory + "/" + name) }
        for (first, name) in listing.open {
            let path = directory + "/" + name
            if sealed.contains(where: { $0.first == first }) {
                unlink(path)  // closed before the process ended; only the removal was missed
                continue
            }
            var bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) } ?? []
            if let last = bytes.lastIndex(of: 0x0A) { bytes.removeSubrange((last + 1)...) } else { bytes.removeAll() }
            let count = bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            if count == 0 {
                unlink(path)
                continue
            }
            openFirst = first
            openBytes = bytes
            openCount = count
            openWritten = bytes.count
            openSince = 0
            next = max(next, first + UInt64(count))
            try seal(openPath: path)
        }
        if let data = FileManager.default.contents(atPath: directory + "/sequences.json"),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        {
            for (session, value) in object { if let number = value as? NSNumber { sequences[session] = number.int64Value } }
        }
    }

    deinit {
        if openDescriptor >= 0 { _ = close(openDescriptor) }
    }

    /// Events on disk or in the open batch.
    var eventCount: Int { sealed.reduce(openCount) { $0 + $1.count } }
    /// Bytes on disk (closed batches and the open batch).
    var byteCount: Int { sealed.reduce(openBytes.count) { $0 + $1.size } }

    /// Adds one event line (no newline) to the open batch, closing it first when the line would
    /// take it over `maximumBytes`, and after when it holds `maximumEvents`. Call
    /// ``writeOpenBatch()`` after a run of appends.
    func append(_ line: [UInt8], localID: UInt64, now: Double, maximumEvents: Int, maximumBytes: Int) throws {
        if openCount > 0 && (openCount >= maximumEvents || openBytes.count + line.count + 1 > maximumBytes) {
            try seal()
        }
        if openCount == 0 {
            openFirst = next
            openSince = now
        }
        openBytes.append(contentsOf: line)
        openBytes.append(0x0A)
        openCount += 1
        openLocalIDs.append(localID)
        next += 1
        if openCount >= maximumEvents { try seal() }
    }

    /// Notes that the sequence numbers changed, so the next write saves them first.
    func sequencesDidChange() { sequencesChanged = true }

    /// Writes what was appended since the last call to the open batch's file (and, first, the
    /// sequence numbers given out).
    func writeOpenBatch() throws {
        if sequencesChanged {
            if sequences.count > 1024 {
                // Sessions are short-lived: keep the most recent by number of events (good enough to never reuse one in practice).
                let kept = sequences.sorted { $0.value > $1.value }.prefix(512)
                sequences = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
            try writeAtomically(JSONSerialization.data(withJSONObject: sequences), to: directory + "/sequences.json")
            sequencesChanged = false
        }
        guard openCount > 0, openWritten < openBytes.count else { return }
        if openDescriptor < 0 {
            let path = openPath(openFirst)
            openDescriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            guard openDescriptor >= 0 else { throw failure("cannot open \(path)") }
            // A file left by a failed write: start it again from what memory holds.
            if openWritten == 0 { _ = ftruncate(openDescriptor, 0) }
        }
        while openWritten < openBytes.count {
            let written = openBytes.withUnsafeBytes { raw in
                write(openDescriptor, raw.baseAddress! + openWritten, raw.count - openWritten)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(openPath(openFirst))")
            }
            openWritten += written
        }
    }

    /// Closes the open batch: its gzip body under a temporary name, renamed, then the open file removed.
    func seal(openPath givenPath: String? = nil) throws {
        guard openCount > 0 else { return }
        let body = try Gzip.compress(openBytes, level: compressionLevel)
        let path = directory + "/batch-\(openFirst)-\(openCount).gz"
        try writeAtomically(Data(body), to: path)
        if openDescriptor >= 0 {
            _ = close(openDescriptor)
            openDescriptor = -1
        }
        unlink(givenPath ?? openPath(openFirst))
        sealed.append(SealedBatch(first: openFirst, count: openCount, path: path, size: body.count, localIDs: openLocalIDs))
        openCount = 0
        openBytes = []
        openLocalIDs = []
        openWritten = 0
        openSince = nil
    }

    /// Removes the oldest closed batch once the intake answered it (or it is dropped).
    @discardableResult
    func removeOldest(dropped: Bool) throws -> SealedBatch {
        let batch = sealed.removeFirst()
        if dropped { droppedOverLife += UInt64(batch.count) }
        // The state first: with no batch file left, it alone keeps the next index.
        try writeAtomically(JSONSerialization.data(withJSONObject: ["next": next, "dropped": droppedOverLife]), to: directory + "/state.json")
        unlink(batch.path)
        return batch
    }

    /// The gzip body of a closed batch.
    func body(of batch: SealedBatch) throws -> Data {
        guard let data = FileManager.default.contents(atPath: batch.path) else {
            throw NavlogClient.HTTPTransportError(code: .queue, "Cannot read the queued batch \(batch.path).")
        }
        return data
    }

    private func openPath(_ first: UInt64) -> String { directory + "/open-\(first).jsonl" }

    private func failure(_ what: String) -> NavlogClient.HTTPTransportError {
        NavlogClient.HTTPTransportError(code: .queue, "The event queue \(what): \(String(cString: strerror(errno))).")
    }

    private func writeAtomically(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            unlink(temporary)
            throw NavlogClient.HTTPTransportError(code: .queue, "The event queue cannot write \(temporary): \(error.localizedDescription).")
        }
        guard rename(temporary, path) == 0 else {
            let failed = failure("cannot rename \(temporary)")
            unlink(temporary)
            throw failed
        }
    }

    // MARK: - Reading a directory

    private struct Listing {
        var sealed: [SealedBatch] = []
        var open: [(UInt64, String)] = []
        var temporary: [String] = []
    }

    private static func list(_ directory: String) throws -> Listing {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw NavlogClient.HTTPTransportError(code: .queue, "Cannot read the queue directory \(directory): \(error.localizedDescription).")
        }
        var listing = Listing()
        for name in names {
            if name.hasSuffix(".tmp") {
                listing.temporary.append(name)
            } else if name.hasPrefix("batch-"), name.hasSuffix(".gz") {
                let parts = name.dropFirst(6).dropLast(3).split(separator: "-")
                guard parts.count == 2, let first = UInt64(parts[0]), let count = Int(parts[1]) else { continue }
                var info = stat()
                let size = stat(directory + "/" + name, &info) == 0 ? Int(info.st_size) : 0
                listing.sealed.append(SealedBatch(first: first, count: count, path: directory + "/" + name, size: size, localIDs: []))
            } else if name.hasPrefix("open-"), name.hasSuffix(".jsonl"), let first = UInt64(name.dropFirst(5).dropLast(6)) {
                listing.open.append((first, name))
            }
        }
        listing.sealed.sort { $0.first < $1.first }
        listing.open.sort { $0.0 < $1.0 }
        return listing
    }

    private static func readState(_ directory: String) -> (next: UInt64, dropped: UInt64) {
        guard let data = FileManager.default.contents(atPath: directory + "/state.json"),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return (0, 0) }
        return ((object["next"] as? NSNumber)?.uint64Value ?? 0, (object["dropped"] as? NSNumber)?.uint64Value ?? 0)
    }

    /// The queue index the next event would get, read without changing anything.
    static func appendedCount(directory: String) throws -> UInt64 {
        guard FileManager.default.fileExists(atPath: directory) else { return 0 }
        let listing = try list(directory)
        var next = readState(directory).next
        for batch in listing.sealed { next = max(next, batch.first + UInt64(batch.count)) }
        for (first, name) in listing.open where !listing.sealed.contains(where: { $0.first == first }) {
            let bytes = FileManager.default.contents(atPath: directory + "/" + name) ?? Data()
            let count = bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            next = max(next, first + UInt64(count))
        }
        return next
    }
}
