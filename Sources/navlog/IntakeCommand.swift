import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `navlog intake`: runs the `navlog-intake` program installed beside `navlog` with the same
/// arguments (as `git foo` runs `git-foo`), so that every other command starts without loading
/// the intake's HTTP and TLS libraries. ``NavlogCommand/main()`` hands the arguments over before
/// parsing; this type gives the command its place in `navlog --help`.
struct IntakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intake",
        abstract: "Take events from apps over HTTPS and store them through navlogd, answering once they are durable.",
        discussion: "The navlog-intake program beside navlog does this; `navlog intake --help` shows its options."
    )

    @Argument(parsing: .captureForPassthrough, help: "The intake's options (navlog intake --help).")
    var arguments: [String] = []

    func run() throws {
        Self.execute(arguments)
    }

    /// Replaces this process with `navlog-intake ARGUMENTS`; returns only if that fails, after
    /// saying why.
    static func execute(_ arguments: [String]) -> Never {
        let program = siblingPath("navlog-intake")
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(program, argv)
        printError(
            "navlog intake: cannot run \(program) (\(String(cString: strerror(errno)))); it is installed beside navlog (tools/install, or swift build --product navlog-intake).")
        Glibc.exit(1)
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
