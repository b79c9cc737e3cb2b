// `navlog-bench replay` (or `--only replay`): measures the replay engine, the replay index and
// seeking a session to a random point, each against a baseline measured in the same run. Prints
// one table. ReplayBenchmarkCommand parses its command line.
import Foundation
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore
import NavlogWorkload

/// The replay benchmark.
///
/// 1. Builds a log of N generated events in `<work>/data` (or reuses the log already there
///    when `--work` names a directory that holds one).
/// 2. Engine throughput: every event of the log replayed from the start in one process, one
///    ``SessionReplayer`` per session, against a scan that only reads one field of each body.
/// 3. Index build: ``ReplayIndex/refresh()`` from scratch, against the engine throughput; and
///    the space the checkpoints take next to the log's.
/// 4. Seek + replay: P random points (uniform over the log's events, so sessions are weighted
///    by their length; fixed seed) replayed from the nearest checkpoint, against the same points
///    replayed from each session's first event. The first 100 points must give byte-identical
///    JSON both ways, or the benchmark stops with an error.
///
/// The replay index is written to `<work>/data/replay`, where `navlog` looks for it, so a log
/// kept with `--keep` is ready for `navlog replay` (tools/bench/replay relies on this).
enum ReplayBenchmark {
    /// What the command line asked for.
    struct Options {
        /// Events to generate when the work directory holds no log.
        var events = 2_000_000
        /// Random points to seek to.
        var points = 1_000
        /// The work directory (the log is in `<work>/data`).
        var work: String?
        /// Keep the work directory afterwards.
        var keep = false
        /// How the log is written when the benchmark makes it (``LogOptions/eventsPerSessionGroup``).
        var log = LogOptions()
    }

    /// A failure that ends the benchmark, with a sentence saying what to do.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// One point of a session to replay to: after the event at `index` (0-based) of `session`.
    struct Point {
        var session: String
        var index: Int
    }

    /// How many points are checked for identical JSON with and without checkpoints.
    static let checkedPoints = 100
    /// The seed of the points (a fixed one, so that runs are repeatable).
    static let pointSeed: UInt64 = 0x5EE4_0000_0000_0042
    /// The workload seed (the one `navlog-bench`'s other phases use).
    static let workloadSeed: UInt64 = 42
    /// The goal for the median seek + replay, in milliseconds.
    static let goalMilliseconds = 2.0

    // MARK: The benchmark

    static func run(_ options: Options) throws {
        let files = FileManager.default
        let work = options.work ?? files.temporaryDirectory.appendingPathComponent("navlog-bench-replay-\(ProcessInfo.processInfo.processIdentifier)").path
        let dataDirectory = work + "/data"
        let createdWork = !files.fileExists(atPath: work)
        do {
            try files.createDirectory(atPath: work, withIntermediateDirectories: true)
        } catch {
            throw Failure("cannot create the work directory \(work): \(error.localizedDescription)")
        }

        // 1. The log: reused when the work directory has one, else generated and ingested.
        var builtLog = false
        defer {
            // Only what this run made is removed: a log that was reused stays.
            if !options.keep {
                if createdWork {
                    try? files.removeItem(atPath: work)
                } else if builtLog {
                    try? files.removeItem(atPath: dataDirectory)
                }
            }
        }
        builtLog = try prepareLog(options, in: dataDirectory)
        let reader: LogReader
        do {
            reader = try LogReader(directory: dataDirectory)
        } catch {
            throw Failure("cannot read the log: \(error.message)")
        }
        var rows: [Row] = []
        let replay = try measureEngine(reader, in: dataDirectory, into: &rows)
        let index = try measureIndexBuild(reader, replay: replay, in: dataDirectory, into: &rows)
        let goal = try measureSeeks(options, index: index, reader: reader, replay: replay, work: work, into: &rows)
        BenchmarkTable.print(rows)
        BenchmarkTable.record(rows, benchmark: "replay")
        print("goal \(goal)")
        if options.keep { print("kept: \(work) (log in \(dataDirectory), replay index in \(dataDirectory)/replay)") }
    }

    /// 1. The log: reused when the work directory has one, else generated and ingested;
    /// returns whether this run built it.
    private static func prepareLog(_ options: Options, in dataDirectory: String) throws -> Bool {
        let existing = FileManager.default.fileExists(atPath: dataDirectory) ? (try? LogReader(directory: dataDirectory))?.eventCount ?? 0 : 0
        if existing > 0 {
            let note = existing == options.events ? "" : " (--events \(options.events) ignored; pass a new --work to build another log)"
            print("log: reusing the \(existing) events in \(dataDirectory)\(note)")
            return false
        }
        progress("generating and ingesting \(options.events) events into \(dataDirectory)")
        let built = try buildLog(events: options.events, into: dataDirectory, options: options.log)
        print(String(format: "log: %d generated events (%d sessions started) ingested in %.1f s into %@", options.events, built.sessions, built.seconds, dataDirectory))
        return true
    }

    /// 2. Engine throughput against a scan that only touches each body; returns the replay.
    private static func measureEngine(
        _ reader: LogReader, in dataDirectory: String, into rows: inout [Row]
    ) throws -> (events: Int, seconds: Double, sessions: [SessionLength]) {
        let logBytes = directoryBytes(dataDirectory)
        let blocks = reader.segments.reduce(0) { $0 + $1.blocks.count }
        progress("warming up: one untimed scan of the log")
        _ = try bodyScan(reader)
        progress("timing a scan that reads one field of each body (baseline)")
        let scan = try bodyScan(reader)
        progress("timing the replay of every event of the log")
        let replay = try replayAll(reader)
        guard replay.events == scan.events else {
            throw Failure("the replay scan saw \(replay.events) events but the baseline scan \(scan.events); is something writing to \(dataDirectory)?")
        }
        guard replay.events > 0 else { throw Failure("the log in \(dataDirectory) holds no events.") }
        let lengths = replay.sessions.map(\.events).sorted()
        print(
            "log: \(replay.events) events, \(replay.sessions.count) sessions (events per session: median \(lengths[lengths.count / 2]), max \(lengths.last ?? 0)), "
                + "\(reader.segments.count) segments, \(blocks) blocks, \(megabytes(logBytes)) on disk")
        let replayRate = Double(replay.events) / replay.seconds
        let scanRate = Double(scan.events) / scan.seconds
        rows.append(
            Row(
                figure: "replay engine, whole log (1 core)", value: rate(replayRate, "events/s"),
                baseline: rate(scanRate, "events/s") + " scan reading one field per body", ratio: String(format: "%.2f×", replayRate / scanRate),
                goal: "(recorded)"))
        return replay
    }

    /// 3. Building the replay index from scratch, and the space it takes: with one worker
    /// (the baseline), then with as many as the machine has cores (what navlog index does).
    private static func measureIndexBuild(
        _ reader: LogReader, replay: (events: Int, seconds: Double, sessions: [SessionLength]), in dataDirectory: String, into rows: inout [Row]
    ) throws -> ReplayIndex {
        let files = FileManager.default
        let logBytes = directoryBytes(dataDirectory)
        let replayRate = Double(replay.events) / replay.seconds
        let indexDirectory = dataDirectory + "/replay"
        try? files.removeItem(atPath: indexDirectory)
        func timedBuild(workers: Int, into directory: String) throws -> (index: ReplayIndex, rate: Double, seconds: Double) {
            try? files.removeItem(atPath: directory)
            let index = ReplayIndex(log: reader, directory: directory)
            guard index.directory != nil else { throw Failure("cannot create the replay index directory \(directory); check its permissions.") }
            index.workers = workers
            progress("timing ReplayIndex.refresh() from scratch with \(workers) worker(s)")
            let start = ContinuousClock.now
            try index.refresh()
            let elapsed = seconds(since: start)
            let indexed = index.lastRefresh.eventsReplayed
            guard indexed == replay.events else {
                throw Failure("the index build replayed \(indexed) events but the log holds \(replay.events); is something writing to \(dataDirectory)?")
            }
            return (index, Double(indexed) / elapsed, elapsed)
        }
        let oneWorker = try timedBuild(workers: 1, into: dataDirectory + "/replay-one-worker")
        try? files.removeItem(atPath: dataDirectory + "/replay-one-worker")
        let built = try timedBuild(workers: ReplayIndex.defaultWorkers, into: indexDirectory)
        let index = built.index
        rows.append(
            Row(
                figure: "replay index build, 1 worker", value: String(format: "%.2f s, ", oneWorker.seconds) + rate(oneWorker.rate, "events/s"),
                baseline: rate(replayRate, "events/s") + " replay engine (row above)", ratio: String(format: "%.2f×", oneWorker.rate / replayRate),
                goal: "(recorded)"))
        rows.append(
            Row(
                figure: "replay index build, \(ReplayIndex.defaultWorkers) workers (navlog index)",
                value: String(format: "%.2f s, ", built.seconds) + rate(built.rate, "events/s"),
                baseline: rate(oneWorker.rate, "events/s") + " with 1 worker (row above)", ratio: String(format: "%.2f×", built.rate / oneWorker.rate),
                goal: "≥ 1M events/s", met: built.rate >= 1e6))
        let indexBytes = index.sizeOnDisk
        rows.append(
            Row(
                figure: "checkpoint space", value: String(format: "%.1f%% of the log", 100 * Double(indexBytes) / Double(max(1, logBytes))),
                baseline: "index \(megabytes(indexBytes)), log \(megabytes(logBytes))", goal: "(recorded)"))
        return index
    }

    /// 4. Seeking random points, from checkpoints and from each session's start; returns the
    /// goal's verdict.
    private static func measureSeeks(
        _ options: Options, index: ReplayIndex, reader: LogReader, replay: (events: Int, seconds: Double, sessions: [SessionLength]), work: String,
        into rows: inout [Row]
    ) throws -> String {
        let points = choosePoints(options.points, from: replay.sessions)
        progress("timing \(points.count) seeks from checkpoints")
        let fromCheckpoints = try seek(points, index: index, useCheckpoints: true)
        progress("timing the same \(points.count) seeks from each session's first event (baseline)")
        let fromStart = try seek(points, index: index, useCheckpoints: false)
        progress("timing the same \(points.count) seeks from checkpoints, reading one block at a time (baseline)")
        let oneAtATime = try seek(points, index: index, useCheckpoints: true, readsAhead: false)
        let checked = try compare(fromCheckpoints.json, fromStart.json, points: points, work: work)
        progress("timing block reads for one session against whole-block reads")
        let blockReads = try blockReads(reader, sessions: replay.sessions.map(\.session))
        rows.append(
            Row(
                figure: "read a block for one session, median", value: String(format: "%.3f ms", blockReads.session),
                baseline: String(format: "%.3f ms whole block", blockReads.whole), ratio: timeRatio(blockReads.session, blockReads.whole), goal: "(recorded)"))

        let ours = fromCheckpoints.milliseconds.sorted()
        let theirs = fromStart.milliseconds.sorted()
        let median = percentile(ours, 0.5)
        let met = median <= goalMilliseconds
        let goal = String(format: "≤ %.0f ms median: ", goalMilliseconds) + (met ? "met" : "NOT met")
        for (name, fraction) in [("median", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            let value = percentile(ours, fraction), base = percentile(theirs, fraction)
            rows.append(
                Row(
                    figure: "seek+replay, \(points.count) random points, \(name)", value: String(format: "%.3f ms", value),
                    baseline: String(format: "%.3f ms from the session's first event", base),
                    ratio: timeRatio(value, base), goal: name == "median" ? String(format: "≤ %.0f ms", goalMilliseconds) : "",
                    met: name == "median" ? met : nil))
        }
        let alone = percentile(oneAtATime.milliseconds.sorted(), 0.5)
        rows.append(
            Row(
                figure: "seek+replay without reading ahead, median", value: String(format: "%.3f ms", alone),
                baseline: String(format: "%.3f ms reading two blocks at a time (above)", median), ratio: timeRatio(alone, median), goal: "(recorded)"))
        rows.append(
            Row(
                figure: "checkpoint vs first-event JSON", value: "\(checked)/\(checked) byte-identical", baseline: "first \(checked) points",
                goal: "all identical", met: true))
        return goal
    }

    // MARK: Building the log

    /// Generates `events` workload events and ingests them into a new log in `directory`, line
    /// by line (the NDJSON is never held whole, so 10M events need little memory).
    /// - Returns: the sessions the generator started and the time taken.
    static func buildLog(events: Int, into directory: String, options: LogOptions) throws -> (sessions: Int, seconds: Double) {
        let start = ContinuousClock.now
        var generator = WorkloadGenerator(.production(seed: workloadSeed))
        let log: EventLog
        do {
            log = try EventLog(directory: directory, options: options)
        } catch {
            throw Failure("cannot create the log: \(error.message)")
        }
        var parser = EventLineParser()
        var batch = EventBatch()
        var line: [UInt8] = []
        line.reserveCapacity(1_024)
        let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 77)
        do {
            for number in 1...events {
                generator.nextLine(into: &line)
                let kind = try line.withUnsafeBytes { raw in
                    try parser.parse(raw, lineNumber: number, receivedAt: 1_763_720_000_000_000 + Int64(number), peer: peer, into: &batch)
                }
                guard kind == .event else { throw Failure("generated line \(number) is not an event: \(String(decoding: line, as: UTF8.self))") }
                if batch.count >= 16_384 {
                    try log.append(batch)
                    batch.removeAll()
                }
            }
            try log.append(batch)
            try log.close()
        } catch let error as EventRejection {
            throw Failure("the codec rejected a generated line (a workload or codec bug): \(error)")
        } catch let error as AppendError {
            throw Failure("cannot write the log: \(error)")
        } catch let error as StoreError {
            throw Failure("cannot write the log: \(error.message)")
        }
        return (generator.sessionsStarted, seconds(since: start))
    }

    // MARK: Throughput

    /// A session of the log and how many events it has.
    struct SessionLength {
        var session: String
        var events: Int
    }

    /// Replays every event of the log from the start, one replayer per session, in one scan.
    /// - Returns: the events replayed, the time, and every session with its event count.
    static func replayAll(_ reader: LogReader) throws -> (events: Int, seconds: Double, sessions: [SessionLength]) {
        var sessionNumbers = ByteStringTable()
        var states: [SessionReplayer] = []
        var events = 0
        let start = ContinuousClock.now
        try reader.scan(LogQuery()) { block, index in
            let type = block.types[index], sequence = block.sequence(index), timestamp = block.timestamps[index], lsn = block.lsn(index)
            block.withEvent(index) { strings, session, tokens in
                let (reference, inserted) = sessionNumbers.insert(session)
                if inserted { states.append(SessionReplayer()) }
                states[Int(reference)].apply(
                    ReplayEvent(type: type, sequence: sequence, timestamp: timestamp, lsn: lsn, body: StoredBody(tokens: tokens, strings: strings)))
            }
            events += 1
            return true
        }
        let elapsed = seconds(since: start)
        let sessions = states.indices.map { slot in
            SessionLength(
                session: sessionNumbers.withString(UInt32(slot)) { String(decoding: $0, as: UTF8.self) }, events: states[slot].eventCount)
        }
        return (events, elapsed, sessions)
    }

    /// The baseline of the engine: the same scan, reading one field (`vc`) of each event's body.
    static func bodyScan(_ reader: LogReader) throws -> (events: Int, seconds: Double) {
        var events = 0
        var found = 0
        let start = ContinuousClock.now
        try reader.scan(LogQuery()) { block, index in
            if block.withBody(index, { $0.field(.vc) != nil }) { found += 1 }
            events += 1
            return true
        }
        let elapsed = seconds(since: start)
        // Keeps the field reads from being optimized away.
        if found > events { printError("navlog-bench: impossible field count \(found)") }
        return (events, elapsed)
    }

    // MARK: Seeking

    /// `count` points, uniform over the log's events: the session is weighted by its length and
    /// the index is uniform within it. The same sessions always give the same points.
    static func choosePoints(_ count: Int, from sessions: [SessionLength]) -> [Point] {
        var ends: [Int] = []
        ends.reserveCapacity(sessions.count)
        var total = 0
        for session in sessions {
            total += session.events
            ends.append(total)
        }
        var random = SplitMix64(seed: pointSeed)
        return (0..<count).map { _ in
            let event = Int.random(in: 0..<total, using: &random)
            // The first session whose events end past `event` (binary search).
            var low = 0, high = ends.count - 1
            while low < high {
                let middle = (low + high) / 2
                if ends[middle] > event { high = middle } else { low = middle + 1 }
            }
            let first = low == 0 ? 0 : ends[low - 1]
            return Point(session: sessions[low].session, index: event - first)
        }
    }

    /// Replays every point, timing each ``SessionSeeker/replay(session:to:useCheckpoints:visit:)``
    /// call (the JSON is made outside the timing, for the first ``checkedPoints`` points).
    /// The median time to read one block for one of its sessions (what a seek reads per block:
    /// of a grouped block its spine, without receive times and peers, and the session's group)
    /// and to read the whole block, over
    /// 500 random (block, session) pairs of the log.
    static func blockReads(_ reader: LogReader, sessions: [String]) throws -> (session: Double, whole: Double) {
        var random = SplitMix64(seed: pointSeed)
        var decoded = DecodedBlock()
        var forSession: [Double] = [], whole: [Double] = []
        let blocks = reader.blocks(matching: LogQuery())
        guard !blocks.isEmpty, !sessions.isEmpty else { return (0, 0) }
        while forSession.count < 500 {
            let session = sessions[Int(random.next() % UInt64(sessions.count))]
            let held = reader.segments.indices.flatMap { segment in reader.blocks(ofSegment: segment, mayHoldSession: session).map { (segment, $0) } }
            guard let (segment, block) = held.isEmpty ? nil : held[Int(random.next() % UInt64(held.count))] else { continue }
            var start = ContinuousClock.now
            _ = try reader.readBlock(segment: segment, block: block, into: &decoded, session: Array(session.utf8), receiveTimesAndPeers: false)
            forSession.append(seconds(since: start) * 1_000)
            start = ContinuousClock.now
            _ = try reader.readBlock(segment: segment, block: block, into: &decoded)
            whole.append(seconds(since: start) * 1_000)
        }
        return (percentile(forSession.sorted(), 0.5), percentile(whole.sorted(), 0.5))
    }

    static func seek(_ points: [Point], index: ReplayIndex, useCheckpoints: Bool, readsAhead: Bool = true) throws -> (milliseconds: [Double], json: [[UInt8]]) {
        let seeker = SessionSeeker(index: index)
        seeker.readsAhead = readsAhead
        var milliseconds: [Double] = []
        milliseconds.reserveCapacity(points.count)
        var json: [[UInt8]] = []
        for (number, point) in points.enumerated() {
            let start = ContinuousClock.now
            let state = try seeker.replay(session: point.session, to: .index(point.index), useCheckpoints: useCheckpoints)
            milliseconds.append(seconds(since: start) * 1_000)
            let way = useCheckpoints ? "from a checkpoint" : "from the session's first event"
            guard let state else {
                throw Failure("replaying \(way) found no event of session \(point.session), which the scan listed with \(point.index + 1) or more events.")
            }
            guard state.eventCount == point.index + 1 else {
                throw Failure("replaying session \(point.session) to index \(point.index) \(way) stopped after \(state.eventCount) events instead of \(point.index + 1).")
            }
            if number < checkedPoints {
                var output: [UInt8] = []
                state.appendJSON(session: point.session, to: &output)
                json.append(output)
            }
        }
        return (milliseconds, json)
    }

    /// Checks that both ways gave byte-identical JSON; on a difference, writes both to `work`
    /// and throws. - Returns: how many points were compared.
    static func compare(_ fromCheckpoints: [[UInt8]], _ fromStart: [[UInt8]], points: [Point], work: String) throws(Failure) -> Int {
        for number in fromCheckpoints.indices where fromCheckpoints[number] != fromStart[number] {
            let ours = fromCheckpoints[number], theirs = fromStart[number]
            let offset = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(ours.count, theirs.count)
            let oursPath = work + "/mismatch-from-checkpoint.json", theirsPath = work + "/mismatch-from-start.json"
            let saved =
                FileManager.default.createFile(atPath: oursPath, contents: Data(ours)) && FileManager.default.createFile(atPath: theirsPath, contents: Data(theirs))
            throw Failure(
                "CHECKPOINTS ARE WRONG: replaying session \(points[number].session) to index \(points[number].index) from a checkpoint "
                    + "gives different JSON than replaying it from the session's first event (first difference at byte \(offset); \(ours.count) vs \(theirs.count) bytes). "
                    + (saved ? "Both are in \(oursPath) and \(theirsPath) (pass --keep to keep them)." : "They could not be saved in \(work)."))
        }
        return fromCheckpoints.count
    }

    // MARK: Helpers

    /// Seconds elapsed since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    /// The `fraction` quantile of sorted `values` (linear interpolation between ranks).
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard let first = values.first else { return .nan }
        guard values.count > 1 else { return first }
        let rank = fraction * Double(values.count - 1)
        let low = Int(rank.rounded(.down)), high = min(low + 1, values.count - 1)
        return values[low] + (values[high] - values[low]) * (rank - Double(low))
    }

    /// The bytes of the regular files directly in `directory` (the segments and their indexes;
    /// the replay index, in a subdirectory, is not counted).
    static func directoryBytes(_ directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.reduce(0) { total, name in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name),
                attributes[.type] as? FileAttributeType == .typeRegular, let size = attributes[.size] as? Int
            else { return total }
            return total + size
        }
    }

    static func rate(_ value: Double, _ unit: String) -> String {
        if value >= 1e6 { return String(format: "%.2fM %@", value / 1e6, unit) }
        if value >= 1e3 { return String(format: "%.1fk %@", value / 1e3, unit) }
        return String(format: "%.2f %@", value, unit)
    }

    /// `time / baseline` as "0.25× (4.0× faster)", or "… slower" when the baseline was quicker.
    static func timeRatio(_ time: Double, _ baseline: Double) -> String {
        let ratio = time / baseline
        return ratio <= 1 ? String(format: "%.3f× (%.1f× faster)", ratio, 1 / ratio) : String(format: "%.3f× (%.1f× slower)", ratio, ratio)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

    /// A progress line on standard error (the table goes to standard output).
    static func progress(_ message: String) { printError("replay bench: \(message)…") }

    static func printError(_ message: String) { FileHandle.standardError.write(Data((message + "\n").utf8)) }
}
