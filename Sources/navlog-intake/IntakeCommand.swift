import ArgumentParser
import Glibc
import Logging
import NavlogIntake

/// `navlog intake` (this program, `navlog-intake`, which `navlog intake` runs): the HTTP(S) road
/// from devices into navlogd. A program of its own so that navlog's other commands do not load
/// the intake's TLS and HTTP server libraries: a `navlog replay` process started 5-8 ms slower
/// with them linked in (tools/bench/compare, docs/BENCHMARKS.md).
@main
struct IntakeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "navlog intake",
        abstract: "Take events from apps over HTTPS and store them through navlogd, answering once they are durable.",
        discussion: """
            Devices POST JSON Lines events (the same lines as navlogd's socket, each with its \
            session and seq) to /v1/events with 'Authorization: Bearer SECRET' and \
            'Content-Encoding: gzip', 'zstd' or none. The answer comes after navlogd's durable \
            ack: 200 {"stored":N,"duplicates":N,"rejected":[{"line":N,"code":…,"field":…,"reason":…}]} \
            (a resent batch comes back as duplicates, so a client may resend until it gets a \
            200, then delete its copy). 400 (the body does not decode), 401 (no or unknown key), \
            413 (over a size limit, a line over --max-line-bytes, or a decompression bomb), 415 \
            (an unknown Content-Encoding), 429 and 503 (with Retry-After) store nothing of the body \
            (a 503 after navlogd failed mid-body says how much it had stored). GET /healthz \
            answers 200 while navlogd takes connections.

            navlogd stores each event with the id of the key that sent it (the trusted field _key \
            in navlog cat), and takes that id only from the uids or gids in its relayUIDs or \
            relayGIDs setting: add the intake's to them. The key file is JSON: \
            {"keys":[{"id":"ios-prod","secret":"…","eventsPerSecond":5000,"burst":20000,"apps":["Cookbook"]}]} \
            (eventsPerSecond, burst and apps are optional); it must not be open to other users \
            (chmod 0600 or 0640), and SIGHUP reloads it without dropping connections.

            TLS: --tls-cert and --tls-key (PEM), or a proxy in front (nginx; see \
            docs/INTAKE-DEPLOY.md) with --trusted-proxy so the per-address limit sees the \
            client's address from X-Forwarded-For.
            """
    )

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket = "/run/navlog/navlog.sock"

    @Option(help: ArgumentHelp("Address and port to listen on: HOST:PORT, [::1]:PORT, or a port (port 0 picks a free one).", valueName: "address"))
    var listen = "127.0.0.1:8443"

    @Option(help: ArgumentHelp("The key file (JSON; see above).", valueName: "file"))
    var keys: String

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain: serve HTTPS.", valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp("A proxy's address whose X-Forwarded-For names the client (repeat for several).", valueName: "address"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("max-body-bytes"), help: ArgumentHelp("The largest body as sent.", valueName: "bytes"))
    var maximumBodyBytes = 8 << 20

    @Option(name: .customLong("max-decoded-bytes"), help: ArgumentHelp("The largest body once decoded.", valueName: "bytes"))
    var maximumDecodedBytes = 32 << 20

    @Option(name: .customLong("max-line-bytes"), help: ArgumentHelp("The longest line (keep it navlogd's maximumLineBytes).", valueName: "bytes"))
    var maximumLineBytes = 64 << 10

    @Option(name: .customLong("key-rate"), help: ArgumentHelp("Events per second per key, unless its entry says otherwise (0: no limit).", valueName: "events"))
    var keyRate: Double = 50_000

    @Option(name: .customLong("key-burst"), help: ArgumentHelp("Burst per key, in events.", valueName: "events"))
    var keyBurst: Double = 100_000

    @Option(name: .customLong("address-rate"), help: ArgumentHelp("Events per second per client address (0: no limit).", valueName: "events"))
    var addressRate: Double = 2_000

    @Option(name: .customLong("address-burst"), help: ArgumentHelp("Burst per client address, in events.", valueName: "events"))
    var addressBurst: Double = 20_000

    @Option(name: .customLong("relay-connections"), help: ArgumentHelp("Connections to navlogd (each carries one request at a time).", valueName: "n"))
    var relayConnections = 32

    @Option(name: .customLong("head-timeout"), help: ArgumentHelp("Seconds a request's head may take to arrive.", valueName: "seconds"))
    var headTimeout: Double = 10

    @Option(name: .customLong("body-timeout"), help: ArgumentHelp("Seconds a request's body may take to arrive.", valueName: "seconds"))
    var bodyTimeout: Double = 60

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Seconds a keep-alive connection may idle between requests.", valueName: "seconds"))
    var idleTimeout: Double = 75

    @Option(
        name: .customLong("metrics-listen"),
        help: ArgumentHelp("Serve Prometheus metrics at http://ADDRESS/metrics (loopback only, e.g. 127.0.0.1:9478).", valueName: "address"))
    var metricsListen: String?

    func validate() throws {
        guard ListenAddress(listen) != nil else {
            throw ValidationError("--listen takes HOST:PORT such as 127.0.0.1:8443, [::1]:8443 or a port; '\(listen)' is neither.")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give both (PEM files), or neither for plain HTTP behind a TLS proxy.")
        }
        for (name, value) in [("--max-body-bytes", maximumBodyBytes), ("--max-decoded-bytes", maximumDecodedBytes), ("--max-line-bytes", maximumLineBytes)] where value < 1 {
            throw ValidationError("\(name) must be at least 1.")
        }
        if let metricsListen {
            guard let metrics = ListenAddress(metricsListen), metrics.isLoopback else {
                throw ValidationError("--metrics-listen takes a loopback HOST:PORT such as 127.0.0.1:9478; put a proxy in front to export metrics further.")
            }
        }
        if relayConnections < 1 { throw ValidationError("--relay-connections must be at least 1.") }
    }

    func run() async throws {
        let address = ListenAddress(listen)!
        var configuration = IntakeConfiguration(socketPath: socket, host: address.host, port: address.port, keysPath: keys)
        configuration.tlsCertificatePath = tlsCertificate
        configuration.tlsKeyPath = tlsKey
        configuration.trustedProxies = trustedProxies
        configuration.maximumBodyBytes = maximumBodyBytes
        configuration.maximumDecodedBytes = maximumDecodedBytes
        configuration.maximumLineBytes = maximumLineBytes
        configuration.keyEventsPerSecond = keyRate
        configuration.keyBurst = keyBurst
        configuration.addressEventsPerSecond = addressRate
        configuration.addressBurst = addressBurst
        configuration.relayConnections = relayConnections
        configuration.headTimeoutSeconds = headTimeout
        configuration.bodyTimeoutSeconds = bodyTimeout
        configuration.idleTimeoutSeconds = idleTimeout
        if let metricsListen, let metrics = ListenAddress(metricsListen) {
            configuration.metricsHost = metrics.host
            configuration.metricsPort = metrics.port
        }
        var logger = Logger(label: "navlog.intake")
        logger.logLevel = .notice
        let server: IntakeServer
        do {
            server = try IntakeServer(configuration: configuration, logger: logger)
        } catch {
            printError("navlog intake: \(error)")
            throw ExitCode.failure
        }
        do {
            try await server.run { url in
                // write(2) at once: scripts and systemd wait for this line.
                let line = Array("navlog intake: listening on \(url)\n".utf8)
                _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            }
        } catch {
            printError("navlog intake: cannot serve on \(listen): \(error). Is another program using that port? Try --listen 127.0.0.1:0 for a free one.")
            throw ExitCode.failure
        }
    }
}

/// Prints a line to standard error, unbuffered.
func printError(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
