import NavlogStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// File-system helpers for the replay index directory.
public enum ReplayFiles {
    /// Writes `bytes` to `directory/name` through a temporary file and a rename, so readers see
    /// the old file or the new one, never a part. No fsync: the files are derived data, rebuilt
    /// from the log when lost.
    static func writeAtomically(_ bytes: [UInt8], directory: String, name: String) -> Bool {
        // A name of this write's own (two builds of one process may write the same file).
        let temporary = DurableFile.temporaryPath(for: directory + "/." + name)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        var written = 0
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            while written < raw.count {
                let result = write(descriptor, raw.baseAddress! + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += result
            }
            return true
        }
        close(descriptor)
        guard ok, rename(temporary, directory + "/" + name) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Creates `path` (and its parents) when missing; false when it cannot be created or written.
    /// A relative path is taken from the working directory (never from the root).
    static func makeWritableDirectory(_ path: String) -> Bool {
        let path = absolute(path)
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if access(current, F_OK) != 0 { _ = mkdir(current, 0o755) }
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return false }
        return access(path, W_OK) == 0
    }

    /// The names in `directory` (empty when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func remove(_ path: String) { unlink(path) }

    /// The name of the file whose lock a refresh holds (``ReplayIndex/refresh(progress:)``).
    static let refreshLockName = ".refresh.lock"

    /// Waits for, then holds, the exclusive lock (`flock`) on `directory`'s refresh lock file;
    /// returns the descriptor that holds it (closing it lets go), or nil when the file cannot
    /// be opened or the lock is still held after `patience` (a stopped or hung refresher must
    /// not stop every reader: the refresh then goes on without the lock, as two did before
    /// it existed, each writing whole files). The lock goes with the process that holds it,
    /// so a build that crashes never blocks the next.
    static func lockForRefresh(_ directory: String, patience: Duration = .seconds(120)) -> Int32? {
        let descriptor = open(directory + "/" + refreshLockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, clock.now < deadline else {
                close(descriptor)
                return nil
            }
            usleep(5_000)
        }
        return descriptor
    }

    /// The absolute form of `path`, relative paths taken from the working directory.
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = buffer.withUnsafeBufferPointer { String(decoding: UnsafeRawBufferPointer($0).prefix(while: { $0 != 0 }), as: UTF8.self) }
        return cwd + "/" + path
    }
}
