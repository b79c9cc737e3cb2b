import ArgumentParser

/// `navlog send`: the `navlog-send` program runs it (see ``SiblingProgram``), because its HTTP
/// transport loads FoundationNetworking; this type gives the command its place in
/// `navlog --help`.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send JSON Lines event files to navlogd, over its socket or over HTTP(S) through navlog intake.",
        discussion: "The navlog-send program beside navlog does this; `navlog send --help` shows its options."
    )

    @Argument(parsing: .captureForPassthrough, help: "The files and options (navlog send --help).")
    var arguments: [String] = []

    func run() throws {
        SiblingProgram.execute("send", arguments)
    }
}
