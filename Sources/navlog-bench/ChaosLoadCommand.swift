import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `navlog-bench chaos-load`: issue 7's "Load" item. Opens many connections to a navlogd at
/// once and makes most of them misbehave (idle, trickling, never reading, bad input, churning)
/// while a few well-behaved clients stream durable events and time their acknowledgements. It
/// passes when every well-behaved client kept being served: every event acknowledged, no ack
/// wait longer than `--max-wait`, and (with `--data-dir`) every one of their events in the log
/// exactly once, in order, the log verified and the bad input counted by navlogd.
///
/// The misbehaving connections are driven by one poll() loop on the main thread
/// (``ChaosLoop``), the good clients by another on their own thread (``GoodClients``), so a
/// busy chaos loop never delays a good client's reads (it would show up as ack latency that is
/// not navlogd's).
///
/// Prints one JSON line (``ChaosReport``). Exits 0 when every good client was served and the
/// log checks passed; 1 when a good client stalled or lost an ack or the log is wrong; 2 when
/// navlogd is unreachable or too few file descriptors are allowed; 64 for a bad command line.
struct ChaosLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos-load",
        abstract: "Misbehaving connections against a navlogd while good clients are timed (tools/chaos load).",
        discussion: """
            Most connections misbehave (idle, trickling, never reading, bad input, churning); a \
            few good clients stream durable events. Prints one JSON line. Exits 0 when every good \
            client was served (every event acknowledged, no ack wait over --max-wait) and, with \
            --data-dir, their events are in the log exactly once and in order; 1 when not; 2 when \
            navlogd cannot be reached or too few file descriptors are allowed.
            """
    )

    /// The defaults of every setting (its seed is not used: a run's own is fresh).
    private static let defaults = ChaosLoadOptions()

    @Option(help: ArgumentHelp("navlogd's socket.", valueName: "path"))
    var socket: String

    @Option(help: ArgumentHelp("Misbehaving connections opened at once.", valueName: "n"))
    var connections = defaults.connections

    @Option(help: ArgumentHelp("How long the chaos lasts, at least 0.1 s; good clients then wait for their last acks.", valueName: "s"))
    var seconds = defaults.seconds

    @Option(help: ArgumentHelp("Well-behaved durable clients.", valueName: "k"))
    var good = defaults.good

    @Option(help: ArgumentHelp("Events per second each good client sends (0: as fast as its window allows).", valueName: "events/s"))
    var goodRate = defaults.goodRate

    @Option(help: ArgumentHelp("Events per second each stream or silentStream connection sends (0: as fast as navlogd takes them).", valueName: "events/s"))
    var streamRate = defaults.streamRate

    @Option(help: ArgumentHelp("Unacknowledged lines a good client may have in flight.", valueName: "lines"))
    var goodWindow = defaults.goodWindow

    @Option(name: .customLong("max-wait"), help: ArgumentHelp("The longest a good client may wait for an ack (at least 0.01 s).", valueName: "s"))
    var maximumWait = defaults.maximumWait

    @Option(help: ArgumentHelp("Seeds every choice and session (default: a fresh one; navlogd drops a resent (session, seq)).", valueName: "n"))
    var seed: UInt64?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("navlogd's data directory: check the log after the run.", valueName: "dir"))
    var dataDirectory: String?

    @Option(help: ArgumentHelp("The navlog executable for the log checks (default: beside this program).", valueName: "path"))
    var navlog: String?

    @Option(
        name: .customLong("good-events"),
        help: ArgumentHelp("Write the good clients' sessions and the seqs sent in each here, as JSON Lines.", valueName: "file"))
    var goodEventsFile: String?

    @Option(
        help: ArgumentHelp(
            "Shares of the behaviours, BEHAVIOUR=WEIGHT,… (unnamed ones keep their default); behaviours: \(ChaosBehaviour.allCases.map(\.rawValue).joined(separator: " ")).",
            valueName: "mix"))
    var mix: [String] = []

    func validate() throws {
        if socket.isEmpty { throw ValidationError("Say which navlogd: --socket PATH.") }
        guard connections >= 0 else { throw ValidationError("--connections cannot be negative (got \(connections)).") }
        guard seconds >= 0.1 && seconds.isFinite else { throw ValidationError("--seconds must be at least 0.1 (got \(seconds)).") }
        guard good >= 1 else { throw ValidationError("--good must be at least 1 client (got \(good)).") }
        guard goodRate >= 0 && goodRate.isFinite else { throw ValidationError("--good-rate must be 0 (as fast as the window allows) or more (got \(goodRate)).") }
        guard streamRate >= 0 && streamRate.isFinite else { throw ValidationError("--stream-rate must be 0 (as fast as navlogd takes them) or more (got \(streamRate)).") }
        guard goodWindow >= 1 else { throw ValidationError("--good-window must be at least 1 line (got \(goodWindow)).") }
        guard maximumWait >= 0.01 && maximumWait.isFinite else { throw ValidationError("--max-wait must be at least 0.01 s (got \(maximumWait)).") }
        _ = try weights()
    }

    /// The behaviours' weights: the defaults, with each `--mix` applied in turn.
    func weights() throws -> [ChaosBehaviour: Int] {
        var weights = Self.defaults.weights
        for item in mix.flatMap({ $0.split(separator: ",") }) {
            let parts = item.split(separator: "=")
            guard parts.count == 2, let behaviour = ChaosBehaviour(rawValue: String(parts[0])), let weight = Int(parts[1]), weight >= 0 else {
                let known = ChaosBehaviour.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("--mix takes BEHAVIOUR=WEIGHT,… with a weight of 0 or more and a behaviour among \(known) (not \(item)).")
            }
            weights[behaviour] = weight
        }
        return weights
    }

    /// The settings of the run.
    func options() throws -> ChaosLoadOptions {
        var options = ChaosLoadOptions()
        options.socket = socket
        options.connections = connections
        options.seconds = seconds
        options.good = good
        options.goodRate = goodRate
        options.goodWindow = goodWindow
        options.streamRate = streamRate
        options.maximumWait = maximumWait
        if let seed { options.seed = seed }
        options.dataDirectory = dataDirectory
        options.navlog = navlog
        options.goodEventsFile = goodEventsFile
        options.weights = try weights()
        return options
    }

    func run() throws {
        let status = Self.runChaos(try options())
        if status != 0 { throw ExitCode(status) }
    }
}

extension ChaosLoadCommand {
    /// Runs the chaos, prints one JSON line, returns the exit status (0: every good client was
    /// served and the log checks passed; 1: a good client stalled, lost an ack or the log is
    /// wrong; 2: navlogd unreachable or too few file descriptors).
    static func runChaos(_ options: ChaosLoadOptions) -> Int32 {
        // A peer that closes while we write must give EPIPE, not kill the tool.
        signal(SIGPIPE, SIG_IGN)
        let descriptorLimit = Self.raiseDescriptorLimit()
        if descriptorLimit < options.connections + options.good + 64 {
            FileHandle.standardError.write(
                Data("navlog-bench chaos-load: only \(descriptorLimit) file descriptors allowed (hard limit); \(options.connections + options.good) connections need more\n".utf8))
            return 2
        }

        // Prepared before the clock starts (hundreds of workload generators).
        let chaos = ChaosLoop(options: options)
        // Good clients connect first: navlogd refuses connections over its limit, and the clients
        // whose service is measured must not be the ones refused.
        let good = GoodClients(options: options)
        guard good.connect() else {
            FileHandle.standardError.write(Data("navlog-bench chaos-load: cannot connect to \(options.socket) (is navlogd running?)\n".utf8))
            return 2
        }
        let start = monotonic()
        let deadline = start + options.seconds
        let goodDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            good.run(start: start, deadline: deadline)
            goodDone.signal()
        }
        chaos.run(deadline: deadline)
        goodDone.wait()

        var report = ChaosReport(options: options, chaos: chaos, good: good)
        if let directory = options.dataDirectory {
            report.log = LogCheck.run(dataDirectory: directory, socket: options.socket, navlog: options.navlog ?? Self.besideThisProgram("navlog"), expected: good.sentSessions())
        }
        if let path = options.goodEventsFile {
            var text = ""
            for (session, seqs) in good.sentSessions().sorted(by: { $0.key < $1.key }) {
                text += "{\"session\":\"\(session)\",\"seqs\":[\(seqs.map(String.init).joined(separator: ","))]}\n"
            }
            if !FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) {
                FileHandle.standardError.write(Data("navlog-bench chaos-load: cannot write \(path)\n".utf8))
            }
        }
        report.ok = report.goodServed && (report.log?.ok ?? true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self))
        return report.ok ? 0 : 1
    }

    /// Raises the soft limit on open files to the hard limit; returns the limit now in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// A program in the same directory as this one (the build products directory).
    static func besideThisProgram(_ name: String) -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
