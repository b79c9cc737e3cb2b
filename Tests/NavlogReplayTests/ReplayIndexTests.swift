import Foundation
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Synchronization
import Testing

/// Replay checkpoints: replaying any point through them gives exactly what replaying the
/// session from its first event gives; they are rebuilt when missing or damaged, and follow a
/// log that grows.
@Suite("Replay checkpoints beside the log")
struct ReplayIndexTests {
    /// Small blocks and segments, so that sessions span many blocks and several segments.
    static var options: LogOptions {
        var options = LogOptions()
        options.maximumEventsPerBlock = 300
        options.maximumSegmentBytes = 16 << 10
        return options
    }

    static func generatedLines(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var configuration = WorkloadConfiguration(seed: seed)
        configuration.concurrentSessions = 12
        configuration.meanEventsPerSession = 300
        var generator = WorkloadGenerator(configuration)
        return generator.lines(count)
    }

    /// Appends `lines` in batches of `batchSize`, each written out (a block per batch, unless
    /// the block size is smaller).
    static func append(_ lines: ArraySlice<[UInt8]>, to log: EventLog, batchSize: Int = 97) throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in lines.enumerated() {
            _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1_000, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
            if batch.count == batchSize {
                _ = try log.append(batch)
                _ = try log.flush()
                batch.removeAll()
            }
        }
        if !batch.isEmpty { _ = try log.append(batch) }
        _ = try log.flush()
    }

    /// Sessions and their event counts, from a full scan.
    static func sessions(_ directory: String) throws -> [(String, Int)] {
        var counts: [String: Int] = [:]
        try LogReader(directory: directory).scan(LogQuery()) { block, index in
            counts[block.session(index), default: 0] += 1
            return true
        }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    static func json(_ state: SessionReplayer?, _ session: String) -> String {
        guard let state else { return "nil" }
        var bytes: [UInt8] = []
        state.appendJSON(session: session, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Checks `points` random targets both ways; returns how many were checked.
    @discardableResult
    static func compare(_ seeker: SessionSeeker, _ sessions: [(String, Int)], points: Int, seed: UInt64) throws -> Int {
        var random = SplitMix64(seed: seed)
        for _ in 0..<points {
            let (session, count) = sessions[Int(random.next() % UInt64(sessions.count))]
            let index = Int(random.next() % UInt64(count))
            let full = try #require(try seeker.replay(session: session, to: .index(index), useCheckpoints: false))
            let targets: [ReplayTarget] = [
                .index(index), .time(full.position!.timestamp), full.position!.sequence.map { .sequence($0) } ?? .end, .end,
            ]
            for target in targets {
                let viaCheckpoint = try seeker.replay(session: session, to: target, useCheckpoints: true)
                let fromStart = try seeker.replay(session: session, to: target, useCheckpoints: false)
                #expect(json(viaCheckpoint, session) == json(fromStart, session), "session \(session) at \(target)")
            }
        }
        return points
    }

    @Test("replay through checkpoints equals replay from the first event: by index, seq, time and end, over many segments")
    func checkpointsAgree() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path, options: Self.options)
            try Self.append(Self.generatedLines(12_000, seed: 5)[...], to: log)
            try log.close()
            let index = ReplayIndex(log: try LogReader(directory: dir.path))
            try index.refresh()
            #expect(index.log.segments.count > 3)
            #expect(index.lastRefresh.filesWritten == index.log.segments.count)
            #expect(index.lastRefresh.eventsReplayed == 12_000)
            let sessions = try Self.sessions(dir.path)
            try Self.compare(SessionSeeker(index: index), sessions, points: 60, seed: 1)
            // A second refresh finds nothing to do.
            try index.refresh()
            #expect(index.lastRefresh.filesWritten == 0)
        }
    }

    @Test("segments compaction wrote again at the sealed level get their index files rebuilt, harder compressed, with the same answers")
    func indexAfterCompaction() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path, options: Self.options)
            try Self.append(Self.generatedLines(12_000, seed: 8)[...], to: log, batchSize: 300)
            try log.close()
            let replay = dir.path + "/replay"
            func indexBytes() throws -> Int {
                try FileManager.default.contentsOfDirectory(atPath: replay).filter { $0.hasSuffix(".nrx") }.reduce(0) {
                    $0 + (try FileManager.default.attributesOfItem(atPath: replay + "/" + $1)[.size] as! Int)
                }
            }
            let before = ReplayIndex(log: try LogReader(directory: dir.path))
            try before.refresh()
            let bytesBefore = try indexBytes()
            let sessions = try Self.sessions(dir.path)
            var answers: [String] = []
            for (session, count) in sessions.prefix(40) {
                for index in [0, count / 2, count - 1] {
                    answers.append(Self.json(try SessionSeeker(index: before).replay(session: session, to: .index(index), useCheckpoints: true), session))
                }
            }
            // What navlogd's compaction does: every sealed segment again at level 19.
            var options = Self.options
            options.sealedCompressionLevel = 19
            let reader = try LogReader(directory: dir.path)
            let candidates = SegmentCompaction.candidates(reader, options: options)
            #expect(candidates.count == reader.segments.filter(\.sealed).count && candidates.count >= 3)
            let compactor = try EventLog(directory: dir.path, options: options)
            for name in candidates {
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: options))
                #expect(try compactor.install(copy))
            }
            try compactor.close()
            let after = ReplayIndex(log: try LogReader(directory: dir.path))
            try after.refresh()
            #expect(after.lastRefresh.filesWritten == candidates.count, "the compacted segments' files, rebuilt")
            let bytesAfter = try indexBytes()
            #expect(bytesAfter < bytesBefore, "\(bytesBefore) → \(bytesAfter) bytes")
            var again: [String] = []
            for (session, count) in sessions.prefix(40) {
                for index in [0, count / 2, count - 1] {
                    again.append(Self.json(try SessionSeeker(index: after).replay(session: session, to: .index(index), useCheckpoints: true), session))
                }
            }
            #expect(again == answers)
        }
    }

    @Test(
        "production's shape (520 sessions live, mixed recording styles), an index built by 4 workers: through checkpoints equals from the first event at every event of sampled sessions of each worker"
    )
    func everyPointWithManyLiveSessions() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var configuration = WorkloadConfiguration.production(seed: 14)
            configuration.concurrentSessions = 520
            var generator = WorkloadGenerator(configuration)
            var options = LogOptions()
            options.maximumEventsPerBlock = 4096
            options.maximumSegmentBytes = 96 << 10
            // Grouped blocks (8 session groups each): the seeker reads a session's group only,
            // the index build whole blocks.
            options.eventsPerSessionGroup = 512
            let log = try EventLog(directory: dir.path, options: options)
            try Self.append(generator.lines(30_000)[...], to: log, batchSize: 4096)
            try log.close()
            let index = ReplayIndex(log: try LogReader(directory: dir.path))
            // Small enough that the sampled sessions have several checkpoints in and across
            // segments (the interval's own value, 1024, would give these short sessions none).
            index.checkpointInterval = 16
            // Four workers, each the sessions of one id-hash residue and 2 of each block's 8
            // groups: the sampled sessions below are of every worker.
            index.workers = 4
            try index.refresh()
            #expect(index.log.segments.count > 2)
            // The first block is grouped: its header is format version 2 (docs/FORMAT.md).
            let firstSegment = try [UInt8](Data(contentsOf: dir.appendingPathComponent(index.log.segments[0].name)))
            #expect(firstSegment[12] == 2)
            let seeker = SessionSeeker(index: index)
            var random = SplitMix64(seed: 9)
            let sessions = try Self.sessions(dir.path).filter { $0.1 >= 40 }
            #expect(sessions.count > 100)
            // A session of each worker, and two at random.
            var sampled = (0..<4).compactMap { residue in sessions.first { StringHash.hash($0.0) % 4 == UInt64(residue) } }
            #expect(sampled.count == 4)
            for _ in 0..<2 { sampled.append(sessions[Int(random.next() % UInt64(sessions.count))]) }
            for (session, count) in sampled {
                // Every state from the first event, in one pass…
                var expected: [String] = []
                var pending: [Bool] = []
                _ = try seeker.replay(session: session, to: .end, useCheckpoints: false) { _, _, state, _ in
                    expected.append(Self.json(state, session))
                    pending.append(state.hasPendingRemoval)
                    return true
                }
                #expect(expected.count == count)
                // …equals a replay through the nearest checkpoint to each of them. A replay that
                // stops while a pop is pending shows it as the later events prove it (E6): that
                // state is compared with the same replay from the first event.
                for position in 0..<count {
                    let reference =
                        pending[position] ? Self.json(try seeker.replay(session: session, to: .index(position), useCheckpoints: false), session) : expected[position]
                    #expect(Self.json(try seeker.replay(session: session, to: .index(position)), session) == reference, "\(session) at \(position)")
                }
                #expect(Self.json(try seeker.replay(session: session, to: .end), session) == expected.last, "\(session) at its end")
            }
        }
    }

    @Test("reading ahead (a session's next block on another thread) gives what reading one block at a time gives, also past a damaged block, which both report")
    func readingAheadAgreesWithOneAtATime() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var configuration = WorkloadConfiguration.production(seed: 15)
            configuration.concurrentSessions = 200
            var generator = WorkloadGenerator(configuration)
            var options = LogOptions()
            options.maximumEventsPerBlock = 2048
            options.maximumSegmentBytes = 1 << 30
            options.eventsPerSessionGroup = 512
            let log = try EventLog(directory: dir.path, options: options)
            try Self.append(generator.lines(16_384)[...], to: log, batchSize: 2048)
            try log.close()
            try ReplayIndex(log: try LogReader(directory: dir.path)).refresh()
            // Damage the middle of the fourth block's data frames (a group's, or the spine).
            let reader = try LogReader(directory: dir.path)
            let entry = reader.segments[0].blocks[3]
            let path = dir.path + "/" + reader.segments[0].name
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let headerSize = Int(bytes[entry.offset + 4]) | Int(bytes[entry.offset + 5]) << 8 | Int(bytes[entry.offset + 6]) << 16 | Int(bytes[entry.offset + 7]) << 24
            let dataStart = entry.offset + 8 + headerSize
            bytes[dataStart + (entry.offset + entry.size - dataStart) / 2] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let ahead = SessionSeeker(index: ReplayIndex(log: try LogReader(directory: dir.path)))
            let oneAtATime = SessionSeeker(index: ReplayIndex(log: try LogReader(directory: dir.path)))
            oneAtATime.readsAhead = false
            var random = SplitMix64(seed: 3)
            let sessions = try Self.sessions(dir.path).filter { $0.1 >= 20 }
            #expect(sessions.count > 50)
            for _ in 0..<60 {
                let (session, count) = sessions[Int(random.next() % UInt64(sessions.count))]
                for target in [ReplayTarget.index(Int(random.next() % UInt64(count))), .end] {
                    let a = Self.json(try ahead.replay(session: session, to: target), session)
                    let b = Self.json(try oneAtATime.replay(session: session, to: target), session)
                    #expect(a == b, "\(session) to \(target)")
                }
            }
            let aheadDamage = Set(ahead.index.log.damage.map(\.description)), inOrderDamage = Set(oneAtATime.index.log.damage.map(\.description))
            #expect(!aheadDamage.isEmpty && aheadDamage == inOrderDamage, "\(aheadDamage) vs \(inOrderDamage)")
            #expect(aheadDamage.allSatisfy { $0.contains("fails its checksum") })
        }
    }

    @Test("damaged, truncated, foreign or deleted checkpoint files are rebuilt and never change an answer")
    func damagedFilesRebuilt() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path, options: Self.options)
            try Self.append(Self.generatedLines(6_000, seed: 6)[...], to: log)
            try log.close()
            try ReplayIndex(log: try LogReader(directory: dir.path)).refresh()
            let replayDirectory = dir.appendingPathComponent("replay")
            let files = try FileManager.default.contentsOfDirectory(atPath: replayDirectory.path).filter { $0.hasSuffix(".nrx") }.sorted()
            #expect(files.count > 2)
            let sessions = try Self.sessions(dir.path)
            var random = SplitMix64(seed: 9)
            for (round, damage) in ["flip", "truncate", "delete", "foreign", "zero"].enumerated() {
                let name = files[round % files.count]
                let path = replayDirectory.appendingPathComponent(name).path
                var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                switch damage {
                case "flip":
                    for _ in 0..<8 {
                        let offset = Int(random.next() % UInt64(bytes.count))
                        bytes[offset] ^= UInt8(1 << (random.next() % 8))
                    }
                case "truncate": bytes.removeLast(bytes.count / 3)
                case "delete": bytes = []
                case "foreign": bytes = try [UInt8](Data(contentsOf: replayDirectory.appendingPathComponent(files[(round + 1) % files.count])))
                default: bytes.replaceSubrange(100..<min(bytes.count, 4_000), with: repeatElement(0, count: min(bytes.count, 4_000) - 100))
                }
                if damage == "delete" {
                    try FileManager.default.removeItem(atPath: path)
                } else {
                    try Data(bytes).write(to: URL(fileURLWithPath: path))
                }
                // Damage in the header or directory is found when the file is opened; damage in a
                // session's entry or a state frame when it is used. Either way the answer comes
                // from the events, and the file is rebuilt.
                let index = ReplayIndex(log: try LogReader(directory: dir.path))
                let seeker = SessionSeeker(index: index)
                try index.refresh()
                let rebuiltAtOnce = index.lastRefresh.filesWritten
                try Self.compare(seeker, sessions, points: 12, seed: UInt64(round))
                try Self.compare(seeker, sessions.filter { $0.1 > 50 }, points: 12, seed: UInt64(round) + 100)
                // What sessions and analytics read: every end state and every journal.
                try index.finalStates { _, _ in }
                _ = try index.forEachJournalRecord { _ in }
                try index.refresh()
                #expect(rebuiltAtOnce + index.lastRefresh.filesWritten >= 1, "\(damage) of \(name) was never noticed")
            }
        }
    }

    @Test("the index follows a log that grows while it is read (the active segment's file is extended)")
    func followsGrowingLog() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = Self.generatedLines(9_000, seed: 7)
            let log = try EventLog(directory: dir.path, options: Self.options)
            let reader = try LogReader(directory: dir.path)
            let index = ReplayIndex(log: reader)
            for part in 0..<3 {
                try Self.append(lines[(part * 3_000)..<((part + 1) * 3_000)], to: log)
                try reader.refresh()
                try index.refresh()
                #expect(index.lastRefresh.eventsReplayed > 0)
                #expect(index.lastRefresh.eventsReplayed <= 3_000 + 300, "refresh \(part) replayed \(index.lastRefresh.eventsReplayed) events: it should extend, not rebuild")
                try Self.compare(SessionSeeker(index: index), try Self.sessions(dir.path), points: 15, seed: UInt64(part))
            }
            try log.close()
        }
    }

    @Test("a refresh whose view of the log is older than the file another refresh wrote reads the log again and extends it, instead of building the segment again")
    func refreshBehindAnotherWriter() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let lines = Self.generatedLines(6_000, seed: 11)
            let log = try EventLog(directory: dir.path, options: Self.options)
            try Self.append(lines[0..<3_000], to: log)
            // A query's view, taken before the follower's refresh below.
            let behind = ReplayIndex(log: try LogReader(directory: dir.path))
            try Self.append(lines[3_000..<6_000], to: log)
            let follower = ReplayIndex(log: try LogReader(directory: dir.path))
            try follower.refresh()
            #expect(follower.lastRefresh.eventsReplayed == 6_000)
            try behind.refresh()
            #expect(behind.lastRefresh.eventsReplayed == 0, "the other's files cover every event; replayed \(behind.lastRefresh.eventsReplayed) again")
            #expect(behind.lastRefresh.filesWritten == 0)
            try Self.compare(SessionSeeker(index: behind), try Self.sessions(dir.path), points: 15, seed: 3)
            try log.close()
        }
    }

    @Test("a refresh waits while another holds the index's refresh lock, then finds the log indexed")
    func refreshWaitsForAnother() async throws {
        try await TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path, options: Self.options)
            try Self.append(Self.generatedLines(2_000, seed: 5)[...], to: log)
            try log.close()
            try ReplayIndex(log: try LogReader(directory: dir.path)).refresh()
            // Another refresher (a follower's pass) holds the lock.
            let lockPath = dir.path + "/replay/.refresh.lock"
            let held = open(lockPath, O_RDWR | O_CREAT, 0o644)
            #expect(held >= 0 && flock(held, LOCK_EX) == 0)
            let path = dir.path
            let finished = Atomic<Bool>(false)
            let waiting = Task.detached { () throws -> Int in
                let index = ReplayIndex(log: try LogReader(directory: path))
                try index.refresh()
                finished.store(true, ordering: .sequentiallyConsistent)
                return index.lastRefresh.eventsReplayed
            }
            try await Task.sleep(for: .milliseconds(300))
            // Still waiting: releasing the lock lets it go on (and it has nothing to replay).
            let finishedEarly = finished.load(ordering: .sequentiallyConsistent)
            #expect(!finishedEarly, "the refresh waits while another holds the lock")
            close(held)
            #expect(try await waiting.value == 0)
            let finishedAfter = finished.load(ordering: .sequentiallyConsistent)
            #expect(finishedAfter)
            let probe = open(lockPath, O_RDWR)
            #expect(flock(probe, LOCK_EX | LOCK_NB) == 0, "let go once the refresh ends")
            close(probe)
            // A refresher that holds it past the patience (stopped, hung) does not stop readers.
            let stuck = open(lockPath, O_RDWR)
            #expect(flock(stuck, LOCK_EX) == 0)
            defer { close(stuck) }
            let impatient = ReplayIndex(log: try LogReader(directory: path))
            impatient.refreshLockPatience = .milliseconds(200)
            try impatient.refresh()
            #expect(impatient.lastRefresh.eventsReplayed == 0)
        }
    }

    @Test("a follower looks again at its interval while it keeps up, and as soon as its last look took (at least 0.1 s) while it is behind")
    func followCadence() {
        let cadence = FollowCadence(interval: .seconds(1))
        #expect(cadence.wait(afterIndexing: 0, took: .milliseconds(5)) == .seconds(1))
        #expect(cadence.wait(afterIndexing: 9_999, took: .milliseconds(400)) == .seconds(1))
        #expect(cadence.wait(afterIndexing: 10_000, took: .milliseconds(400)) == .milliseconds(400))
        #expect(cadence.wait(afterIndexing: 50_000, took: .milliseconds(20)) == .milliseconds(100))
        #expect(cadence.wait(afterIndexing: 2_000_000, took: .seconds(3)) == .seconds(1))
    }
}
