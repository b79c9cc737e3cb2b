import Foundation
import NavlogClient
import NavlogTesting
import NavlogWorkload

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Checking the log

/// What the log holds of the good clients' events, and what navlog verify and stats say.
struct LogCheck: Codable {
    /// Good events found in `navlog cat`'s output.
    var goodEventsFound = 0
    /// Good events sent but not in the log.
    var missing = 0
    /// Good events in the log more than once.
    var duplicated = 0
    /// Good sessions whose seqs in the log are not the seqs sent, in order.
    var sessionsOutOfOrder = 0
    /// Events in the log in all (every client's).
    var eventsInLog = 0
    /// `navlog cat` and `navlog verify` exit statuses.
    var catStatus: Int32 = -1
    var verifyStatus: Int32 = -1
    /// navlogd's rejection counters by reason, and their sum.
    var rejected: [String: Int] = [:]
    var rejectedTotal = 0
    /// navlogd's counters of rejection reports dropped (client not reading), connections over
    /// the limit and connections since start.
    var reportsDropped = 0
    var overLimit = 0
    var connectionsTotal = 0
    /// navlogd's count of open connections once every chaos and good connection was closed
    /// (the stats request's own included): more than a few means its count is off.
    var connectionsAfter = 0
    /// navlogd's fsync latencies, and its own ack latencies (batch handed to the writer → ack ready).
    var fsyncP50Milliseconds = 0.0
    var fsyncP99Milliseconds = 0.0
    var ackP50Milliseconds = 0.0
    var ackP99Milliseconds = 0.0
    /// Problems found, said as sentences.
    var problems: [String] = []

    var ok: Bool { problems.isEmpty }

    /// Runs `navlog cat`, `navlog verify` and `navlog stats` and compares with what was sent.
    static func run(dataDirectory: String, socket: String, navlog: String, expected: [String: [Int]]) -> LogCheck {
        var check = LogCheck()
        let cat = runProgram(navlog, ["cat", "--data-dir", dataDirectory])
        check.catStatus = cat.status
        if cat.status != 0 { check.problems.append("navlog cat exited \(cat.status): \(String(decoding: cat.error.prefix(500), as: UTF8.self))") }
        var found: [String: [Int]] = [:]
        let key = Array(#""session":""#.utf8)
        for line in [UInt8](cat.output).split(separator: 0x0A) {
            check.eventsInLog += 1
            // Only good sessions need a full parse; the byte search finds the session cheaply.
            guard let session = stringValue(after: key, in: line), expected[session] != nil else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let seq = object["seq"] as? Int else {
                check.problems.append("a stored event of good session \(session) has no seq: \(String(decoding: line.prefix(200), as: UTF8.self))")
                continue
            }
            found[session, default: []].append(seq)
        }
        for (session, sent) in expected {
            let stored = found[session] ?? []
            check.goodEventsFound += stored.count
            let sentSet = Set(sent)
            let storedSet = Set(stored)
            check.missing += sentSet.subtracting(storedSet).count
            check.duplicated += stored.count - storedSet.count
            if stored != sent { check.sessionsOutOfOrder += 1 }
        }
        if check.missing > 0 { check.problems.append("\(check.missing) good events are not in the log") }
        if check.duplicated > 0 { check.problems.append("\(check.duplicated) good events are in the log more than once") }
        if check.sessionsOutOfOrder > 0 { check.problems.append("\(check.sessionsOutOfOrder) good sessions do not hold exactly the seqs sent, in order") }
        let verify = runProgram(navlog, ["verify", "--data-dir", dataDirectory])
        check.verifyStatus = verify.status
        if verify.status != 0 { check.problems.append("navlog verify exited \(verify.status): \(String(decoding: (verify.output + verify.error).prefix(500), as: UTF8.self))") }
        let stats = runProgram(navlog, ["stats", "--socket", socket, "--format", "json"])
        if stats.status == 0, let object = try? JSONSerialization.jsonObject(with: stats.output) as? [String: Any], object["accepted"] != nil {
            check.rejected = object["rejected"] as? [String: Int] ?? [:]
            check.rejectedTotal = check.rejected.values.reduce(0, +)
            check.reportsDropped = object["reportsDropped"] as? Int ?? 0
            check.overLimit = object["overLimit"] as? Int ?? 0
            check.connectionsTotal = object["connectionsTotal"] as? Int ?? 0
            check.connectionsAfter = object["connections"] as? Int ?? 0
            check.fsyncP50Milliseconds = object["fsyncP50Milliseconds"] as? Double ?? 0
            check.fsyncP99Milliseconds = object["fsyncP99Milliseconds"] as? Double ?? 0
            check.ackP50Milliseconds = object["ackP50Milliseconds"] as? Double ?? 0
            check.ackP99Milliseconds = object["ackP99Milliseconds"] as? Double ?? 0
            if check.rejectedTotal == 0 { check.problems.append("navlogd counted no rejected lines") }
        } else {
            // Exit status 0 without counters: navlogd answered with something else (a refusal).
            check.problems.append(
                "navlog stats exited \(stats.status): \(String(decoding: (stats.output + stats.error).prefix(500), as: UTF8.self))")
        }
        return check
    }

    /// Runs a program to completion (at most 10 minutes): its status, standard output and error.
    private static func runProgram(_ path: String, _ arguments: [String]) -> (status: Int32, output: Data, error: Data) {
        do {
            let result = try ProcessRunner.run(URL(fileURLWithPath: path), arguments, timeout: 600)
            return (result.status, result.standardOutput, result.standardError)
        } catch {
            return (-1, Data(), Data("cannot run \(path): \(error)".utf8))
        }
    }
}

// MARK: - The report

/// The one JSON line `chaos-load` prints.
struct ChaosReport: Codable {
    /// Chaos connections asked for; connections opened (chaos ones that connected at least
    /// once, plus the good ones); the most open at the same time.
    var connectionsRequested: Int
    var connections: Int
    var connectionsPeak: Int
    /// Every successful connect, churn and reconnects included.
    var connectionsOpenedTotal: Int
    /// Seconds until every chaos connection had been opened once.
    var openSeconds: Double
    var seconds: Double
    var seed: UInt64
    /// Per behaviour, what its connections did.
    var behaviours: [String: BehaviourCounts]
    /// Bad lines sent, by kind.
    var badLines: [String: Int]
    /// Rejection reports and refusals read by the chaos connections.
    var errorsSeen: Int
    var refusalsSeen: Int
    /// The good clients.
    var goodClients: Int
    var goodEventsSent: Int
    var goodEventsAcked: Int
    var goodEventsStored: Int
    var goodDuplicates: Int
    var goodAckP50Milliseconds: Double
    var goodAckP99Milliseconds: Double
    var goodAckMaxMilliseconds: Double
    /// The longest a good client waited with an unacknowledged write.
    var goodLongestWaitSeconds: Double
    /// The longest ack latency in each second of the run, in ms.
    var goodWorstAckMillisecondsBySecond: [Double]
    /// Each good client's longest ack latency (ms) and when that write was queued (s into the run).
    var goodWorstAckMillisecondsByClient: [Double]
    var goodWorstAckQueuedAtSecondsByClient: [Double]
    /// Each good client's longest wait for navlogd to take its bytes (socket full), in ms.
    var goodLongestWriteBlockedMillisecondsByClient: [Double]
    var maximumWaitSeconds: Double
    /// Every good client got every ack, none waited longer than `maximumWaitSeconds`, none got
    /// an error or was disconnected.
    var goodServed: Bool
    var goodProblems: [String]
    /// CPU seconds this tool used (user + system) during the run: on a small machine it
    /// competes with navlogd for the same cores.
    var toolCPUSeconds: Double
    /// The log checks (with `--data-dir`).
    var log: LogCheck?
    /// Everything passed.
    var ok = false

    init(options: ChaosLoadOptions, chaos: ChaosLoop, good: GoodClients) {
        connectionsRequested = options.connections
        connections = chaos.slotsOpened + good.clients.count
        connectionsPeak = chaos.peakOpen + good.clients.count
        connectionsOpenedTotal = chaos.counts.values.reduce(0) { $0 + $1.opened } + good.clients.count
        openSeconds = (chaos.openSeconds * 1000).rounded() / 1000
        seconds = options.seconds
        seed = options.seed
        behaviours = Dictionary(uniqueKeysWithValues: chaos.counts.map { ($0.key.rawValue, $0.value) })
        badLines = Dictionary(uniqueKeysWithValues: chaos.badLines.map { ($0.key.rawValue, $0.value) })
        errorsSeen = chaos.counts.values.reduce(0) { $0 + $1.rejections }
        refusalsSeen = chaos.counts.values.reduce(0) { $0 + $1.refusals }
        toolCPUSeconds = (processCPUSeconds() * 100).rounded() / 100
        goodClients = good.clients.count
        goodEventsSent = good.clients.reduce(0) { $0 + $1.eventsQueued }
        goodEventsAcked = good.clients.reduce(0) { $0 + $1.eventsAcked }
        goodEventsStored = good.clients.reduce(0) { $0 + $1.stored }
        goodDuplicates = good.clients.reduce(0) { $0 + $1.duplicates }
        let rounded = { (value: Double) in (value * 1000).rounded() / 1000 }
        goodAckP50Milliseconds = rounded(percentile(good.latencies, 0.5))
        goodAckP99Milliseconds = rounded(percentile(good.latencies, 0.99))
        goodAckMaxMilliseconds = rounded(good.latencies.max() ?? 0)
        goodLongestWaitSeconds = rounded(good.longestWait)
        goodWorstAckMillisecondsBySecond = good.worstBySecond.map { $0.rounded() }
        goodWorstAckMillisecondsByClient = good.clients.map { $0.worstLatency.rounded() }
        goodWorstAckQueuedAtSecondsByClient = good.clients.map { ($0.worstQueuedAt * 10).rounded() / 10 }
        goodLongestWriteBlockedMillisecondsByClient = good.clients.map { ($0.longestWriteBlocked * 1000).rounded() }
        maximumWaitSeconds = options.maximumWait
        var problems: [String] = []
        for (index, client) in good.clients.enumerated() {
            for problem in client.problems { problems.append("good client \(index): \(problem)") }
            if client.eventsAcked < client.eventsQueued {
                problems.append("good client \(index): \(client.eventsQueued - client.eventsAcked) of \(client.eventsQueued) events never acknowledged")
            }
        }
        if good.longestWait > options.maximumWait {
            problems.append(String(format: "a good client waited %.2f s for an ack (limit %.2f s)", good.longestWait, options.maximumWait))
        }
        if goodEventsSent == 0 { problems.append("the good clients sent nothing") }
        goodProblems = problems
        goodServed = problems.isEmpty
    }
}
