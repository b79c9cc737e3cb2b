#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Commands that are programs of their own beside `navlog` (as `git foo` runs `git-foo`), so
/// that every other command starts without loading their libraries: the intake's HTTP server
/// and TLS, the HTTP client's FoundationNetworking (libcurl and some thirty more shared
/// libraries; `navlog replay --end` took 16 ms per process without them, 24 ms with them).
enum SiblingProgram {
    /// Command name → the program that runs it.
    static let programs = ["intake": "navlog-intake", "send": "navlog-send"]

    /// Replaces this process with the program of `command`, given `arguments`; returns only if
    /// that fails, after saying why.
    static func execute(_ command: String, _ arguments: [String]) -> Never {
        let name = programs[command]!
        let program = siblingPath(name)
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(program, argv)
        printError(
            "navlog \(command): cannot run \(program) (\(String(cString: strerror(errno)))); it is installed beside navlog (tools/install, or swift build --product \(name)).")
        exit(1)
    }

    /// The path of `name` in the directory of the running program.
    private static func siblingPath(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let own = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        guard let slash = own.lastIndex(of: "/") else { return name }
        return String(own[...slash]) + name
    }
}
