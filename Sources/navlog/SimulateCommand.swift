import ArgumentParser
import Foundation
import NavlogClient
import NavlogReplay
import NavlogSimulation
import NavlogStoryboard
import NavlogWorkload

/// `navlog simulate`: sessions of an app built from storyboards, to a file or to navlogd.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate realistic sessions of an app built from storyboards, into a file or into navlogd.",
        discussion: """
            Each session starts at the storyboards' initial view controller (containers built by \
            relationship and embed segues), then walks: segues the focused screen allows (with \
            their kinds, styles and anchors), back, dismiss, unwinds, tab switches, background and \
            foreground, size-class changes on a pad, with appearance callbacks and think times. \
            Every action is checked against the replay engine as it is made, so the sessions are \
            valid UIKit unless --misuse-rate asks for deliberate misuse (each recipe raises one \
            anomaly code on purpose). The same --seed gives the same events.

            Give every storyboard of the app (references between files are followed); the first \
            with an initial view controller starts the app.
            """
    )

    @Option(name: .customLong("storyboard"), help: ArgumentHelp("A .storyboard file of the app (repeat for several).", valueName: "file"))
    var storyboards: [String]

    @Option(help: ArgumentHelp("Start at the scene with this storyboard identifier instead of the initial view controller.", valueName: "id"))
    var start: String?

    @Option(help: "How many sessions.")
    var sessions: Int = 100

    @Option(help: "The seed; the same seed gives the same events.")
    var seed: UInt64 = 1

    @Option(help: "How many sessions are live at once (their events interleave).")
    var concurrency: Int = 16

    @Option(help: ArgumentHelp("Send at most this many events per second (default: as fast as possible).", valueName: "events-per-s"))
    var rate: Double?

    @Option(help: "The device idiom: phone (compact width) or pad (regular width, size-class changes).")
    var idiom: String = "phone"

    @Option(name: .customLong("misuse-rate"), help: ArgumentHelp("The chance, per user action, of a deliberate UIKit misuse (0 to 1).", valueName: "p"))
    var misuseRate: Double = 0

    @Option(name: .customLong("actions"), help: "The mean number of user actions per session.")
    var meanActions: Int = 24

    @Option(help: ArgumentHelp("Send to navlogd at this socket.", valueName: "socket"))
    var to: String?

    @Option(help: ArgumentHelp("Write JSON Lines to this file (- for standard output).", valueName: "file"))
    var out: String?

    @Option(help: ArgumentHelp("Connections to navlogd (sessions are spread over them).", valueName: "n"))
    var connections: Int = 4

    @Option(
        help: ArgumentHelp(
            "With --to: simulate this many sessions, then send --sessions copies of them under new ids at full speed (load generation).",
            valueName: "k"))
    var templates: Int?

    @Option(name: .customLong("injected"), help: ArgumentHelp("Write the misuse injected (session, seq, code) as JSON Lines to this file.", valueName: "file"))
    var injectedFile: String?

    func validate() throws {
        if storyboards.isEmpty { throw ValidationError("Give at least one --storyboard FILE.") }
        if (to == nil) == (out == nil) { throw ValidationError("Give exactly one of --to SOCKET (send to navlogd) and --out FILE (write JSON Lines).") }
        if !["phone", "pad"].contains(idiom) { throw ValidationError("--idiom is phone or pad, not \(idiom).") }
        if !(0...1).contains(misuseRate) { throw ValidationError("--misuse-rate is a probability between 0 and 1.") }
        if sessions < 1 || concurrency < 1 || connections < 1 || meanActions < 1 {
            throw ValidationError("--sessions, --concurrency, --connections and --actions must be at least 1.")
        }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive.") }
        if let templates {
            if to == nil { throw ValidationError("--templates is for load generation: give --to SOCKET.") }
            if templates < 1 || templates > sessions { throw ValidationError("--templates must be between 1 and --sessions.") }
            if rate != nil { throw ValidationError("--templates sends at full speed; leave out --rate.") }
            if misuseRate > 0 { throw ValidationError("--templates copies valid sessions; leave out --misuse-rate.") }
        }
    }

    func run() async throws {
        let app = try reportingFailure("simulate") { try StoryboardApp(storyboards.map(Storyboard.load(path:)), startingAt: start) }
        if app.startIsGuessed {
            printError("navlog simulate: no storyboard has an initial view controller; starting at the first scene no segue leads to (use --start ID to choose).")
        }
        var simulator = StoryboardSimulator(
            app: app,
            configuration: SimulationConfiguration(
                sessions: templates ?? sessions, seed: seed, concurrency: concurrency, idiom: idiom, misuseRate: misuseRate, meanActions: meanActions),
            makeGenerator: SplitMix64.init(seed:))
        if let templates, let to {
            let load = try SimulatedLoad(&simulator)
            let events = load.events(sessions: sessions)
            let started = ContinuousClock.now
            try load.send(sessions: sessions, seed: seed, to: to, connections: connections)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            printError(
                "navlog simulate: \(sessions) sessions (copies of \(templates) simulated ones), \(events) events written to \(to) over \(connections) connections in \(String(format: "%.2f", seconds)) s (\(Int(Double(events) / max(seconds, 1e-6))) events/s); navlog stats --socket \(to) shows what navlogd accepted"
            )
            return
        }
        let started = ContinuousClock.now
        if let out {
            try write(&simulator, to: out)
        } else if let to {
            try await send(&simulator, to: to)
        }
        let seconds = Double((ContinuousClock.now - started).components.attoseconds) / 1e18 + Double((ContinuousClock.now - started).components.seconds)
        if let injectedFile {
            var text = ""
            for misuse in simulator.injected {
                text += #"{"session":"\#(misuse.session)","seq":\#(misuse.sequence),"code":"\#(misuse.code.code)"}"# + "\n"
            }
            try text.write(toFile: injectedFile, atomically: true, encoding: .utf8)
        }
        printError(
            "navlog simulate: \(simulator.sessionsStarted) sessions, \(simulator.eventsGenerated) events in \(String(format: "%.1f", seconds)) s (\(Int(Double(simulator.eventsGenerated) / max(seconds, 1e-6))) events/s)"
                + (misuseRate > 0 ? ", \(simulator.injected.count) misuses injected" : ""))
    }

    private func write(_ simulator: inout StoryboardSimulator, to path: String) throws {
        let handle: FileHandle
        if path == "-" {
            handle = FileHandle.standardOutput
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil), let opened = FileHandle(forWritingAtPath: path) else {
                printError("navlog simulate: cannot create \(path). Check the directory exists and is writable.")
                throw ExitCode.failure
            }
            handle = opened
        }
        var lines: [[UInt8]] = []
        var buffer: [UInt8] = []
        let pacer = Pacer(rate: rate)
        while simulator.step(into: &lines) {
            for line in lines { buffer.append(contentsOf: line) }
            pacer.wait(for: lines.count)
            lines.removeAll(keepingCapacity: true)
            if buffer.count > 1 << 20 || rate != nil {
                handle.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer))
        if path != "-" { try handle.close() }
    }

    private func send(_ simulator: inout StoryboardSimulator, to socket: String) async throws {
        var clients: [NavlogClient] = []
        for number in 0..<connections {
            var configuration = NavlogClient.Configuration(socketPath: socket)
            configuration.acknowledgement = .batch
            configuration.whenFull = .wait
            configuration.clientName = "navlog simulate #\(number + 1)"
            clients.append(
                NavlogClient(configuration: configuration) { rejection in
                    printError("navlog simulate: navlogd rejected an event: \(rejection.reason)")
                })
        }
        var lines: [[UInt8]] = []
        var connectionOfSession: [String: Int] = [:]
        let pacer = Pacer(rate: rate)
        while simulator.step(into: &lines) {
            for line in lines {
                // A session stays on one connection, so its events arrive in order.
                let session = Self.session(of: line)
                let number =
                    connectionOfSession[session]
                    ?? {
                        let chosen = connectionOfSession.count % connections
                        connectionOfSession[session] = chosen
                        return chosen
                    }()
                _ = clients[number].send(bytes: Array(line.dropLast()))
            }
            pacer.wait(for: lines.count)
            lines.removeAll(keepingCapacity: true)
        }
        var rejected = 0
        for client in clients {
            do {
                try await client.flush(timeout: 120)
            } catch {
                printError("navlog simulate: \(error)")
                throw ExitCode.failure
            }
            rejected += Int(client.statistics.rejected)
            await client.close(timeout: 1)
        }
        if rejected > 0 {
            printError("navlog simulate: navlogd rejected \(rejected) events (a bug in the simulator: please report it).")
            throw ExitCode.failure
        }
    }

    /// The session id of a line the simulator wrote.
    static func session(of line: [UInt8]) -> String {
        SimulatedLoad.cut(line).map { String(decoding: line[$0.sessionRange], as: UTF8.self) } ?? ""
    }
}

/// Holds a producer to a rate (events per second), if one is set.
final class Pacer {
    private let rate: Double?
    private let start = ContinuousClock.now
    private var sent = 0

    init(rate: Double?) { self.rate = rate }

    func wait(for count: Int) {
        guard let rate else { return }
        sent += count
        let due = Double(sent) / rate
        let elapsed = ContinuousClock.now - start
        let ahead = due - (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        if ahead > 0.001 { usleep(UInt32(min(ahead, 1) * 1_000_000)) }
    }
}
