import NavlogEvents
import Testing

@testable import NavlogDaemon

/// The writer's rounds (issue 18, fair under floods): a connection that sends one batch is
/// served in the next round however much a flooding connection has queued before it, and each
/// connection's batches are taken in the order it sent them.
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

    @Test("a quiet connection's batch, queued behind a flood, goes in the first round; a flooder's batches keep their order")
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
        #expect(first.contains { Self.tag($0) == "q" }, "the quiet connection's batch is in the first round")
        // 64 KiB a connection a round: two ~40 KB batches each (the second crosses the quantum).
        #expect(first.map(Self.tag) == ["f0", "f1", "o0", "o1", "q"])
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
}
