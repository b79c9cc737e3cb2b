#if canImport(Glibc)
    import Glibc
#endif

/// The child side of the exit tests that feed fuzz findings to the API and run the mini
/// fuzzers in a process of their own (a trap there fails one test, not the whole run), and
/// the reading of what such a child wrote.
public enum ExitTestChild {
    /// The exit status of a child that finished its work; any other status, or a signal, is a
    /// failure. Not 0: the tests expect `.failure`, so that they always get the child's standard
    /// error back to show a trap's message.
    public static let finished: CInt = 42

    /// What a child found wrong, said as a sentence.
    public struct Failure: Error, CustomStringConvertible {
        /// The sentence.
        public var description: String
        /// A failure.
        public init(_ description: String) { self.description = description }
    }

    /// Runs `body` and ends the process: a thrown error is written to standard error and ends it
    /// with status 3, finishing ends it with ``finished`` (a trap ends it with a signal).
    /// - Parameter seconds: when not 0, SIGALRM ends a child still running after that long (a hang).
    public static func run(alarm seconds: UInt32 = 0, _ body: () throws -> Void) -> Never {
        if seconds > 0 { alarm(seconds) }
        // A write to a full pipe must not stop the child: the parent may read its standard
        // error only when it exits (a busy test run: its reading task waits for a thread), and a
        // child blocked on a 64 KiB pipe looked like a hang. Lines past that are dropped instead.
        let flags = fcntl(2, F_GETFL)
        if flags >= 0 { _ = fcntl(2, F_SETFL, flags | O_NONBLOCK) }
        do {
            try body()
        } catch {
            say("\(error)")
            exit(3)
        }
        exit(finished)
    }

    /// Names a mini fuzz's input on standard error before it runs, so that the last one named
    /// is the one that crashed: its number only (a few bytes, so that 2,000 of them stay well
    /// inside a pipe's buffer), and how it was made when NAVLOG_MINI_FUZZ_ONLY runs it alone.
    public static func note(input round: Int, _ how: @autoclosure () -> String) {
        if getenv("NAVLOG_MINI_FUZZ_ONLY") != nil {
            say("input \(round): \(how())")
        } else {
            say("input \(round)")
        }
    }

    /// Writes `text` and a newline to standard error at once, unbuffered: the last line a child
    /// wrote before a trap is kept.
    public static func say(_ text: String) {
        let line = text + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    /// The last readable lines of a child's standard error (the last input a mini fuzz named,
    /// a trap's message with its file and line), without stack frames, which have no symbols
    /// here, or binary bytes.
    public static func readableEnd(of standardError: [UInt8], lines count: Int = 6) -> [String] {
        let lines = String(decoding: standardError, as: UTF8.self).split(separator: "\n").filter { line in
            let words = line.split(separator: " ")
            return !(words.count > 2 && words[0].allSatisfy(\.isNumber) && words[2].hasPrefix("0x"))
                && line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0 != "\u{FFFD}" || $0 == "\t" }
        }
        if lines.isEmpty { return ["(nothing readable: a trap or crash without a message; the fuzz target shows the stack)"] }
        return lines.suffix(count).map(String.init)
    }
}
