import Foundation
import NavlogAnalytics
import NavlogEvents
import NavlogReplay
import NavlogReplayStore
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

/// Rule E4 through the replay index: a log whose events arrived late (stored after higher
/// `seq`s of their session, blocks and segments away) gives, through checkpoints and focus
/// journals, exactly what the same events stored in `seq` order give: every session's state at
/// any `seq` and at its end, and every analytics row. The oracle is the in-order log, replayed
/// by the plain log-order path; the late log goes through re-derivation.
@Suite("Late events through the replay index (E4)")
struct LateDeliveryIndexTests {
    static var options: LogOptions {
        var options = LogOptions()
        options.maximumEventsPerBlock = 300
        options.maximumSegmentBytes = 16 << 10
        return options
    }

    /// Lines of many interleaved sessions, in `seq` order within each session.
    static func lines() -> [[UInt8]] {
        var configuration = WorkloadConfiguration(seed: 44)
        configuration.concurrentSessions = 30
        configuration.meanEventsPerSession = 200
        var generator = WorkloadGenerator(configuration)
        return generator.lines(9_000)
    }

    /// The same lines as delivery goes wrong: about one in thirty moved later by up to 2,500
    /// lines (several blocks, often another segment), as a resend after a reconnect would.
    static func delivered(_ lines: [[UInt8]], seed: UInt64) -> (lines: [[UInt8]], moved: Int) {
        var random = SplitMix64(seed: seed)
        var output = lines
        var moved = 0
        for _ in 0..<(lines.count / 30) {
            let from = Int(random.next() % UInt64(output.count - 1))
            let line = output.remove(at: from)
            let to = min(output.count, from + 1 + Int(random.next() % 2_500))
            output.insert(line, at: to)
            moved += 1
        }
        return (output, moved)
    }

    static func write(_ lines: [[UInt8]], to directory: String) throws {
        let log = try EventLog(directory: directory, options: options)
        var parser = EventLineParser()
        var batch = EventBatch()
        for (number, line) in lines.enumerated() {
            _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
            if batch.count == 97 {
                _ = try log.append(batch)
                _ = try log.flush()
                batch.removeAll()
            }
        }
        if !batch.isEmpty { _ = try log.append(batch) }
        try log.close()
    }

    /// A state as JSON without LSNs (the two logs store the events at different LSNs) and
    /// without the late-event count (only the late log has late events).
    static func json(_ state: SessionReplayer?, _ session: String) -> String {
        guard let state else { return "nil" }
        var bytes: [UInt8] = []
        state.appendJSON(session: session, to: &bytes)
        return String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: #""lsn":(\d+|null),?"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #""lateEvents":\d+,"#, with: "", options: .regularExpression)
    }

    /// Every analytics row the journals give (events rows too), as text, LSNs left out, sorted.
    static func rows(_ index: ReplayIndex) throws -> [String] {
        var recorder = JournalScannerTests.Recorder(wantsEvents: true)
        #expect(try JournalScanner(index: index).scan(into: &recorder))
        return recorder.rows.map { $0.replacingOccurrences(of: #"lsn: (Optional\(\d+\)|nil|\d+)"#, with: "", options: .regularExpression) }.sorted()
    }

    static func sessions(_ lines: [[UInt8]]) throws -> [(id: String, sequences: [UInt64])] {
        var found: [String: [UInt64]] = [:]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let session = try #require(object["session"] as? String)
            found[session, default: []].append(try #require((object["seq"] as? NSNumber)?.uint64Value))
        }
        return found.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    @Test("compaction of a late, production-shaped log written a block per fsync: every event at its LSN, every analytics row and end state as before")
    func compactionKeepsLateLog() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var configuration = WorkloadConfiguration.production(seed: 23)
            configuration.concurrentSessions = 500
            var generator = WorkloadGenerator(configuration)
            let (late, moved) = Self.delivered(generator.lines(8_000), seed: 3)
            #expect(moved > 200)
            // As durable clients leave a log: a flush (a block) every one to seven events.
            let log = try EventLog(directory: dir.path, options: Self.options)
            var parser = EventLineParser()
            var batch = EventBatch()
            var step = 1
            for (number, line) in late.enumerated() {
                _ = try line.withUnsafeBytes {
                    try parser.parse($0, lineNumber: number + 1, receivedAt: 1_000 + Int64(number), peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
                }
                if batch.count == step {
                    _ = try log.append(batch)
                    _ = try log.flush()
                    batch.removeAll()
                    step = step % 7 + 1
                }
            }
            if !batch.isEmpty { _ = try log.append(batch) }
            try log.close()
            func events() throws -> [String] {
                var lines: [String] = []
                try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                    lines.append("\(block.lsn(index)) \(block.session(index)) \(block.types[index]) \(block.timestamps[index]) \(block.sequence(index) ?? 0)")
                    return true
                }
                return lines
            }
            let sessions = try Self.sessions(late).map(\.id)
            func ends(_ index: ReplayIndex) throws -> [String] {
                let seeker = SessionSeeker(index: index)
                return try sessions.map { Self.json(try seeker.replay(session: $0, to: .end), $0) }
            }
            let before = ReplayIndex(log: try LogReader(directory: dir.path))
            try before.refresh()
            let eventsBefore = try events(), rowsBefore = try Self.rows(before), endsBefore = try ends(before)
            #expect(eventsBefore.count == late.count)

            // What navlogd's compaction does: full blocks, groups at level 19.
            var options = Self.options
            options.sealedCompressionLevel = 19
            let reader = try LogReader(directory: dir.path)
            let candidates = SegmentCompaction.candidates(reader, options: options)
            #expect(candidates.count == reader.segments.filter(\.sealed).count && candidates.count >= 3)
            let compactor = try EventLog(directory: dir.path, options: options)
            for name in candidates {
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: options))
                #expect(copy.compactedBlocks * 10 < copy.originalBlocks, "\(copy)")
                #expect(try compactor.install(copy))
            }
            try compactor.close()

            let after = ReplayIndex(log: try LogReader(directory: dir.path))
            try after.refresh()
            #expect(after.lastRefresh.filesWritten == candidates.count)
            #expect(try events() == eventsBefore, "every event at its LSN, late ones where they were stored")
            #expect(try Self.rows(after) == rowsBefore)
            #expect(try ends(after) == endsBefore)
        }
    }

    @Test("late events re-derive their sessions: states at every seq, end states and analytics rows (journals and the replay fallback) equal the in-order log's")
    func lateEventsMatchInOrderLog() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let inOrder = Self.lines()
            let (late, moved) = Self.delivered(inOrder, seed: 9)
            #expect(moved > 100)
            try Self.write(inOrder, to: dir.path + "/sorted")
            try Self.write(late, to: dir.path + "/late")
            let sortedIndex = ReplayIndex(log: try LogReader(directory: dir.path + "/sorted"))
            try sortedIndex.refresh()
            let lateIndex = ReplayIndex(log: try LogReader(directory: dir.path + "/late"))
            // Several re-derivation passes per segment, as a big log with many late sessions makes.
            lateIndex.rederivedEventsPerPass = 500
            try lateIndex.refresh()
            #expect(lateIndex.log.segments.count > 3)

            let sessions = try Self.sessions(inOrder)
            let sortedSeeker = SessionSeeker(index: sortedIndex), lateSeeker = SessionSeeker(index: lateIndex)
            var random = SplitMix64(seed: 3)
            var lateSessions = 0
            var keptLateStates = 0
            for (session, sequences) in sessions {
                // From the events, sorted by seq (E4): what the sorted log gives.
                let replayed = try lateSeeker.replay(session: session, to: .end, useCheckpoints: false)
                #expect(
                    Self.json(replayed, session) == Self.json(try sortedSeeker.replay(session: session, to: .end, useCheckpoints: false), session),
                    "end of \(session)")
                if (replayed?.lateEvents ?? 0) > 0 { lateSessions += 1 }
                // Through the index (its kept end state when it has one, what analytics reads):
                // the same, a re-derived late session's included.
                #expect(Self.json(try lateSeeker.replay(session: session, to: .end), session) == Self.json(replayed, session), "indexed end of \(session)")
                let kept = lateIndex.start(session: session, for: .end)
                if (replayed?.lateEvents ?? 0) > 0 {
                    #expect(kept?.outOfOrder == true, "late \(session) is marked out of order")
                    if kept?.block == nil { keptLateStates += 1 }
                }
                for _ in 0..<3 {
                    let sequence = sequences[Int(random.next() % UInt64(sequences.count))]
                    #expect(
                        Self.json(try lateSeeker.replay(session: session, to: .sequence(sequence)), session)
                            == Self.json(try sortedSeeker.replay(session: session, to: .sequence(sequence)), session), "\(session) at seq \(sequence)")
                }
            }
            #expect(lateSessions > 10, "the late log has sessions with late events (\(lateSessions))")
            #expect(keptLateStates > 0, "some late sessions are still open, their end state kept (\(keptLateStates))")
            #expect(sortedIndex.log.eventCount == lateIndex.log.eventCount)

            let expected = try Self.rows(sortedIndex)
            let actual = try Self.rows(lateIndex)
            #expect(expected.count == actual.count, "\(expected.count) rows in order, \(actual.count) from the late log")
            if let difference = zip(expected, actual).first(where: { $0 != $1 }) {
                Issue.record("first difference:\n  in order: \(difference.0)\n  late:     \(difference.1)")
            }
            #expect(!actual.contains { $0.contains("A18") || $0.contains("A17") }, "no seq duplicate or gap reported for a late event")

            // The fallback without an index (a replay of the log) agrees too.
            var replayed = JournalScannerTests.Recorder(wantsEvents: true)
            var scanner = DerivedTableScanner(reader: try LogReader(directory: dir.path + "/late"))
            try scanner.scan(into: &replayed)
            let fallback = replayed.rows.map { $0.replacingOccurrences(of: #"lsn: (Optional\(\d+\)|nil|\d+)"#, with: "", options: .regularExpression) }.sorted()
            #expect(fallback.count == expected.count, "\(fallback.count) rows replayed from the late log, \(expected.count) in order")
            if let difference = zip(expected, fallback).first(where: { $0 != $1 }) {
                Issue.record("fallback, first difference:\n  in order: \(difference.0)\n  late:     \(difference.1)")
            }
            #expect(scanner.eventsRead == inOrder.count)

            // Reports read in parts side by side (the re-derived sessions' void records left
            // out in each part) equal the in-order log's, read in one.
            for parts in [2, 3] {
                lateIndex.workers = parts
                sortedIndex.workers = 1
                var (lateScreens, sortedScreens) = (ScreensReport(), ScreensReport())
                var (lateTransitions, sortedTransitions) = (TransitionsReport(), TransitionsReport())
                #expect(try JournalScanner(index: lateIndex).scan(into: &lateScreens) && JournalScanner(index: sortedIndex).scan(into: &sortedScreens))
                #expect(try JournalScanner(index: lateIndex).scan(into: &lateTransitions) && JournalScanner(index: sortedIndex).scan(into: &sortedTransitions))
                #expect(!lateScreens.rows.isEmpty && lateScreens.rows == sortedScreens.rows, "screens in \(parts) parts")
                #expect(lateTransitions.rows == sortedTransitions.rows, "transitions in \(parts) parts")
            }
        }
    }

    @Test("an index extended as the late log grows equals one built from scratch")
    func incrementalEqualsScratch() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let (late, _) = Self.delivered(Self.lines(), seed: 12)
            let path = dir.path + "/late"
            // The first 60%, indexed; then the rest appended (late events among it reach back
            // into sessions the first build already journaled) and the index refreshed.
            try Self.write(Array(late[..<5_400]), to: path)
            try ReplayIndex(log: try LogReader(directory: path)).refresh()
            let log = try EventLog(directory: path, options: Self.options)
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in late[5_400...].enumerated() {
                _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
            }
            _ = try log.append(batch)
            try log.close()
            let grown = ReplayIndex(log: try LogReader(directory: path))
            try grown.refresh()
            #expect(grown.lastRefresh.eventsReplayed < late.count, "only new blocks were replayed")
            let scratch = ReplayIndex(log: try LogReader(directory: path), directory: dir.path + "/scratch")
            try scratch.refresh()
            #expect(scratch.lastRefresh.eventsReplayed == late.count)
            #expect(try Self.rows(grown) == Self.rows(scratch))
            for (session, _) in try Self.sessions(late) {
                #expect(
                    Self.json(try SessionSeeker(index: grown).replay(session: session, to: .end), session)
                        == Self.json(try SessionSeeker(index: scratch).replay(session: session, to: .end), session),
                    "end of \(session)")
                #expect(grown.start(session: session, for: .end)?.outOfOrder == scratch.start(session: session, for: .end)?.outOfOrder)
            }
        }
    }

    @Test(
        "an index built by 1, 2 or 4 workers (each the sessions of one id-hash residue), fresh or extended, gives the same analytics rows and states, late events included (one-frame blocks, and grouped blocks each worker reads its groups of)",
        arguments: [false, true])
    func workersAgree(grouped: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = Self.options
            var lines = Self.lines()
            if grouped {
                // Production's shape in blocks of 4,096 events in 8 groups.
                var configuration = WorkloadConfiguration.production(seed: 45)
                configuration.concurrentSessions = 200
                var generator = WorkloadGenerator(configuration)
                lines = generator.lines(8_000)
                options.maximumEventsPerBlock = 4_096
                options.maximumSegmentBytes = 16 << 10
                options.eventsPerSessionGroup = 512
            }
            let (late, moved) = Self.delivered(lines, seed: 21)
            #expect(moved > 100)
            let path = dir.path + "/late"
            let split = late.count * 3 / 5
            try EventLog(directory: path, options: options).close()
            func append(_ part: ArraySlice<[UInt8]>) throws {
                let log = try EventLog(directory: path, options: options)
                var parser = EventLineParser()
                var batch = EventBatch()
                for (number, line) in part.enumerated() {
                    _ = try line.withUnsafeBytes { try parser.parse($0, lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch) }
                    if batch.count == (grouped ? 4_096 : 97) {
                        _ = try log.append(batch)
                        _ = try log.flush()
                        batch.removeAll()
                    }
                }
                if !batch.isEmpty { _ = try log.append(batch) }
                try log.close()
            }
            // The same log each time, so the same LSNs: plain JSON and rows.
            func json(_ state: SessionReplayer?, _ session: String) -> String {
                guard let state else { return "nil" }
                var bytes: [UInt8] = []
                state.appendJSON(session: session, to: &bytes)
                return String(decoding: bytes, as: UTF8.self)
            }
            func rows(_ index: ReplayIndex) throws -> [String] {
                var recorder = JournalScannerTests.Recorder(wantsEvents: true)
                #expect(try JournalScanner(index: index).scan(into: &recorder))
                return recorder.rows.sorted()
            }
            func index(_ name: String, workers: Int) throws -> ReplayIndex {
                let index = ReplayIndex(log: try LogReader(directory: path), directory: dir.path + "/" + name)
                index.workers = workers
                index.checkpointInterval = 16
                try index.refresh()
                return index
            }
            // The first 60% indexed by 4 workers, then extended by 2 (late events among the rest
            // reach back into sessions the first build journaled)…
            try append(late[..<split])
            _ = try index("extended", workers: 4)
            try append(late[split...])
            let extended = try index("extended", workers: 2)
            #expect(extended.lastRefresh.eventsReplayed < late.count, "only new blocks were replayed")
            if grouped {
                let reader = try LogReader(directory: path)
                #expect(reader.segments.count >= 2)
                var decoded = DecodedBlock()
                #expect(try reader.readBlock(segment: 0, block: 0, into: &decoded))
                #expect(decoded.groupCount == 8)
            }
            // …equals builds from scratch by 1, 2 and 4 workers.
            let one = try index("one", workers: 1)
            #expect(one.lastRefresh.eventsReplayed == late.count)
            let expectedRows = try rows(one)
            #expect(expectedRows.count > late.count)
            // States at the end of every third session, and at two points of every sixth
            // (through checkpoints), as the index of one worker gives them.
            let sessions = try Self.sessions(late).enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
            var random = SplitMix64(seed: 3)
            let expectedSeeker = SessionSeeker(index: one)
            var expected: [(session: String, targets: [ReplayTarget], states: [String], outOfOrder: Bool?)] = []
            for (number, (session, sequences)) in sessions.enumerated() {
                var targets: [ReplayTarget] = [.end]
                if number % 2 == 0 { targets += (0..<2).map { _ in .index(Int(random.next() % UInt64(sequences.count))) } }
                let states = try targets.map { json(try expectedSeeker.replay(session: session, to: $0), session) }
                expected.append((session, targets, states, one.start(session: session, for: .end)?.outOfOrder))
            }
            for (name, other) in [("extended by 2", extended), ("2", try index("two", workers: 2)), ("4", try index("four", workers: 4))] {
                if name != "extended by 2" { #expect(other.lastRefresh.eventsReplayed == late.count) }
                #expect(try rows(other) == expectedRows, "rows of the index built by \(name) workers")
                let seeker = SessionSeeker(index: other)
                for (session, targets, states, outOfOrder) in expected {
                    for (target, state) in zip(targets, states) {
                        #expect(json(try seeker.replay(session: session, to: target), session) == state, "\(session) at \(target), \(name) workers")
                    }
                    #expect(other.start(session: session, for: .end)?.outOfOrder == outOfOrder)
                }
            }
        }
    }
}
