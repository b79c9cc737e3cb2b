import NavlogEvents

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files of a data directory.
struct LogDirectory {
    /// A segment file.
    struct Segment {
        var base: UInt64
        var name: String
        var path: String
    }

    let path: String

    func file(_ name: String) -> String { path + "/" + name }

    /// Every entry name in the directory.
    func names() throws(StoreError) -> [String] {
        guard let dir = opendir(path) else { throw StoreError.errno(errno, "list", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The segments, in LSN order.
    func segments() throws(StoreError) -> [Segment] {
        try names().compactMap { name in
            SegmentName.baseLSN(ofSegment: name).map { Segment(base: $0, name: name, path: file(name)) }
        }.sorted { $0.base < $1.base }
    }

    /// Creates the directory (and its parents) if missing.
    static func create(_ path: String) throws(StoreError) {
        var isDirectory = stat()
        if stat(path, &isDirectory) == 0 {
            guard isDirectory.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(code: .badDirectory, message: "\(path) exists but is not a directory. Pass --data-dir a directory.", path: path)
            }
            return
        }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty && parent != path { try create(parent) }
        if mkdir(path, 0o750) != 0 && errno != EEXIST { throw StoreError.errno(errno, "create the directory", path) }
    }

    /// The size of the file at `path` (a `stat`, nothing opened), or nil when it cannot be had.
    static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Whether `path` is an existing directory.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    func remove(_ name: String) throws(StoreError) {
        if unlink(file(name)) != 0 && errno != ENOENT { throw StoreError.errno(errno, "delete", file(name)) }
    }

    func rename(_ name: String, to newName: String) throws(StoreError) {
        if Glibc.rename(file(name), file(newName)) != 0 { throw StoreError.errno(errno, "rename", file(name)) }
    }

    /// Writes `bytes` to `name` atomically (temporary file, fsync, rename, fsync the directory).
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StoreError) {
        try DurableFile.replace(file(name), with: bytes)
    }
}
