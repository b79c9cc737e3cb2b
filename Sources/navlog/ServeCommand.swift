import ArgumentParser
import NavlogReplayStore
import NavlogServe
import NavlogStore

/// `navlog serve`: the web viewer.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Show the sessions in a web browser: a timeline to scrub, the hierarchy at each instant, live updates, analytics.",
        discussion: """
            Open the address it prints. Pages: the sessions (filter, sort, page through them); a \
            session's timeline with a slider (← → step one event, shift+← → one screen change) and \
            its view-controller hierarchy drawn at the selected instant, updated live while navlogd \
            records it; /sessions/ID?seq=N opens that instant; analytics (screens, dwell, \
            transitions, funnels, anomalies over time, the numbers of navlog query); with \
            --storyboard, the storyboards' scenes and segues coloured by what sessions covered.

            Read only, and on 127.0.0.1 by default. Another address needs --token SECRET: scripts \
            send 'Authorization: Bearer SECRET', and the one-time link printed at start logs a \
            browser in. The JSON endpoints behind the pages are in schemas/viewer-api.schema.json.
            """
    )

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var indexOptions: ReplayIndexOptions

    @Option(help: ArgumentHelp("Address and port to listen on: HOST:PORT, [::1]:PORT, or a port (port 0 picks a free one).", valueName: "address"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("A secret that every request must carry; required when listening beyond loopback.", valueName: "secret"))
    var token: String?

    @Option(name: .customLong("storyboard"), help: ArgumentHelp("A .storyboard file of the app, for the storyboard page (repeat for several).", valueName: "file"))
    var storyboards: [String] = []

    func validate() throws {
        guard let address = ViewerConfiguration.parseListen(listen) else {
            throw ValidationError("--listen takes HOST:PORT such as 127.0.0.1:8080, [::1]:8080 or a port; '\(listen)' is neither.")
        }
        if !ViewerConfiguration.isLoopback(address.host) && token == nil {
            throw ValidationError(
                "Listening on \(address.host) lets other machines read every session: give --token SECRET too (clients send 'Authorization: Bearer SECRET'), or listen on 127.0.0.1."
            )
        }
        if let token, token.count < 16 {
            throw ValidationError("--token should be at least 16 characters (for example: openssl rand -hex 16).")
        }
    }

    func run() async throws {
        let address = ViewerConfiguration.parseListen(listen)!
        let server = try reportingFailure("serve") {
            try ViewerServer(
                configuration: ViewerConfiguration(
                    dataDirectory: data.dataDirectory, indexDirectory: indexOptions.indexDirectory, host: address.host, port: address.port, token: token,
                    storyboards: storyboards.map(ReplayFiles.absolute)))
        }
        do {
            try await server.run { url, loginPath in
                if let loginPath {
                    printError("navlog serve: listening on \(url)/ (token required). Log a browser in once with: \(url)\(loginPath)")
                } else {
                    printError("navlog serve: listening on \(url)/")
                }
            }
        } catch {
            printError("navlog serve: cannot serve on \(listen): \(error). Is another program using that port? Try --listen 127.0.0.1:0 for a free one.")
            throw ExitCode.failure
        }
    }
}
