import NavlogEvents
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open file of the data directory, with the few operations the store needs, each turning
/// failures into ``StoreError`` that names the file. The replay index beside the log reads its
/// files through it too (package access).
package struct StoreFile: ~Copyable, Sendable {
    let descriptor: FileDescriptor
    package let path: String

    /// Opens `path` for reading, or for reading and writing (created if missing).
    package init(path: String, writable: Bool) throws(StoreError) {
        let opened: FileDescriptor
        do {
            opened = try FileDescriptor.open(
                FilePath(path),
                writable ? .readWrite : .readOnly,
                options: writable ? [.create, .closeOnExec] : [.closeOnExec],
                permissions: writable ? [.ownerReadWrite, .groupRead] : nil
            )
        } catch {
            throw StoreError.system(error, "open", path)
        }
        // A directory (or a device) opens read-only too, and its "size" can be 2^63: every file
        // of a data directory is a regular file, anything else is refused before it is read.
        var status = stat()
        guard fstat(opened.rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            try? opened.close()
            throw StoreError(code: .io, message: "\(path) is not a regular file; move it out of the data directory.", path: path)
        }
        self.path = path
        descriptor = opened
    }

    deinit { try? descriptor.close() }

    /// The file's size in bytes.
    package func size() throws(StoreError) -> Int {
        do { return Int(try descriptor.seek(offset: 0, from: .end)) } catch { throw StoreError.system(error, "find the size of", path) }
    }

    /// `count` bytes at `offset`, or fewer at the end of the file.
    package func read(at offset: Int, count: Int) throws(StoreError) -> [UInt8] {
        var bytes: [UInt8] = []
        try read(at: offset, count: count, into: &bytes)
        return bytes
    }

    /// Reads exactly `count` bytes at `offset`, or fewer at the end of the file.
    package func read(at offset: Int, count: Int, into buffer: inout [UInt8]) throws(StoreError) {
        buffer.removeAll(keepingCapacity: true)
        guard count > 0 else { return }
        buffer.append(contentsOf: repeatElement(0, count: count))
        var done = 0
        do {
            try buffer.withUnsafeMutableBytes { raw in
                while done < count {
                    let n = try descriptor.read(fromAbsoluteOffset: Int64(offset + done), into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]))
                    if n == 0 { break }
                    done += n
                }
            }
        } catch {
            throw StoreError.system(error, "read", path, offset: offset)
        }
        buffer.removeLast(count - done)
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(StoreError) {
        do { _ = try descriptor.writeAll(toAbsoluteOffset: Int64(offset), bytes) } catch { throw StoreError.system(error, "write to", path, offset: offset) }
    }

    /// Cuts the file to `size` bytes.
    func truncate(to size: Int) throws(StoreError) {
        do { try descriptor.resize(to: Int64(size)) } catch { throw StoreError.system(error, "truncate", path, offset: size) }
    }

    /// A second descriptor for the same open file (for an fsync on another thread).
    func duplicateDescriptor() throws(StoreError) -> Int32 {
        let copy = dup(descriptor.rawValue)
        guard copy >= 0 else { throw StoreError.errno(Glibc.errno, "duplicate the descriptor of", path) }
        return copy
    }

    /// Makes everything written so far durable.
    func sync() throws(StoreError) {
        if fsync(descriptor.rawValue) != 0 { throw StoreError.errno(Glibc.errno, "fsync", path) }
    }

    /// Whether another open file holds an exclusive lock on this file (a writer is active).
    /// Probes with a shared lock it releases at once; any error counts as "not held".
    func isLockedExclusively() -> Bool {
        if flock(descriptor.rawValue, LOCK_SH | LOCK_NB) == 0 {
            _ = flock(descriptor.rawValue, LOCK_UN)
            return false
        }
        return Glibc.errno == EWOULDBLOCK
    }

    /// Takes an exclusive advisory lock without waiting; `false` when another process holds it.
    func tryLock() throws(StoreError) -> Bool {
        if flock(descriptor.rawValue, LOCK_EX | LOCK_NB) == 0 { return true }
        let code = Glibc.errno
        if code == EWOULDBLOCK { return false }
        throw StoreError.errno(code, "lock", path)
    }
}

/// Files replaced so that a crash leaves the old content or the new, never a part.
public enum DurableFile {
    /// Writes `bytes` to `path` through a temporary file of its own (``temporaryPath(for:)``,
    /// written, fsynced), renamed over `path`, then fsyncs the directory.
    public static func replace(_ path: String, with bytes: [UInt8]) throws(StoreError) {
        let temporary = temporaryPath(for: path)
        do {
            let file = try StoreFile(path: temporary, writable: true)
            try file.truncate(to: 0)
            try bytes.withBytes { (raw) throws(StoreError) in try file.write(raw, at: 0) }
            try file.sync()
        } catch {
            unlink(temporary)
            throw error
        }
        if Glibc.rename(temporary, path) != 0 {
            let failure = StoreError.errno(errno, "rename", temporary)
            unlink(temporary)
            throw failure
        }
        try syncDirectory(containing: path)
    }

    /// A temporary path for a new version of `path`, of this call's own (`<path>.tmp.<pid>.<n>`):
    /// a reader rebuilding a segment index writes the same file as the writer sealing the
    /// segment, and with one shared name one would rename the other's half-written (or already
    /// renamed) file. ``removeAbandonedTemporaries(inDirectory:)`` removes those a crash left.
    public static func temporaryPath(for path: String) -> String {
        path + ".tmp.\(getpid()).\(temporaryNumber.add(1, ordering: .relaxed).newValue)"
    }

    /// Numbers this process's temporary files.
    private static let temporaryNumber = Atomic<UInt64>(0)

    /// The process that wrote `name`, when it is a temporary file (``temporaryPath(for:)``).
    static func temporaryWriter(_ name: String) -> pid_t? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[parts.count - 3] == "tmp",
            parts.suffix(2).allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } })
        else { return nil }
        return pid_t(parts[parts.count - 2])
    }

    /// Removes the temporary files of `directory` whose writer is gone (it crashed between
    /// writing one and renaming it); a live reader's file is left to it.
    public static func removeAbandonedTemporaries(inDirectory path: String) {
        let directory = LogDirectory(path: path)
        for name in (try? directory.names()) ?? [] {
            guard let writer = temporaryWriter(name), writer != getpid(), kill(writer, 0) != 0, errno == ESRCH else { continue }
            try? directory.remove(name)
        }
    }

    /// Makes the entries of the directory holding `path` (a rename into it, say) durable.
    public static func syncDirectory(containing path: String) throws(StoreError) {
        let slash = path.lastIndex(of: "/")
        try NavlogStore.syncDirectory(slash.map { String(path[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? ".")
    }
}

/// Makes a directory's entries (new, renamed or removed files) durable.
func syncDirectory(_ path: String) throws(StoreError) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw StoreError.errno(errno, "open the directory", path) }
    defer { close(fd) }
    if fsync(fd) != 0 { throw StoreError.errno(errno, "fsync the directory", path) }
}

extension StoreError {
    static func system(_ error: any Error, _ doing: String, _ path: String, offset: Int? = nil) -> StoreError {
        if let errno = error as? Errno { return .errno(errno.rawValue, doing, path, offset: offset) }
        return StoreError(code: .io, message: "Could not \(doing) \(path): \(error).", path: path, offset: offset)
    }

    static func errno(_ code: Int32, _ doing: String, _ path: String, offset: Int? = nil) -> StoreError {
        let text = String(cString: strerror(code))
        if code == ENOSPC || code == EFBIG || code == EDQUOT {
            return StoreError(
                code: .noSpace, message: "Could not \(doing) \(path): \(text). Free disk space (or lower retention limits) and try again; nothing already stored was lost.",
                path: path, offset: offset, errno: code)
        }
        return StoreError(code: .io, message: "Could not \(doing) \(path): \(text).", path: path, offset: offset, errno: code)
    }
}
