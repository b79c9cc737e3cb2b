// navlog-bench: measures the event codec and the log store against baselines run on the same
// machine in the same process run (zstd's CLI, Foundation's JSON parser). Prints one table.
//
// Usage: navlog-bench [--events N] [--size-events N] [--block-events N] [--events-per-group N] [--level N]
//                     [--only parse|scan|size] [--scan-repeats N] [--work DIR] [--keep]
import Foundation
import NavlogEvents
import NavlogStore
import NavlogWorkload

struct Arguments {
    var events = 2_000_000
    var sizeEvents = 500_000
    var work = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-bench-\(getpid())").path
    var keep = false
    var only: String?
    var scanRepeats = 1
    var options = LogOptions()

    init() {
        var iterator = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--events": events = Int(iterator.next() ?? "") ?? events
            case "--size-events": sizeEvents = Int(iterator.next() ?? "") ?? sizeEvents
            case "--work": work = iterator.next() ?? work
            case "--keep": keep = true
            case "--only": only = iterator.next()
            case "--scan-repeats": scanRepeats = Int(iterator.next() ?? "") ?? 1
            case "--block-events": options.maximumEventsPerBlock = Int(iterator.next() ?? "") ?? options.maximumEventsPerBlock
            case "--level": options.compressionLevel = Int32(iterator.next() ?? "") ?? options.compressionLevel
            case "--events-per-group": options.eventsPerSessionGroup = Int(iterator.next() ?? "") ?? options.eventsPerSessionGroup
            default:
                FileHandle.standardError.write(
                    Data(
                        "navlog-bench: unknown argument \(argument). Use --events N, --size-events N, --block-events N, --events-per-group N, --level N, --only parse|scan|size, --scan-repeats N, --work DIR, --keep; navlog-bench --help lists every mode.\n"
                            .utf8))
                exit(2)
            }
        }
    }
}

@discardableResult
func shell(_ command: String) -> (seconds: Double, status: Int32) {
    let start = monotonic()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try! process.run()
    process.waitUntilExit()
    return (monotonic() - start, process.terminationStatus)
}

func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}

func directorySize(_ path: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.filter { $0.hasSuffix(".zst") || $0.hasSuffix(".idx") }.reduce(0) { $0 + fileSize(path + "/" + $1) }
}

func format(_ value: Double, _ unit: String) -> String {
    if value >= 1e6 { return String(format: "%.2fM %@", value / 1e6, unit) }
    if value >= 1e3 { return String(format: "%.1fk %@", value / 1e3, unit) }
    return String(format: "%.2f %@", value, unit)
}

let usage = """
    navlog-bench: navlog's benchmarks and load tools (tools/bench runs them and prints the tables).

      navlog-bench [--events N] [--size-events N] [--block-events N] [--events-per-group N] [--level N]
                   [--only parse|scan|size] [--scan-repeats N] [--work DIR] [--keep]
          the codec and the log against zstd's CLI and Foundation's JSON parser, one table
      navlog-bench --only replay [--events N] [--points P] [--work DIR] [--keep] [--events-per-group N] [--block-events N] [--level L] [--spine-level L]
          replay engine, checkpoints and seeks
      navlog-bench load (--socket PATH | --tcp PORT | --datagram PATH) --clients N --events N
                   [--ack none|batch|durable] [--rate EVENTS_PER_SECOND] [--chunk LINES]
          drives navlogd (or rsyslog) and prints one JSON line: events/s, ack p50/p99, CPU
      navlog-bench chaos-load --socket PATH [--connections N] [--seconds S] [--good K] ...
          misbehaving connections while good clients are timed (tools/chaos load)
      navlog-bench generate N [SEED] [--live N] [--mean-events N] [--think-seconds S] [--small] [--full]
          N workload events as JSON Lines on standard output, of production's shape
          (../shared/workload.md: 560 live sessions, ~480 events each, ~8 s between actions,
          recorded in a mix of styles: 40% full, 25% did-only, 20% will and did, 15% calls only);
          --small: the older 200 live sessions of ~400 events, 7 s, all recorded in full;
          --full: every session recorded in full

    """

if CommandLine.arguments.dropFirst().first.map({ ["--help", "-h", "help"].contains($0) }) == true {
    print(usage, terminator: "")
    exit(0)
}

// `navlog-bench generate N [SEED]`: write N workload events as JSON Lines to standard output.
if CommandLine.arguments.count >= 3 && CommandLine.arguments[1] == "generate" {
    var words = Array(CommandLine.arguments.dropFirst(2))
    func option(_ name: String) -> String? {
        guard let at = words.firstIndex(of: name) else { return nil }
        guard at + 1 < words.count else {
            FileHandle.standardError.write(Data("navlog-bench generate: \(name) needs a value.\n".utf8))
            exit(2)
        }
        defer { words.removeSubrange(at...(at + 1)) }
        return words[at + 1]
    }
    let live = option("--live").map { Int($0) }
    let meanEvents = option("--mean-events").map { Int($0) }
    let think = option("--think-seconds").map { Double($0) }
    let small = words.contains("--small")
    let full = words.contains("--full")
    words.removeAll { $0 == "--small" || $0 == "--full" }
    guard let count = Int(words.first ?? ""), count >= 0, live.map({ ($0 ?? 0) >= 1 }) ?? true, meanEvents.map({ ($0 ?? 0) >= 1 }) ?? true,
        think.map({ ($0 ?? -1) >= 0 }) ?? true
    else {
        FileHandle.standardError.write(Data("navlog-bench generate: give N (events), then optionally SEED, --live N, --mean-events N, --think-seconds S.\n".utf8))
        exit(2)
    }
    let seed = words.count > 1 ? UInt64(words[1]) ?? 42 : 42
    var configuration = small ? WorkloadConfiguration(seed: seed) : .production(seed: seed)
    if let live { configuration.concurrentSessions = live! }
    if let meanEvents { configuration.meanEventsPerSession = meanEvents! }
    if let think { configuration.meanThinkTime = Int64(think! * 1_000_000) }
    if full { configuration.recordingMix = [RecordingShare(.full, 1)] }
    var generator = WorkloadGenerator(configuration)
    FileHandle.standardOutput.write(Data(generator.ndjson(events: count)))
    exit(0)
}

// `navlog-bench load (--socket PATH | --tcp PORT | --datagram PATH) --clients N --events N [--ack MODE] [--chunk N]`
if CommandLine.arguments.count >= 2 && CommandLine.arguments[1] == "load" {
    runLoad(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

// `navlog-bench chaos-load --socket PATH [--connections N] [--seconds S] [--good K] [--seed N] …`:
// misbehaving connections against a navlogd while good clients are timed (ChaosLoad.swift).
if CommandLine.arguments.count >= 2 && CommandLine.arguments[1] == "chaos-load" {
    exit(runChaosLoad(Array(CommandLine.arguments.dropFirst(2))))
}

// `navlog-bench --only replay [--events N] [--points P] [--work DIR] [--keep] [--events-per-group N] [--block-events N] [--level L] [--spine-level L]`: ReplayBenchmark.swift.
if let only = CommandLine.arguments.firstIndex(of: "--only"), CommandLine.arguments.dropFirst(only + 1).first == "replay" {
    exit(ReplayBenchmark.main(Array(CommandLine.arguments.dropFirst())))
}

let arguments = Arguments()
try? FileManager.default.removeItem(atPath: arguments.work)
try! FileManager.default.createDirectory(atPath: arguments.work, withIntermediateDirectories: true)
let ndjsonPath = arguments.work + "/events.ndjson"
var rows: [Row] = []

// 1. Realistic events: many interleaved sessions, UIKit-like behaviour.
var generator = WorkloadGenerator(.production(seed: 42))
var started = monotonic()
let ndjson = generator.ndjson(events: arguments.events)
let generateSeconds = monotonic() - started
FileManager.default.createFile(atPath: ndjsonPath, contents: Data(ndjson))
let averageLine = Double(ndjson.count) / Double(arguments.events)
print(
    "events: \(arguments.events) (\(generator.sessionsStarted) sessions, \(String(format: "%.0f", averageLine)) bytes/line, \(ndjson.count / 1_000_000) MB NDJSON, generated in \(String(format: "%.1f", generateSeconds)) s)"
)

func wanted(_ phase: String) -> Bool { arguments.only == nil || arguments.only == phase }

// 2. Validated parse rate, one core, against Foundation's JSONSerialization (no validation).
if wanted("parse") {
    var parser = EventLineParser()
    var batch = EventBatch()
    var framer = LineFramer()
    var accepted = 0
    started = monotonic()
    ndjson.withUnsafeBytes { raw in
        framer.feed(raw) { number, piece in
            if case .line(let bytes) = piece {
                if (try? parser.parse(bytes, lineNumber: number, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)) == .event { accepted += 1 }
                if batch.count >= 16_384 { batch.removeAll() }
            }
        }
    }
    let parseSeconds = monotonic() - started
    precondition(accepted == arguments.events, "the generator produced lines the codec rejects")
    let sample = min(arguments.events, 200_000)
    var sampleBytes = 0
    started = monotonic()
    var offset = 0
    for _ in 0..<sample {
        let end = ndjson[offset...].firstIndex(of: 0x0A)!
        let data = Data(ndjson[offset..<end])
        _ = try! JSONSerialization.jsonObject(with: data)
        sampleBytes += end - offset + 1
        offset = end + 1
    }
    let foundationSeconds = monotonic() - started
    let ours = Double(ndjson.count) / parseSeconds
    let theirs = Double(sampleBytes) / foundationSeconds
    rows.append(
        Row(
            figure: "validated parse (1 core)", value: format(ours / 1e6, "MB/s").replacingOccurrences(of: "  ", with: " "),
            baseline: String(format: "%.0f MB/s Foundation JSONSerialization (no validation)", theirs / 1e6),
            ratio: String(format: "%.1f×", ours / theirs), goal: "≥ 150 MB/s", met: ours >= 150e6))
    rows.append(Row(figure: "validated parse (1 core)", value: format(Double(arguments.events) / parseSeconds, "events/s"), baseline: "", ratio: "", goal: ""))
}

// 3. Offline ingest: frame, parse, encode, compress, write, fsync.
let dataDirectory = arguments.work + "/data"
do {
    started = monotonic()
    let log = try! EventLog(directory: dataDirectory, options: arguments.options)
    var parser = EventLineParser()
    var batch = EventBatch()
    var framer = LineFramer()
    ndjson.withUnsafeBytes { raw in
        framer.feed(raw) { number, piece in
            if case .line(let bytes) = piece {
                _ = try? parser.parse(
                    bytes, lineNumber: number, receivedAt: 1_763_720_000_000_000 + Int64(number), peer: PeerCredentials(uid: 1000, gid: 1000, pid: 77), into: &batch)
                if batch.count >= 16_384 {
                    try! log.append(batch)
                    batch.removeAll()
                }
            }
        }
    }
    try! log.append(batch)
    try! log.close()
    let ingestSeconds = monotonic() - started
    let zstdSeconds = shell("zstd -3 -T1 -q -f -o \(arguments.work)/events.ndjson.zst \(ndjsonPath)").seconds
    let ours = Double(arguments.events) / ingestSeconds
    let theirs = Double(arguments.events) / zstdSeconds
    rows.append(
        Row(
            figure: "offline ingest (navlog ingest path)", value: format(ours, "events/s"),
            baseline: format(theirs, "events/s") + " zstd -3 -T1 of the NDJSON", ratio: String(format: "%.2f×", ours / theirs), goal: "(recorded)"))
}

// 4. Full-scan decode: every event's header fields, in LSN order.
if wanted("scan") {
    let reader = try! LogReader(directory: dataDirectory)
    var count = 0
    var checksum: Int64 = 0
    started = monotonic()
    for _ in 0..<arguments.scanRepeats {
        count = 0
        try! reader.scan(LogQuery()) { block, index in
            count += 1
            checksum &+= block.timestamps[index] &+ Int64(block.types[index].rawValue)
            return true
        }
    }
    let scanSeconds = (monotonic() - started) / Double(arguments.scanRepeats)
    precondition(count == arguments.events, "scan returned \(count) events")
    let zstdSeconds = shell("zstd -d -q -c \(arguments.work)/events.ndjson.zst > /dev/null").seconds
    let ours = Double(count) / scanSeconds
    let theirs = Double(count) / zstdSeconds
    rows.append(
        Row(
            figure: "full-scan decode (1 core)", value: format(ours, "events/s"),
            baseline: format(theirs, "events/s") + " zstd -d of the NDJSON (no parsing)", ratio: String(format: "%.2f×", ours / theirs), goal: "≥ 10M events/s", met: ours >= 10e6))
    // `cat`: the same scan, written out as JSON Lines.
    var output: [UInt8] = []
    output.reserveCapacity(1 << 21)
    var written = 0
    started = monotonic()
    try! reader.scan(LogQuery()) { block, index in
        try block.appendJSONLine(index, to: &output)
        if output.count > 1 << 20 { written += output.count; output.removeAll(keepingCapacity: true) }
        return true
    }
    let catSeconds = monotonic() - started
    rows.append(
        Row(
            figure: "cat to JSON Lines (in process)", value: format(Double(count) / catSeconds, "events/s"),
            baseline: String(format: "%.0f MB/s of JSON out", Double(written + output.count) / catSeconds / 1e6), ratio: "", goal: "(recorded)"))
    _ = checksum
}

// 5. Bytes per event on disk against zstd of the same NDJSON.
if wanted("size") {
    let events = min(arguments.sizeEvents, arguments.events)
    let bytesPerEvent = Double(directorySize(dataDirectory)) / Double(arguments.events)
    // The size comparison uses the first `events` lines for the slow zstd -19 baseline.
    let subset = arguments.work + "/subset.ndjson"
    shell("head -n \(events) \(ndjsonPath) > \(subset)")
    shell("zstd -3 -T1 -q -f -o \(subset).3.zst \(subset)")
    shell("zstd -19 --long -T1 -q -f -o \(subset).19.zst \(subset)")
    let subsetDirectory = arguments.work + "/subset-data"
    let log = try! EventLog(directory: subsetDirectory, options: arguments.options)
    var parser = EventLineParser()
    var batch = EventBatch()
    var framer = LineFramer()
    let subsetBytes = try! [UInt8](Data(contentsOf: URL(fileURLWithPath: subset)))
    subsetBytes.withUnsafeBytes { raw in
        framer.feed(raw) { number, piece in
            if case .line(let bytes) = piece {
                _ = try? parser.parse(
                    bytes, lineNumber: number, receivedAt: 1_763_720_000_000_000 + Int64(number), peer: PeerCredentials(uid: 1000, gid: 1000, pid: 77), into: &batch)
            }
        }
    }
    try! log.append(batch)
    try! log.close()
    let ours = Double(directorySize(subsetDirectory)) / Double(events)
    let zstd3 = Double(fileSize(subset + ".3.zst")) / Double(events)
    let zstd19 = Double(fileSize(subset + ".19.zst")) / Double(events)
    let raw = Double(fileSize(subset)) / Double(events)
    rows.append(
        Row(
            figure: "bytes/event on disk (\(events) events)", value: String(format: "%.2f B", ours),
            baseline: String(format: "%.2f B zstd -3 of NDJSON (raw %.0f B)", zstd3, raw), ratio: String(format: "%.2f×", ours / zstd3), goal: "≤ 0.5× zstd -3",
            met: ours <= 0.5 * zstd3))
    rows.append(
        Row(
            figure: "bytes/event on disk (\(events) events)", value: String(format: "%.2f B", ours),
            baseline: String(format: "%.2f B zstd -19 --long of NDJSON", zstd19), ratio: String(format: "%.2f×", ours / zstd19), goal: "(recorded)"))
    rows.append(Row(figure: "bytes/event on disk (\(arguments.events) events)", value: String(format: "%.2f B", bytesPerEvent), baseline: "", ratio: "", goal: ""))
}

// The table.
BenchmarkTable.print(rows)
BenchmarkTable.record(rows, benchmark: "codec and log")
if !arguments.keep { try? FileManager.default.removeItem(atPath: arguments.work) }
