import Foundation
import NavlogEvents
import NavlogStore
import NavlogWorkload

/// The codec benchmark: measures the event codec and the log store against baselines run on
/// the same machine in the same process run (zstd's CLI, Foundation's JSON parser). Prints one
/// table (``BenchmarkTable``) and hands its rows to `tools/bench/all`.
///
/// 1. Generates N production-shaped events (seed 42) as NDJSON in the work directory.
/// 2. `parse`: the validating parse rate on one core, against `JSONSerialization`.
/// 3. Offline ingest (always, the later phases read its log): frame, parse, encode, compress,
///    write, fsync, against `zstd -3 -T1` of the NDJSON.
/// 4. `scan`: full-scan decode of every event's header fields, against `zstd -d`; and `cat` to
///    JSON Lines in process.
/// 5. `size`: bytes per event on disk against `zstd -3` and `zstd -19 --long` of the same lines.
struct CodecBenchmark {
    /// The phases `--only` can pick (the ingest always runs).
    enum Phase: String, CaseIterable {
        case parse, scan, size
    }

    /// Events to generate.
    var events = 2_000_000
    /// Events of the size comparison (the first of the generated ones).
    var sizeEvents = 500_000
    /// The work directory, removed first and (unless `keep`) afterwards.
    var work = FileManager.default.temporaryDirectory.appendingPathComponent("navlog-bench-\(getpid())").path
    /// Keep the work directory afterwards.
    var keep = false
    /// The one phase to run; nil runs them all.
    var only: Phase?
    /// How many times the full scan is timed (the figure is their mean).
    var scanRepeats = 1
    /// How the logs are written.
    var options = LogOptions()

    /// Runs the phases and prints the table.
    func run() {
        try? FileManager.default.removeItem(atPath: work)
        try! FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let ndjsonPath = work + "/events.ndjson"
        let ndjson = generate(into: ndjsonPath)
        var rows: [Row] = []
        if wanted(.parse) { rows += measureParse(ndjson) }
        let dataDirectory = work + "/data"
        rows.append(measureIngest(ndjson, from: ndjsonPath, into: dataDirectory))
        if wanted(.scan) { rows += measureScan(dataDirectory) }
        if wanted(.size) { rows += measureSize(dataDirectory, ndjsonPath: ndjsonPath) }
        BenchmarkTable.print(rows)
        BenchmarkTable.record(rows, benchmark: "codec and log")
        if !keep { try? FileManager.default.removeItem(atPath: work) }
    }

    /// Whether `phase` runs.
    func wanted(_ phase: Phase) -> Bool { only == nil || only == phase }

    /// 1. Realistic events: many interleaved sessions, UIKit-like behaviour. Writes them to
    /// `path`, prints a line about them and returns them.
    func generate(into path: String) -> [UInt8] {
        var generator = WorkloadGenerator(.production(seed: 42))
        let started = monotonic()
        let ndjson = generator.ndjson(events: events)
        let generateSeconds = monotonic() - started
        _ = FileManager.default.createFile(atPath: path, contents: Data(ndjson))
        let averageLine = Double(ndjson.count) / Double(events)
        print(
            "events: \(events) (\(generator.sessionsStarted) sessions, \(String(format: "%.0f", averageLine)) bytes/line, \(ndjson.count / 1_000_000) MB NDJSON, generated in \(String(format: "%.1f", generateSeconds)) s)"
        )
        return ndjson
    }

    /// 2. Validated parse rate, one core, against Foundation's JSONSerialization (no validation).
    func measureParse(_ ndjson: [UInt8]) -> [Row] {
        var parser = EventLineParser()
        var batch = EventBatch()
        var framer = LineFramer()
        var accepted = 0
        var started = monotonic()
        ndjson.withUnsafeBytes { raw in
            framer.feed(raw) { number, piece in
                if case .line(let bytes) = piece {
                    if (try? parser.parse(bytes, lineNumber: number, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)) == .event { accepted += 1 }
                    if batch.count >= 16_384 { batch.removeAll() }
                }
            }
        }
        let parseSeconds = monotonic() - started
        precondition(accepted == events, "the generator produced lines the codec rejects")
        let sample = min(events, 200_000)
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
        return [
            Row(
                figure: "validated parse (1 core)", value: format(ours / 1e6, "MB/s").replacingOccurrences(of: "  ", with: " "),
                baseline: String(format: "%.0f MB/s Foundation JSONSerialization (no validation)", theirs / 1e6),
                ratio: String(format: "%.1f×", ours / theirs), goal: "≥ 150 MB/s", met: ours >= 150e6),
            Row(figure: "validated parse (1 core)", value: format(Double(events) / parseSeconds, "events/s"), baseline: "", ratio: "", goal: ""),
        ]
    }

    /// 3. Offline ingest: frame, parse, encode, compress, write, fsync. Also writes
    /// `<work>/events.ndjson.zst`, which the scan compares against.
    func measureIngest(_ ndjson: [UInt8], from ndjsonPath: String, into dataDirectory: String) -> Row {
        let started = monotonic()
        let log = try! EventLog(directory: dataDirectory, options: options)
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
        let zstdSeconds = shell("zstd -3 -T1 -q -f -o \(work)/events.ndjson.zst \(ndjsonPath)").seconds
        let ours = Double(events) / ingestSeconds
        let theirs = Double(events) / zstdSeconds
        return Row(
            figure: "offline ingest (navlog ingest path)", value: format(ours, "events/s"),
            baseline: format(theirs, "events/s") + " zstd -3 -T1 of the NDJSON", ratio: String(format: "%.2f×", ours / theirs), goal: "(recorded)")
    }

    /// 4. Full-scan decode: every event's header fields, in LSN order; then `cat`: the same
    /// scan, written out as JSON Lines.
    func measureScan(_ dataDirectory: String) -> [Row] {
        let reader = try! LogReader(directory: dataDirectory)
        var count = 0
        var checksum: Int64 = 0
        var started = monotonic()
        // Header fields only, as the daemon's recovery scan reads them: no body is located.
        var headersOnly = LogQuery()
        headersOnly.readsBodies = false
        for _ in 0..<scanRepeats {
            count = 0
            try! reader.scan(headersOnly) { block, index in
                count += 1
                checksum &+= block.timestamps[index] &+ Int64(block.types[index].rawValue)
                return true
            }
        }
        let scanSeconds = (monotonic() - started) / Double(scanRepeats)
        precondition(count == events, "scan returned \(count) events")
        let zstdSeconds = shell("zstd -d -q -c \(work)/events.ndjson.zst > /dev/null").seconds
        let ours = Double(count) / scanSeconds
        let theirs = Double(count) / zstdSeconds
        var rows = [
            Row(
                figure: "full-scan decode (1 core)", value: format(ours, "events/s"),
                baseline: format(theirs, "events/s") + " zstd -d of the NDJSON (no parsing)", ratio: String(format: "%.2f×", ours / theirs), goal: "≥ 10M events/s",
                met: ours >= 10e6)
        ]
        var output: [UInt8] = []
        output.reserveCapacity(1 << 21)
        var written = 0
        started = monotonic()
        try! reader.scan(LogQuery()) { block, index in
            try block.appendJSONLine(index, to: &output)
            if output.count > 1 << 20 {
                written += output.count
                output.removeAll(keepingCapacity: true)
            }
            return true
        }
        let catSeconds = monotonic() - started
        rows.append(
            Row(
                figure: "cat to JSON Lines (in process)", value: format(Double(count) / catSeconds, "events/s"),
                baseline: String(format: "%.0f MB/s of JSON out", Double(written + output.count) / catSeconds / 1e6), ratio: "", goal: "(recorded)"))
        _ = checksum
        return rows
    }

    /// 5. Bytes per event on disk against zstd of the same NDJSON. The comparison uses the
    /// first `sizeEvents` lines, for the slow zstd -19 baseline.
    func measureSize(_ dataDirectory: String, ndjsonPath: String) -> [Row] {
        let count = min(sizeEvents, events)
        let bytesPerEvent = Double(directorySize(dataDirectory)) / Double(events)
        let subset = work + "/subset.ndjson"
        shell("head -n \(count) \(ndjsonPath) > \(subset)")
        shell("zstd -3 -T1 -q -f -o \(subset).3.zst \(subset)")
        shell("zstd -19 --long -T1 -q -f -o \(subset).19.zst \(subset)")
        let subsetDirectory = work + "/subset-data"
        let log = try! EventLog(directory: subsetDirectory, options: options)
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
        let ours = Double(directorySize(subsetDirectory)) / Double(count)
        let zstd3 = Double(fileSize(subset + ".3.zst")) / Double(count)
        let zstd19 = Double(fileSize(subset + ".19.zst")) / Double(count)
        let raw = Double(fileSize(subset)) / Double(count)
        return [
            Row(
                figure: "bytes/event on disk (\(count) events)", value: String(format: "%.2f B", ours),
                baseline: String(format: "%.2f B zstd -3 of NDJSON (raw %.0f B)", zstd3, raw), ratio: String(format: "%.2f×", ours / zstd3), goal: "≤ 0.5× zstd -3",
                met: ours <= 0.5 * zstd3),
            Row(
                figure: "bytes/event on disk (\(count) events)", value: String(format: "%.2f B", ours),
                baseline: String(format: "%.2f B zstd -19 --long of NDJSON", zstd19), ratio: String(format: "%.2f×", ours / zstd19), goal: "(recorded)"),
            Row(figure: "bytes/event on disk (\(events) events)", value: String(format: "%.2f B", bytesPerEvent), baseline: "", ratio: "", goal: ""),
        ]
    }
}
