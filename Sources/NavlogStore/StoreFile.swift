import NavlogEvents
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One open file of the data directory, with the few operations the store needs, each turning
/// failures into ``StoreError`` that names the file.
struct StoreFile: ~Copyable, Sendable {
    let descriptor: FileDescriptor
    let path: String

    /// Opens `path` for reading, or for reading and writing (created if missing).
    init(path: String, writable: Bool) throws(StoreError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path),
                writable ? .readWrite : .readOnly,
                options: writable ? [.create, .closeOnExec] : [.closeOnExec],
                permissions: writable ? [.ownerReadWrite, .groupRead] : nil
            )
        } catch {
            throw StoreError.system(error, "open", path)
        }
    }

    deinit { try? descriptor.close() }

    /// The file's size in bytes.
    func size() throws(StoreError) -> Int {
        do { return Int(try descriptor.seek(offset: 0, from: .end)) } catch { throw StoreError.system(error, "find the size of", path) }
    }

    /// Reads exactly `count` bytes at `offset`, or fewer at the end of the file.
    func read(at offset: Int, count: Int, into buffer: inout [UInt8]) throws(StoreError) {
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
    /// Writes `bytes` to `path` through `path.tmp` (written, fsynced), renamed over `path`, then
    /// fsyncs the directory.
    public static func replace(_ path: String, with bytes: [UInt8]) throws(StoreError) {
        let temporary = path + ".tmp"
        do {
            let file = try StoreFile(path: temporary, writable: true)
            try file.truncate(to: 0)
            try bytes.withBytes { (raw) throws(StoreError) in try file.write(raw, at: 0) }
            try file.sync()
        }
        if Glibc.rename(temporary, path) != 0 { throw StoreError.errno(errno, "rename", temporary) }
        try syncDirectory(containing: path)
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
