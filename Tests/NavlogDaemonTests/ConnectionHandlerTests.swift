import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NavlogEvents
import NavlogStore
import Testing

@testable import NavlogDaemon

/// One client connection as the socket's user sees it (events.md "Transport", README "The
/// daemon"), in process on an `EmbeddedChannel`: the test plays the client (the bytes of each
/// read, a half-close, not reading replies) and the writer (when a batch is taken and what the
/// writer says of it), so every step happens when the test says and on the test's thread.
///
/// The tests are synchronous on purpose: an `EmbeddedChannel` may only be used from the thread
/// that made it, and an `async` test may resume on another thread after any `await`.
@Suite("A connection to navlogd, in process")
struct ConnectionHandlerTests {
    // MARK: - Framing

    @Test("lines split anywhere across reads, even inside a UTF-8 character, are framed whole and numbered from 1 (the hello included)")
    func linesSplitAcrossReads() throws {
        let connection = try TestConnection()
        let hello = Lines.hello(ack: "batch")
        let first = Lines.mark(seq: 1, name: "café")
        let second = Lines.mark(seq: 2)
        let bytes = Array((hello + first + second).utf8)
        // Cut inside the hello, between é's two bytes, just before a newline and just after one.
        let accent = try #require(bytes.firstIndex(of: 0xC3))
        let cuts = [10, accent + 1, hello.utf8.count + first.utf8.count - 1, hello.utf8.count + first.utf8.count]
        var start = 0
        for cut in cuts + [bytes.count] {
            try connection.send(Array(bytes[start..<cut]))
            start = cut
        }
        #expect(connection.events.map(\.line) == [2, 3])
        #expect(connection.events.map(\.seq) == [1, 2])
        #expect(connection.events.map(\.session) == ["s", "s"])
        #expect(try connection.replies().isEmpty, "nothing is rejected, and nothing is acknowledged before the writer says so")
        // Every line up to the last one handed over is acknowledged once the writer is done.
        connection.writer.completeAll { request in .stored(request.batch.count, firstLSN: 1) }
        connection.runEventLoop()
        // The hello is handled (acknowledged) once it is complete, each event line once it is.
        let acks = try connection.replies()
        #expect(acks.map(\.ack) == [1, 2, 3])
        #expect(acks.last == Reply.ack(3, stored: 1, lsns: [1, 1], durable: false))
    }

    @Test("several lines in one read are one batch, handed to the writer once; its ack names the last line")
    func severalLinesInOneRead() throws {
        let connection = try TestConnection()
        try connection.send(Lines.hello(ack: "batch") + Lines.mark(seq: 1) + Lines.mark(seq: 2) + Lines.mark(seq: 3))
        #expect(connection.writer.submitted.count == 1)
        #expect(connection.writer.submitted.first?.batch.count == 3)
        #expect(connection.events.map(\.line) == [2, 3, 4])
        connection.writer.completeAll { _ in .stored(3, firstLSN: 100) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(4, stored: 3, lsns: [100, 102], durable: false)])
    }

    @Test("a line over maximumLineBytes is rejected as too-long, once, whether it came in one read or several; the lines after it are stored")
    func lineOverTheLimit() throws {
        var configuration = TestConnection.configuration()
        configuration.maximumLineBytes = 200
        let connection = try TestConnection(configuration: configuration)
        let long = Lines.mark(seq: 2, name: String(repeating: "x", count: 300))
        try connection.send(Lines.mark(seq: 1) + long + Lines.mark(seq: 3))
        // The same too-long line again, this time in three reads.
        let again = Array(Lines.mark(seq: 4, name: String(repeating: "y", count: 300)).utf8)
        try connection.send(Array(again[0..<150]))
        try connection.send(Array(again[150..<250]))
        try connection.send(Array(again[250...]) + Array(Lines.mark(seq: 5).utf8))
        let replies = try connection.replies()
        #expect(replies.count == 2)
        #expect(replies.first?.isRejection(line: 2, code: "too-long") == true)
        #expect(replies.last?.isRejection(line: 4, code: "too-long") == true)
        #expect(replies.first?.reason?.contains("200") == true, "the reason names the limit")
        #expect(connection.events.map(\.seq) == [1, 3, 5])
        #expect(connection.events.map(\.line) == [1, 3, 5])
        #expect(connection.statistics.snapshot().rejected == ["too-long": 2])
    }

    @Test("half-close: a last line without its newline is not an event; the acks still go out, then navlogd closes")
    func halfCloseDropsUnterminatedLine() throws {
        let connection = try TestConnection()
        let unterminated = String(Lines.mark(seq: 2).dropLast())
        try connection.send(Lines.hello(ack: "durable") + Lines.mark(seq: 1) + unterminated)
        connection.closeInput()
        #expect(connection.events.map(\.seq) == [1], "the unterminated line is not stored")
        #expect(connection.channel.isActive, "open until the writer has answered")
        connection.writer.completeAll { _ in .stored(1, firstLSN: 9) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(2, stored: 1, lsns: [9, 9], durable: true)])
        #expect(!connection.channel.isActive, "closed after the last ack")
        #expect(connection.statistics.snapshot().rejected.isEmpty, "an unterminated last line is not reported either")
        #expect(connection.statistics.snapshot().connections == 0)
    }

    // MARK: - Hello and acknowledgements

    @Test("without a hello nothing is acknowledged, but rejections are still reported")
    func noHelloNoAcks() throws {
        let connection = try TestConnection()
        try connection.send(Lines.mark(seq: 1) + "{\"type\":\"mark\"\n")
        #expect(connection.writer.submitted.first?.ack == HelloLine.AckMode.none)
        connection.writer.completeAll { _ in .stored(1, firstLSN: 1) }
        connection.runEventLoop()
        let replies = try connection.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.isRejection(line: 2, code: "json") == true)
    }

    @Test("ack batch: the writer is asked for batch acks, and the ack comes only after it says the events are stored")
    func batchAcks() throws {
        let connection = try TestConnection()
        try connection.send(Lines.hello(ack: "batch") + Lines.mark(seq: 1) + Lines.mark(seq: 2))
        #expect(connection.writer.submitted.map(\.ack) == [.batch])
        connection.runEventLoop()
        #expect(try connection.replies().isEmpty)
        connection.writer.completeAll { _ in .stored(2, firstLSN: 41) }
        #expect(try connection.replies().isEmpty, "the ack is written on the connection's event loop, not the writer's thread")
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(3, stored: 2, lsns: [41, 42], durable: false)])
    }

    @Test("ack durable: the writer is asked to fsync, and the ack says durable; resent events count as duplicates")
    func durableAcks() throws {
        let connection = try TestConnection()
        try connection.send(Lines.hello(ack: "durable") + Lines.mark(seq: 1) + Lines.mark(seq: 2))
        #expect(connection.writer.submitted.map(\.ack) == [.durable])
        connection.writer.completeAll { _ in WriteOutcome(lsns: 7..<8, stored: 1, duplicates: 1) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(3, stored: 1, duplicates: 1, lsns: [7, 7], durable: true)])
        // A batch of resends only: nothing stored, so no LSNs (schemas/daemon-reply.schema.json).
        try connection.send(Lines.mark(seq: 1) + Lines.mark(seq: 2))
        connection.writer.completeAll { _ in WriteOutcome(lsns: 8..<8, stored: 0, duplicates: 2) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(5, stored: 0, duplicates: 2, lsns: nil, durable: true)])
    }

    @Test("a hello alone is acknowledged as handled; a hello after the first line is rejected and changes nothing")
    func helloOnlyFirst() throws {
        let connection = try TestConnection()
        try connection.send(Lines.hello(ack: "batch"))
        #expect(connection.writer.submitted.count == 1 && connection.writer.submitted[0].batch.isEmpty)
        connection.writer.completeAll { _ in .stored(0, firstLSN: 1) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(1, stored: 0, lsns: nil, durable: false)])

        let late = try TestConnection()
        try late.send(Lines.mark(seq: 1) + Lines.hello(ack: "durable") + Lines.mark(seq: 2))
        let replies = try late.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.isRejection(line: 2, code: "unknown-field", field: "hello") == true)
        #expect(late.writer.submitted.map(\.ack) == [HelloLine.AckMode.none], "the late hello did not turn acks on")
        late.writer.completeAll { _ in .stored(2, firstLSN: 1) }
        late.runEventLoop()
        #expect(try late.replies().isEmpty)
    }

    // MARK: - Rejected lines

    @Test("each bad line gets a rejection naming its line, code and field, before the ack; the lines around it are stored and the connection goes on")
    func rejectionsKeepTheConnection() throws {
        let connection = try TestConnection()
        try connection.send(
            Lines.hello(ack: "batch") + Lines.mark(seq: 1) + "not json\n" + #"{"type":"teleport","session":"s","seq":2}"# + "\n"
                + #"{"type":"nav.push","session":"s","seq":3,"nav":"n","vc":{"id":"a","class":7}}"# + "\n" + Lines.mark(seq: 4))
        let rejections = try connection.replies()
        #expect(rejections.count == 3)
        #expect(rejections[0].isRejection(line: 3, code: "json"))
        #expect(rejections[1].isRejection(line: 4, code: "unknown-type", field: "type"))
        #expect(rejections[2].isRejection(line: 5, code: "type", field: "vc.class"))
        #expect(rejections.allSatisfy { !($0.reason ?? "").isEmpty })
        #expect(connection.events.map(\.line) == [2, 6])
        connection.writer.completeAll { _ in .stored(2, firstLSN: 1) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(6, stored: 2, lsns: [1, 2], durable: false)], "every line up to 6 is handled")
        // Still usable.
        try connection.send(Lines.mark(seq: 5))
        #expect(connection.events.map(\.line) == [2, 6, 7])
        #expect(connection.statistics.snapshot().rejected == ["json": 1, "unknown-type": 1, "type": 1])
    }

    @Test("control: stats is answered with the daemon's reply; an unknown request is rejected (enum, field control)")
    func controlRequests() throws {
        let connection = try TestConnection(control: { name in name == "stats" ? ByteBuffer(string: "{\"connections\":1}\n") : nil })
        try connection.send(#"{"control":"stats"}"# + "\n" + #"{"control":"reboot"}"# + "\n")
        let lines = try connection.replyLines()
        #expect(lines.first == "{\"connections\":1}")
        let rejection = try #require(lines.last.map(Reply.init))
        #expect(rejection.isRejection(line: 2, code: "enum", field: "control"))
        #expect(connection.writer.submitted.isEmpty, "control lines are no events")
    }

    @Test("the rate limit drops events over the burst and says how many, and counts them")
    func rateLimit() throws {
        var configuration = TestConnection.configuration()
        configuration.rateLimitIntervalSeconds = 3600
        configuration.rateLimitBurst = 2
        let connection = try TestConnection(configuration: configuration)
        try connection.send((1...4).map { Lines.mark(seq: $0) }.joined())
        #expect(connection.events.map(\.seq) == [1, 2])
        let warning = try #require(try connection.replies().first)
        #expect(warning.warning == "rate-limited" && warning.suppressed == 2 && warning.line == 4)
        #expect(connection.statistics.snapshot().rateLimited == 2)
    }

    // MARK: - Trusted fields and relays

    @Test("lines read before the peer's credentials are known wait for them, and every event carries them")
    func credentialsBeforeLines() throws {
        let connection = try TestConnection(identifiedLater: true)
        try connection.send(Lines.mark(seq: 1) + Lines.mark(seq: 2))
        #expect(connection.writer.submitted.isEmpty, "not handed over before the peer is known")
        connection.identify(PeerCredentials(uid: 501, gid: 20, pid: 77))
        #expect(connection.events.map(\.seq) == [1, 2])
        #expect(connection.events.map(\.peer) == Array(repeating: PeerCredentials(uid: 501, gid: 20, pid: 77), count: 2))
    }

    @Test("a trusted relay's key is carried by the events after it until cleared; a keyed event without seq is rejected")
    func trustedRelay() throws {
        var configuration = TestConnection.configuration()
        configuration.relayGIDs = [555]
        // Trusted through a supplementary group, as the README's set-up does.
        let connection = try TestConnection(configuration: configuration, supplementaryGroups: [555])
        try connection.send(
            Lines.hello(ack: "batch") + #"{"relay":"ios-prod"}"# + "\n" + Lines.mark(seq: 1) + #"{"type":"mark","session":"s","name":"n"}"# + "\n"
                + #"{"relay":null}"# + "\n" + #"{"type":"mark","session":"s","name":"n"}"# + "\n")
        let replies = try connection.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.isRejection(line: 4, code: "missing", field: "seq") == true)
        #expect(connection.events.map(\.line) == [3, 6])
        #expect(connection.events.map(\.key) == ["ios-prod", nil])
        connection.writer.completeAll { _ in .stored(2, firstLSN: 1) }
        connection.runEventLoop()
        #expect(try connection.replies() == [Reply.ack(6, stored: 2, lsns: [1, 2], durable: false)], "relay lines are numbered and acknowledged like any other")
    }

    @Test("a relay line from a peer not trusted to relay is rejected (forbidden, field relay); its events are stored without a key")
    func untrustedRelay() throws {
        let connection = try TestConnection()
        try connection.send(#"{"relay":"ios-prod"}"# + "\n" + Lines.mark(seq: 1))
        let rejection = try #require(try connection.replies().first)
        #expect(rejection.isRejection(line: 1, code: "forbidden", field: "relay"))
        #expect(rejection.reason?.contains("relayUIDs") == true, "the reason names the settings")
        #expect(connection.events.map(\.key) == [nil])
    }

    @Test("a malformed key id is rejected and clears the key set before it")
    func malformedRelayKey() throws {
        var configuration = TestConnection.configuration()
        configuration.relayUIDs = [TestConnection.peer.uid]
        let connection = try TestConnection(configuration: configuration)
        try connection.send(#"{"relay":"ios-prod"}"# + "\n" + Lines.mark(seq: 1) + #"{"relay":"no spaces"}"# + "\n" + Lines.mark(seq: 2))
        #expect(try connection.replies().first?.isRejection(line: 3, code: "pattern", field: "relay") == true)
        #expect(connection.events.map(\.key) == ["ios-prod", nil])
    }

    // MARK: - Refusals and store failures

    @Test("a peer outside allowedUIDs and allowedGIDs is refused with a reason and the connection closed; nothing it sent is handed over")
    func peerNotAllowed() throws {
        var configuration = TestConnection.configuration()
        configuration.allowedUIDs = [0]
        let connection = try TestConnection(configuration: configuration, identifiedLater: true)
        try connection.send(Lines.mark(seq: 1))
        connection.identify(TestConnection.peer)
        let replies = try connection.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.error == "refused")
        #expect(replies.first?.reason?.contains("allowedUIDs") == true)
        #expect(!connection.channel.isActive)
        #expect(connection.writer.submitted.isEmpty)
        #expect(connection.statistics.snapshot().refused == 1)
    }

    @Test("a batch the writer could not store gets a store error naming its last line, and the connection is closed")
    func storeFailure() throws {
        let connection = try TestConnection()
        try connection.send(Lines.hello(ack: "durable") + Lines.mark(seq: 1) + Lines.mark(seq: 2))
        connection.writer.completeAll { _ in
            WriteOutcome(lsns: 1..<1, stored: 0, duplicates: 0, failure: StoreError(code: .io, message: "No space left on device."))
        }
        connection.runEventLoop()
        let replies = try connection.replies()
        #expect(replies.count == 1)
        #expect(replies.first?.error == "store" && replies.first?.line == 3 && replies.first?.stored == 0)
        #expect(replies.first?.reason == "No space left on device.")
        #expect(!connection.channel.isActive, "the client reconnects and resends in order")
    }

    // MARK: - Backpressure

    /// 40 marks of ~500 bytes from seq `first` on, one batch of ~20 KB: more than a light
    /// connection holds (``ConnectionHandler/lightConnectionBytes``), so the limits apply.
    static func heavy(_ first: Int) -> String {
        (first..<(first + 40)).map { Lines.mark(seq: $0, name: String(repeating: "s", count: 400)) }.joined()
    }

    /// 2 pending batches, a 1 MiB writer queue and a 2 MiB daemon-wide budget: limits that a
    /// test's few batches and the writer's other connections (``ScriptedWriter/otherConnectionsBytes``) reach.
    static func smallLimits() -> DaemonConfiguration {
        var configuration = TestConnection.configuration()
        configuration.maximumPendingBatchesPerConnection = 2
        configuration.writerQueueBytes = 1 << 20
        configuration.maximumQueuedBytes = 2 << 20
        return configuration
    }

    @Test("with maximumPendingBatchesPerConnection batches in the writer and its queue at writerQueueBytes, reading stops until a batch completes")
    func pausedWhileWriterBehind() throws {
        var configuration = TestConnection.configuration()
        configuration.maximumPendingBatchesPerConnection = 2
        configuration.writerQueueBytes = 1 << 20
        // Its lines ask no acks: with unacknowledgedQueueBytes 0 it has the limits of one that does.
        configuration.unacknowledgedQueueBytes = 0
        let connection = try TestConnection(configuration: configuration)
        // Under writerQueueBytes, more batches than the limit are still read.
        for batch in 0..<3 { try connection.send(Self.heavy(batch * 40 + 1)) }
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 0)
        connection.writer.completeAll { request in .stored(request.batch.count, firstLSN: 1) }
        connection.runEventLoop()
        // Other connections fill the writer's queue: this one may still hand over 2 batches.
        connection.writer.otherConnectionsBytes = 1 << 20
        try connection.send(Self.heavy(121))
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 0)
        try connection.send(Self.heavy(161))
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1, "stopped reading at its second pending batch")
        #expect(connection.reads.count == 0)
        connection.writer.completeFirst { _ in .stored(40, firstLSN: 121) }
        connection.runEventLoop()
        #expect(connection.reads.count == 1, "reads again once one of its batches is done")
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1)
    }

    @Test("a connection holding its share of maximumQueuedBytes (the budget over the open connections) in the writer stops reading until the writer is done with it")
    func pausedAtItsShareOfTheBudget() throws {
        var configuration = TestConnection.configuration()
        configuration.maximumQueuedBytes = 64 << 10
        configuration.unacknowledgedQueueBytes = 0
        let budget = SharedReadBudget(budget: configuration.maximumQueuedBytes)
        for _ in 0..<4 { budget.opened() }
        // 64 KiB over 4 connections: 16 KiB each.
        let connection = try TestConnection(configuration: configuration, readBudget: budget)
        try connection.send((1...40).map { Lines.mark(seq: $0, name: String(repeating: "s", count: 400)) }.joined())
        let held = try #require(connection.writer.submitted.first?.memoryBytes)
        #expect(held >= 16 << 10 && held < 64 << 10, "one batch over its share, far under the whole budget")
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1)
        #expect(connection.reads.count == 0)
        connection.writer.completeAll { request in .stored(request.batch.count, firstLSN: 1) }
        connection.runEventLoop()
        #expect(connection.reads.count == 1)

        // 64 connections: 1 KiB each, but a connection may always hold 16 KiB.
        for _ in 0..<60 { budget.opened() }
        try connection.send((41...50).map { Lines.mark(seq: $0, name: String(repeating: "s", count: 400)) }.joined())
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1, "10 events of ~500 bytes are under the 16 KiB floor")
    }

    @Test("when the writer's queue reaches maximumQueuedBytes, a connection hands over one batch, stops reading, and reads again as soon as the writer takes the queue")
    func pausedAtTheDaemonWideBudget() throws {
        var configuration = TestConnection.configuration()
        configuration.maximumQueuedBytes = 64 << 10
        configuration.unacknowledgedQueueBytes = 0
        let connection = try TestConnection(configuration: configuration)
        connection.writer.otherConnectionsBytes = 64 << 10
        try connection.send(Self.heavy(1))
        #expect(connection.writer.submitted.count == 1, "a connection with nothing queued may always hand over one batch")
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1)
        #expect(connection.reads.count == 0)
        connection.writer.takeQueue()
        connection.runEventLoop()
        #expect(connection.reads.count == 1, "woken by the room in the queue, before its own batch is stored")
        #expect(connection.writer.incomplete == 1)
    }

    @Test(
        "a connection that asks no acks reads on past writerQueueBytes and maximumQueuedBytes while the queue holds less than unacknowledgedQueueBytes (the writer may be sealing a block); one that asks acks stops at maximumQueuedBytes"
    )
    func unacknowledgedReadsOnWhileTheWriterSeals() throws {
        var configuration = Self.smallLimits()
        configuration.unacknowledgedQueueBytes = 16 << 20
        let connection = try TestConnection(configuration: configuration)
        connection.writer.otherConnectionsBytes = 4 << 20
        for batch in 0..<5 { try connection.send(Self.heavy(batch * 40 + 1)) }
        #expect(connection.writer.submitted.count == 5)
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 0, "5 batches pending, 4 MiB queued: still read")
        connection.writer.otherConnectionsBytes = 16 << 20
        try connection.send(Self.heavy(201))
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1, "stopped at unacknowledgedQueueBytes")
        #expect(connection.reads.count == 0)
        connection.writer.takeQueue()
        connection.writer.completeAll { request in .stored(request.batch.count, firstLSN: 1) }
        connection.runEventLoop()
        #expect(connection.reads.count == 1, "reads again once the writer took the queue")

        let acked = try TestConnection(configuration: configuration)
        try acked.send(Lines.hello(ack: "batch"))
        acked.writer.completeAll { _ in .stored(0, firstLSN: 1) }
        acked.runEventLoop()
        acked.writer.otherConnectionsBytes = 4 << 20
        try acked.send(Self.heavy(1))
        #expect(acked.statistics.snapshot().readPausesWriterBehind == 1, "a client waiting for acks is not queued behind 4 MiB more")
    }

    @Test(
        "a light connection (less than 16 KiB in the writer's queue) reads on past the daemon-wide budget and its batch count, so a paced client's next line is read while its last batch waits; once it holds more, the limits apply"
    )
    func lightConnectionReadsOn() throws {
        let connection = try TestConnection(configuration: Self.smallLimits())
        try connection.send(Lines.hello(ack: "durable"))
        connection.writer.completeAll { _ in .stored(0, firstLSN: 1) }
        connection.runEventLoop()
        connection.writer.otherConnectionsBytes = 4 << 20
        for seq in 1...5 { try connection.send(Lines.mark(seq: seq)) }
        #expect(connection.writer.submitted.count == 6, "the hello's batch and five of one event each")
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 0, "5 one-event batches pending, 4 MiB queued: still read")
        try connection.send(Self.heavy(6))
        #expect(connection.statistics.snapshot().readPausesWriterBehind == 1, "holding ~22 KB: stopped at the budget")
        #expect(connection.reads.count == 0)
    }

    @Test("a client that leaves replies unread is not read from, and its reports are dropped and counted, until it reads again")
    func unreadRepliesPauseReading() throws {
        let connection = try TestConnection()
        connection.setWritable(false)
        #expect(connection.statistics.snapshot().readPausesUnreadReplies == 1)
        #expect(connection.reads.count == 0)
        try connection.send("bad\nbad\n" + #"{"control":"stats"}"# + "\n")
        #expect(try connection.replyLines().isEmpty)
        #expect(connection.statistics.snapshot().reportsDropped == 3)
        #expect(connection.statistics.snapshot().rejected == ["json": 2], "rejections are still counted")
        connection.setWritable(true)
        #expect(connection.reads.count == 1)
        try connection.send("bad\n")
        #expect(try connection.replies().first?.isRejection(line: 4, code: "json") == true)
    }

    @Test("replies made in one read stop at 16 KiB; the rest are dropped and counted, and the next read is answered again")
    func repliesOfOneReadBounded() throws {
        let connection = try TestConnection()
        let count = 400
        try connection.send(String(repeating: "bad\n", count: count))
        let bytes = connection.outboundBytes()
        let replies = try TestConnection.parse(bytes)
        #expect(bytes.count >= 16 << 10 && bytes.count < (16 << 10) + 200)
        #expect(replies.map(\.line) == (1...replies.count).map { $0 }, "the first lines' reports, in order")
        let dropped = connection.statistics.snapshot().reportsDropped
        #expect(dropped > 0 && replies.count + dropped == count)
        #expect(connection.statistics.snapshot().rejected == ["json": count])
        try connection.send("bad\n")
        #expect(try connection.replies().map(\.line) == [count + 1])
    }
}

// MARK: - The test's client and writer

/// Event lines for the tests.
enum Lines {
    static func hello(ack: String) -> String { #"{"hello":1,"client":"tests","ack":"\#(ack)"}"# + "\n" }

    static func mark(seq: Int, name: String = "n") -> String {
        #"{"type":"mark","session":"s","seq":\#(seq),"ts":1763715600000000,"name":"\#(name)"}"# + "\n"
    }
}

/// A reply line from navlogd (schemas/daemon-reply.schema.json): every field any reply has.
struct Reply: Decodable, Equatable {
    var ack: Int?
    var stored: Int?
    var duplicates: Int?
    var lsns: [UInt64]?
    var durable: Bool?
    var error: String?
    var line: Int?
    var code: String?
    var field: String?
    var column: Int?
    var reason: String?
    var warning: String?
    var suppressed: Int?

    /// An acknowledgement as the README writes it.
    static func ack(_ line: Int, stored: Int, duplicates: Int = 0, lsns: [UInt64]?, durable: Bool) -> Reply {
        Reply(ack: line, stored: stored, duplicates: duplicates, lsns: lsns, durable: durable)
    }

    init(
        ack: Int? = nil, stored: Int? = nil, duplicates: Int? = nil, lsns: [UInt64]? = nil, durable: Bool? = nil, error: String? = nil, line: Int? = nil,
        code: String? = nil
    ) {
        self.ack = ack
        self.stored = stored
        self.duplicates = duplicates
        self.lsns = lsns
        self.durable = durable
        self.error = error
        self.line = line
        self.code = code
    }

    /// Parses one reply line; a line that is not a reply fails the test.
    init(_ text: String) {
        do {
            self = try JSONDecoder().decode(Reply.self, from: Data(text.utf8))
        } catch {
            Issue.record("not a reply line: \(text) (\(error))")
            self.init()
        }
    }

    /// Whether this is `{"error":"rejected","line":line,"code":code,...}` with that field.
    func isRejection(line: Int, code: String, field: String? = nil) -> Bool {
        error == "rejected" && self.line == line && self.code == code && self.field == field
    }
}

/// The writer as the handler sees it, played by the test: batches wait in its queue until the
/// test takes them (a writer round) and are completed with the outcome the test gives, in the
/// order they came, as the writer thread would.
final class ScriptedWriter: BatchWriter {
    /// Every request handed over, in order.
    private(set) var submitted: [WriteRequest] = []
    /// Requests not yet taken off the queue.
    private var queued: [WriteRequest] = []
    /// Requests not yet completed.
    private var pending: [WriteRequest] = []
    /// Bytes other connections hold in the queue.
    var otherConnectionsBytes = 0
    /// Connections waiting for room in the queue.
    private var roomWaiters: [(budget: Int, resume: @Sendable () -> Void)] = []

    var queuedBytes: Int { otherConnectionsBytes + queued.reduce(0) { $0 + $1.memoryBytes } }

    /// Requests handed over and not completed.
    var incomplete: Int { pending.count }

    func submit(_ request: WriteRequest) -> Bool {
        submitted.append(request)
        queued.append(request)
        pending.append(request)
        return true
    }

    func whenRoom(below budget: Int, _ resume: @escaping @Sendable () -> Void) {
        if queuedBytes < budget { resume() } else { roomWaiters.append((budget, resume)) }
    }

    /// Takes everything queued (every connection's), waking the connections waiting for room.
    func takeQueue() {
        queued.removeAll()
        otherConnectionsBytes = 0
        let waiters = roomWaiters
        roomWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Takes the queue and completes every pending request with `outcome(request)`.
    func completeAll(_ outcome: (WriteRequest) -> WriteOutcome) {
        takeQueue()
        let done = pending
        pending.removeAll()
        for request in done { request.completion(outcome(request)) }
    }

    /// Takes the queue and completes the oldest pending request only.
    func completeFirst(_ outcome: (WriteRequest) -> WriteOutcome) {
        takeQueue()
        guard !pending.isEmpty else { return }
        let request = pending.removeFirst()
        request.completion(outcome(request))
    }
}

extension WriteOutcome {
    /// `count` events stored from LSN `firstLSN` on.
    static func stored(_ count: Int, firstLSN: UInt64) -> WriteOutcome {
        WriteOutcome(lsns: firstLSN..<(firstLSN + UInt64(count)), stored: count, duplicates: 0)
    }

    init(lsns: Range<UInt64>, stored: Int, duplicates: Int) {
        self.init(lsns: lsns, stored: stored, duplicates: duplicates, failure: nil)
    }
}

/// Counts the reads the handler asks for: with autoRead off, a read happens only when asked.
final class ReadRecorder: ChannelOutboundHandler {
    typealias OutboundIn = Never
    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}

/// One event as the handler handed it to the writer.
struct HandedEvent: Equatable {
    var line: Int
    var seq: UInt64?
    var session: String
    var peer: PeerCredentials
    var key: String?
}

/// A ``ConnectionHandler`` on an `EmbeddedChannel`, with the test's writer behind it.
final class TestConnection {
    static let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 4242)

    let channel = EmbeddedChannel()
    let writer = ScriptedWriter()
    let statistics = DaemonStatistics()
    let reads = ReadRecorder()
    private var identity: EventLoopPromise<(PeerCredentials, supplementaryGroups: [UInt32])>?
    private var unread = ByteBuffer()

    /// Defaults with nothing set by a file; the socket and directory are never used.
    static func configuration() -> DaemonConfiguration { DaemonConfiguration(environment: [:]) }

    /// Connects a client whose credentials are ``peer`` (with `supplementaryGroups`), known at
    /// once or, with `identifiedLater`, when the test calls ``identify(_:)``.
    init(
        configuration: DaemonConfiguration = configuration(), supplementaryGroups: [UInt32] = [], readBudget: SharedReadBudget? = nil,
        identifiedLater: Bool = false, control: @escaping @Sendable (String) -> ByteBuffer? = { _ in nil }
    ) throws {
        let loop = channel.embeddedEventLoop
        if identifiedLater { identity = loop.makePromise() }
        let identity = self.identity
        let handler = ConnectionHandler(
            writer: writer, statistics: statistics, configuration: configuration, logger: Logger(label: "test"), readBudget: readBudget,
            identifyPeer: { channel in
                identity?.futureResult ?? channel.eventLoop.makeSucceededFuture((Self.peer, supplementaryGroups: supplementaryGroups))
            }, control: control)
        try channel.pipeline.syncOperations.addHandler(reads)
        try channel.pipeline.syncOperations.addHandler(handler)
        channel.connect(to: try SocketAddress(unixDomainSocketPath: "/navlog-test.sock"), promise: nil)
    }

    deinit {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// The kernel's answer for a connection made with `identifiedLater`.
    func identify(_ peer: PeerCredentials) {
        identity?.succeed((peer, supplementaryGroups: []))
    }

    /// One read of `text`.
    func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }

    /// One read of `bytes`.
    func send(_ bytes: [UInt8]) throws { try channel.writeInbound(ByteBuffer(bytes: bytes)) }

    /// The client shuts down its sending side.
    func closeInput() { channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }

    /// The client stops or starts reading: the socket's write buffer passes its high mark or drains.
    func setWritable(_ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    /// Runs what was handed to the event loop (the writer's completions, scheduled flushes).
    func runEventLoop() { channel.embeddedEventLoop.run() }

    /// The bytes written to the client since the last look.
    func outboundBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        return bytes
    }

    /// The complete reply lines written since the last look.
    func replyLines() throws -> [String] {
        var fresh = ByteBuffer(bytes: outboundBytes())
        unread.writeBuffer(&fresh)
        var lines: [String] = []
        while let newline = unread.readableBytesView.firstIndex(of: 0x0A) {
            let length = newline - unread.readerIndex
            lines.append(unread.readString(length: length) ?? "")
            unread.moveReaderIndex(forwardBy: 1)
        }
        return lines
    }

    /// The replies written since the last look, parsed.
    func replies() throws -> [Reply] { try replyLines().map(Reply.init) }

    /// Parses reply lines.
    static func parse(_ bytes: [UInt8]) throws -> [Reply] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { Reply(String($0)) }
    }

    /// Every event handed to the writer so far, in order.
    var events: [HandedEvent] {
        writer.submitted.flatMap(\.events)
    }
}

extension WriteRequest {
    /// The request's events as the test checks them.
    var events: [HandedEvent] {
        batch.headers.indices.map { index in
            let header = batch.headers[index]
            var peer = header.peer
            let key = peer.relayKey.name
            peer.relayKey = .none
            return HandedEvent(line: header.sourceLine, seq: header.sequence, session: batch.session(of: index), peer: peer, key: key)
        }
    }
}
