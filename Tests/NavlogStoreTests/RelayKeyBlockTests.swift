import Foundation
import NavlogEvents
import NavlogTesting
import Testing

@testable import NavlogStore

/// Relay keys in the block's peer table (payload versions 5 and 6): written only for blocks
/// that hold a relayed event, read back per event, kept by compaction.
@Suite("relay keys in blocks")
struct RelayKeyBlockTests {
    static let keys = [RelayKey.none, RelayKey("ios-prod")!, RelayKey("android.beta_2")!]

    /// `lines` parsed with the key `key(index)` for each event.
    static func batch(_ lines: [[UInt8]], key: (Int) -> RelayKey) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (index, line) in lines.enumerated() {
            let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 4242, relayKey: key(index))
            _ = line.withUnsafeBytes { raw in
                try! parser.parse(raw, lineNumber: index + 1, receivedAt: 1_763_720_000_000_000 + Int64(index), peer: peer, into: &batch)
            }
        }
        return batch
    }

    @Test(
        "a block without a relayed event keeps payload version 2 (grouped: 4); one with a relayed event is 5 (6), each event read back with its own key",
        arguments: [false, true])
    func versionsAndKeys(grouped: Bool) throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = LogOptions()
            options.maximumEventsPerBlock = 64
            options.eventsPerSessionGroup = grouped ? 16 : .max
            // Blocks 0 and 1: no key; 2 and 3: keys changing every 5 events; 4: one relayed event.
            let lines = StoreFixture.lines(320, seed: 11)
            func key(_ index: Int) -> RelayKey {
                switch index {
                case ..<128: .none
                case ..<256: Self.keys[(index / 5) % 3]
                default: index == 300 ? Self.keys[1] : .none
                }
            }
            let log = try EventLog(directory: dir.path, options: options)
            _ = try log.append(Self.batch(lines, key: key))
            try log.close()

            let reader = try LogReader(directory: dir.path)
            var versions: [UInt8] = []
            var position = 0
            try reader.scan(LogQuery()) { block, index in
                if index == 0 {
                    versions.append(block.payload[0])
                    #expect((block.groupCount > 0) == grouped)
                }
                #expect(block.peers[Int(block.peerIndexes[index])].relayKey == key(position), "event \(position)")
                position += 1
                return true
            }
            #expect(position == lines.count)
            #expect(versions == (grouped ? [4, 4, 6, 6, 6] : [2, 2, 5, 5, 5]))
            // The blocks without a relayed event are exactly what a log without relays holds.
            let plain = dir.appendingPathComponent("plain").path
            let plainLog = try EventLog(directory: plain, options: options)
            _ = try plainLog.append(Self.batch(Array(lines[..<128])) { _ in .none })
            try plainLog.close()
            let ours = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/" + SegmentName.segment(1)))
            let theirs = try Data(contentsOf: URL(fileURLWithPath: plain + "/" + SegmentName.segment(1)))
            #expect(ours.prefix(theirs.count) == theirs, "the first two blocks are byte for byte a relay-free log's")
        }
    }

    @Test("cat prints _key after _pid for a keyed event only; ingesting that output takes no key from it")
    func catAndIngest() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path, options: StoreFixture.smallOptions)
            _ = try log.append(Self.batch(StoreFixture.lines(10, seed: 3)) { Self.keys[$0 % 2] })
            try log.close()
            let lines = try StoreFixture.catLines(dir.path).lines
            for (index, line) in lines.enumerated() {
                #expect(line.hasSuffix(index % 2 == 1 ? #""_pid":4242,"_key":"ios-prod"}"# : #""_pid":4242}"#), "\(line)")
            }
            // The printed lines parse again as events; the trusted fields, _key included, are ignored.
            var parser = EventLineParser()
            var batch = EventBatch()
            for line in lines {
                #expect(try parser.parse(line, into: &batch) == .event)
            }
            #expect(batch.headers.allSatisfy { $0.peer.relayKey == .none })
        }
    }

    @Test("compaction writes relayed events again with their keys: the same cat output")
    func compactionKeepsKeys() throws {
        try TestEnvironment.withTemporaryDirectory { dir in
            var options = LogOptions()
            options.maximumEventsPerBlock = 4
            options.maximumSegmentBytes = 16 << 10
            options.eventsPerSessionGroup = 16
            let log = try EventLog(directory: dir.path, options: options)
            let lines = StoreFixture.lines(1200, seed: 5)
            _ = try log.append(Self.batch(lines) { Self.keys[($0 / 3) % 3] })
            try log.seal()
            try log.close()
            let before = try StoreFixture.catLines(dir.path).lines
            #expect(before.filter { $0.contains(#""_key":"android.beta_2""#) }.count == 399)
            let reader = try LogReader(directory: dir.path)
            var compaction = LogOptions()
            compaction.eventsPerSessionGroup = 16
            let candidates = SegmentCompaction.candidates(reader, options: compaction)
            #expect(!candidates.isEmpty)
            let writer = try EventLog(directory: dir.path, options: compaction)
            for name in candidates {
                let copy = try #require(try SegmentCompaction.writeCopy(of: name, reader: reader, options: compaction))
                #expect(try writer.install(copy))
            }
            try writer.close()
            let after = try StoreFixture.catLines(dir.path)
            #expect(after.damage.isEmpty)
            #expect(after.lines == before)
            var grouped = false
            try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                if index == 0 && block.groupCount > 0 {
                    grouped = true
                    #expect(block.payload[0] == BlockEncoder.relayedGroupedPayloadVersion)
                }
                return true
            }
            #expect(grouped, "compaction wrote grouped blocks")
            #expect(try LogVerifier.verify(directory: dir.path).isClean)
        }
    }
}
