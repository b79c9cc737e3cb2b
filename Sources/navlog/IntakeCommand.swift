import ArgumentParser

/// `navlog intake`: the `navlog-intake` program runs it (see ``SiblingProgram``);
/// ``NavlogCommand/main()`` hands the arguments over before parsing, and this type gives the
/// command its place in `navlog --help`.
struct IntakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intake",
        abstract: "Take events from apps over HTTPS and store them through navlogd, answering once they are durable.",
        discussion: "The navlog-intake program beside navlog does this; `navlog intake --help` shows its options."
    )

    @Argument(parsing: .captureForPassthrough, help: "The intake's options (navlog intake --help).")
    var arguments: [String] = []

    func run() throws {
        SiblingProgram.execute("intake", arguments)
    }
}
