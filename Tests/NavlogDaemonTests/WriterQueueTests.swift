import NavlogEvents
import Testing

@testable import NavlogDaemon

/// The writer's rounds (issue 18, fair under floods; issue 34, under bursts): a connection that
/// sends a few events is served first in the next round however much other connections have
/// queued before it, a round is bounded however many connections wait, a connection that fell
/// behind is not starved by light ones, and each connection's batches are taken in the order
/// it sent them.
@Suite("Writer queue rounds")
struct WriterQueueTests {
    /// A batch of `events` events of about 400 bytes each, from `connection`, tagged `tag` in its session id.
    static func request(_ connection: ConnectionOrder, tag: String, events: Int) throws -> WriteRequest {
        var parser = EventLineParser()
        var batch = EventBatch()
        let padding = String(repeating: "x", count: 330)
        for number in 0..<events {
            let line = #"{"type":"mark","session":"\#(tag)","seq":\#(number),"ts":1,"name":"\#(padding)"}"#
            var bytes = Array(line.utf8)
            _ = try bytes.withUnsafeMutableBytes {
                try parser.parse(UnsafeRawBufferPointer($0), lineNumber: number + 1, receivedAt: 1, peer: PeerCredentials(uid: 0, gid: 0, pid: 0), into: &batch)
            }
        }
        return WriteRequest(batch: batch, ack: .batch, order: connection) { _ in }
    }

    static func tag(_ request: WriteRequest) -> String { request.batch.withSession(of: 0) { String(decoding: $0, as: UTF8.self) } }

    @Test("a quiet connection's batch, queued behind a flood, goes first in the first round; a flooder's batches keep their order")
    func quietConnectionServedNextRound() throws {
        let flooder = ConnectionOrder(), other = ConnectionOrder(), quiet = ConnectionOrder()
        var queue = WriterQueue()
        // 40 batches of ~40 KB from the flooder, 10 from another, then one small batch.
        for number in 0..<40 { queue.append(try Self.request(flooder, tag: "f\(number)", events: 100)) }
        for number in 0..<10 { queue.append(try Self.request(other, tag: "o\(number)", events: 100)) }
        queue.append(try Self.request(quiet, tag: "q", events: 1))
        let totalEvents = 40 * 100 + 10 * 100 + 1
        #expect(queue.events == totalEvents)
        let first = queue.takeRound()
        // The quiet (light) one first; then 64 KiB a connection a round: two ~40 KB batches
        // each (the second crosses the quantum).
        #expect(first.map(Self.tag) == ["q", "f0", "f1", "o0", "o1"])
        var order: [String] = first.map(Self.tag)
        var rounds = 1
        while !queue.isEmpty {
            order += queue.takeRound().map(Self.tag)
            rounds += 1
        }
        #expect(queue.events == 0 && queue.bytes == 0)
        #expect(order.filter { $0.hasPrefix("f") } == (0..<40).map { "f\($0)" }, "the flooder's batches in the order sent")
        #expect(order.filter { $0.hasPrefix("o") } == (0..<10).map { "o\($0)" })
        #expect(rounds == 20)
    }

    @Test("with rounds off (writerRoundBytes 0) the whole queue is taken at once, in arrival order")
    func wholeQueue() throws {
        let flooder = ConnectionOrder(), quiet = ConnectionOrder()
        var queue = WriterQueue()
        queue.roundBytes = .max
        for number in 0..<5 { queue.append(try Self.request(flooder, tag: "f\(number)", events: 100)) }
        queue.append(try Self.request(quiet, tag: "q", events: 1))
        #expect(queue.takeRound().map(Self.tag) == ["f0", "f1", "f2", "f3", "f4", "q"])
        #expect(queue.isEmpty && queue.bytes == 0)
    }

    @Test("a round is bounded however many connections wait (writerRoundLimitBytes), and the next goes on where it stopped; a quiet batch goes in the next round")
    func boundedRounds() throws {
        var queue = WriterQueue()
        queue.roundLimitBytes = 256 << 10
        let streamers = (0..<200).map { _ in ConnectionOrder() }
        // ~20 KB each: more than a light flow holds.
        for (number, streamer) in streamers.enumerated() { queue.append(try Self.request(streamer, tag: "s\(number)", events: 50)) }
        let size = try Self.request(streamers[0], tag: "x", events: 50).memoryBytes
        let first = queue.takeRound()
        #expect(first.count == (256 << 10) / size + 1, "turns until the round holds its limit: \(first.count) of \(size) bytes")
        #expect(first.map(Self.tag) == (0..<first.count).map { "s\($0)" })
        let quiet = ConnectionOrder()
        queue.append(try Self.request(quiet, tag: "q", events: 1))
        let second = queue.takeRound()
        #expect(second.first.map(Self.tag) == "q", "the quiet batch first in the next round")
        #expect(second.dropFirst().first.map(Self.tag) == "s\(first.count)", "the rotation goes on where the first round stopped")
        var taken = first.count + second.count
        while !queue.isEmpty { taken += queue.takeRound().count }
        #expect(taken == 201 && queue.events == 0 && queue.bytes == 0)
    }

    @Test("a connection that fell behind gets turns while light batches keep coming")
    func backloggedNotStarved() throws {
        var queue = WriterQueue()
        // Light flows may take the round but for one backlogged turn (16 KiB: one batch).
        queue.roundLimitBytes = 32 << 10
        queue.roundBytes = 16 << 10
        let behind = ConnectionOrder()
        for number in 0..<6 { queue.append(try Self.request(behind, tag: "b\(number)", events: 50)) }
        var lightNumber = 0
        var order: [String] = []
        for _ in 0..<12 {
            // More light batches each round than a round takes.
            for _ in 0..<60 {
                queue.append(try Self.request(ConnectionOrder(), tag: "l\(lightNumber)", events: 1))
                lightNumber += 1
            }
            order += queue.takeRound().map(Self.tag).filter { $0.hasPrefix("b") }
        }
        #expect(order == (0..<6).map { "b\($0)" }, "each round takes one of its batches: \(order)")
    }
}
