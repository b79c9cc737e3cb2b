import NIOCore
import NIOPosix
import NavlogEvents

/// What navlogd answered for one relayed body.
public struct RelayOutcome: Sendable, Equatable {
    /// Events stored (durably: the connection asks for durable acks).
    public var stored = 0
    /// Events navlogd already had (same session and seq): a resend.
    public var duplicates = 0
    /// Lines navlogd rejected, numbered within the body (from 1).
    public var rejected: [Rejection] = []

    /// One rejected line, as navlogd reported it.
    public struct Rejection: Sendable, Equatable {
        /// The line within the body, from 1.
        public var line: Int
        /// navlogd's rejection code (events.md).
        public var code: String
        /// The field at fault, when one is.
        public var field: String?
        /// The byte column, when navlogd gave one.
        public var column: Int?
        /// Why, as a sentence.
        public var reason: String
    }
}

/// Why a body could not be relayed. Each says whether anything of it may have been stored.
public struct RelayFailure: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Code: Sendable, Equatable {
        /// navlogd's socket could not be reached, or navlogd refused the connection (its
        /// connection limit, its allowed uids, shutting down); nothing was stored.
        case unreachable
        /// navlogd does not trust this intake as a relay (`relayUIDs`/`relayGIDs`); nothing of
        /// the body was stored.
        case notTrusted
        /// navlogd could not store (disk full, I/O error): it refused the rest of the body.
        case storeRefused
        /// The connection ended or timed out before the last line's ack.
        case connectionLost
    }

    /// What happened.
    public var code: Code
    /// Said as a sentence, for the log and the client.
    public var message: String
    /// Events of the body navlogd had durably stored before the failure (a resend finds
    /// them as duplicates).
    public var storedBeforeFailure: Int

    public var description: String { message }
}

/// One connection to navlogd's socket, used by one request at a time (``RelayPool`` hands it
/// out). All of its state lives in a handler on the connection's event loop.
final class RelayConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<RelayHandler>

    private init(channel: any Channel, handler: NIOLoopBound<RelayHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Whether the connection can take another body.
    var isUsable: Bool {
        channel.isActive
    }

    /// Connects to navlogd, says hello (durable acks) and checks that navlogd trusts this
    /// process to relay key ids, by relaying the intake's own id with no event after it.
    static func connect(socketPath: String, group: any EventLoopGroup, timeout: TimeAmount) async throws(RelayFailure) -> RelayConnection {
        let eventLoop = group.next()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RelayHandler(timeout: timeout))
                    }
                }
                .connect(unixDomainSocketPath: socketPath)
                .get()
        } catch {
            throw RelayFailure(code: .unreachable, message: "navlogd's socket \(socketPath) cannot be reached (\(error))", storedBeforeFailure: 0)
        }
        let handler: NIOLoopBound<RelayHandler>
        do {
            handler = try await eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: RelayHandler.self), eventLoop: eventLoop)
            }.get()
        } catch {
            channel.close(promise: nil)
            throw RelayFailure(code: .unreachable, message: "navlogd's connection closed at once (\(error))", storedBeforeFailure: 0)
        }
        let connection = RelayConnection(channel: channel, handler: handler)
        var greeting = channel.allocator.buffer(capacity: 96)
        greeting.writeString("{\"hello\":1,\"client\":\"navlog-intake\",\"ack\":\"durable\"}\n")
        do {
            _ = try await connection.exchange(prefix: greeting, prefixLines: 1, keyID: "navlog-intake", body: channel.allocator.buffer(capacity: 0), lines: 0)
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return connection
    }

    /// Sends `lines` lines of `body` (each ending in a newline) as events of key `keyID` and
    /// waits for navlogd's durable ack of the last one.
    func relay(keyID: String, body: ByteBuffer, lines: Int) async throws(RelayFailure) -> RelayOutcome {
        try await exchange(prefix: nil, prefixLines: 0, keyID: keyID, body: body, lines: lines)
    }

    private func exchange(prefix: ByteBuffer?, prefixLines: Int, keyID: String, body: ByteBuffer, lines: Int) async throws(RelayFailure) -> RelayOutcome {
        let promise = channel.eventLoop.makePromise(of: RelayOutcome.self)
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute {
            handler.value.begin(prefix: prefix, prefixLines: prefixLines, keyID: keyID, body: body, lines: lines, channel: channel, promise: promise)
        }
        do {
            return try await promise.futureResult.get()
        } catch let failure as RelayFailure {
            throw failure
        } catch {
            throw RelayFailure(code: .connectionLost, message: "navlogd's connection failed (\(error))", storedBeforeFailure: 0)
        }
    }

    /// Closes the connection (navlogd answers what it has, then sees the end).
    func close() {
        channel.close(promise: nil)
    }
}

/// Frames navlogd's reply lines and matches them to the body in flight: acks ("every line up
/// to N is handled") add up its stored and duplicate counts, rejections name its lines, and
/// the ack of its last line completes it.
private final class RelayHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The body in flight.
    private struct Exchange {
        /// The connection's line number of the relay line that precedes the body.
        var relayLine: Int
        /// The connection's line number of the body's last line.
        var lastLine: Int
        var outcome = RelayOutcome()
        var promise: EventLoopPromise<RelayOutcome>
        var timeout: Scheduled<Void>?
    }

    private let timeout: TimeAmount
    /// Lines written on this connection so far (the hello included): navlogd numbers them alike.
    private var linesWritten = 0
    private var exchange: Exchange?
    /// A reply line cut by the end of a read.
    private var partial: [UInt8] = []
    /// Set once the connection cannot be trusted to number lines as we do (closed, timed out).
    private var broken: RelayFailure?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func begin(
        prefix: ByteBuffer?, prefixLines: Int, keyID: String, body: ByteBuffer, lines: Int, channel: any Channel, promise: EventLoopPromise<RelayOutcome>
    ) {
        if let broken {
            promise.fail(broken)
            return
        }
        precondition(exchange == nil, "a relay connection carries one body at a time")
        linesWritten += prefixLines + 1
        let relayLine = linesWritten
        linesWritten += lines
        var scheduled: Scheduled<Void>?
        let eventLoop = channel.eventLoop
        let seconds = timeout.nanoseconds / 1_000_000_000
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        scheduled = eventLoop.scheduleTask(in: timeout) {
            loopBound.value.fail(
                RelayFailure(code: .connectionLost, message: "navlogd did not acknowledge the body within \(seconds) s", storedBeforeFailure: 0), channel: channel)
        }
        exchange = Exchange(relayLine: relayLine, lastLine: linesWritten, promise: promise, timeout: scheduled)
        var head = channel.allocator.buffer(capacity: 32 + keyID.utf8.count + (prefix?.readableBytes ?? 0))
        if var prefix { head.writeBuffer(&prefix) }
        head.writeString("{\"relay\":\"")
        head.writeString(keyID)
        head.writeString("\"}\n")
        channel.write(head, promise: nil)
        if body.readableBytes > 0 { channel.write(body, promise: nil) }
        channel.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { bytes in
            var start = 0
            for index in bytes.indices where bytes[index] == 0x0A {
                if partial.isEmpty {
                    handleReply(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), context: context)
                } else {
                    partial.append(contentsOf: bytes[start..<index])
                    let line = partial
                    partial.removeAll(keepingCapacity: true)
                    line.withUnsafeBytes { handleReply($0, context: context) }
                }
                start = index + 1
            }
            if start < bytes.count { partial.append(contentsOf: bytes[start...]) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(RelayFailure(code: .connectionLost, message: "navlogd closed the connection before acknowledging the body", storedBeforeFailure: 0), channel: context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(RelayFailure(code: .connectionLost, message: "navlogd's connection failed (\(error))", storedBeforeFailure: 0), channel: context.channel)
        context.close(promise: nil)
    }

    /// Fails the body in flight (counting what was stored of it) and every later one.
    private func fail(_ failure: RelayFailure, channel: any Channel) {
        if broken == nil { broken = failure }
        guard var exchange else { return }
        self.exchange = nil
        exchange.timeout?.cancel()
        var failure = failure
        failure.storedBeforeFailure = exchange.outcome.stored
        exchange.promise.fail(failure)
        channel.close(promise: nil)
    }

    private func handleReply(_ line: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        let reply = ReplyLine(line)
        switch reply.kind {
        case .ack:
            guard var current = exchange, let acked = reply.integer("ack") else { return }
            // An ack covers the lines since the previous one; all of them are this body's or
            // its relay line's, since bodies are sent one at a time.
            current.outcome.stored += reply.integer("stored") ?? 0
            current.outcome.duplicates += reply.integer("duplicates") ?? 0
            if acked >= current.lastLine {
                current.timeout?.cancel()
                exchange = nil
                current.promise.succeed(current.outcome)
            } else {
                exchange = current
            }
        case .rejected:
            guard var current = exchange, let line = reply.integer("line") else { return }
            if line <= current.relayLine {
                // The hello or the relay line: navlogd does not take this connection as a relay.
                fail(
                    RelayFailure(
                        code: .notTrusted,
                        message:
                            "navlogd refused the intake's relay line (\(reply.string("reason") ?? "no reason given")); add the intake's uid or gid to navlogd's relayUIDs or relayGIDs",
                        storedBeforeFailure: 0), channel: context.channel)
                return
            }
            guard line <= current.lastLine else { return }
            current.outcome.rejected.append(
                RelayOutcome.Rejection(
                    line: line - current.relayLine, code: reply.string("code") ?? "rejected", field: reply.string("field"), column: reply.integer("column"),
                    reason: reply.string("reason") ?? "navlogd rejected the line"))
            exchange = current
        case .store:
            fail(
                RelayFailure(
                    code: .storeRefused, message: "navlogd cannot store events now (\(reply.string("reason") ?? "a store error"))", storedBeforeFailure: 0),
                channel: context.channel)
        case .refused:
            fail(
                RelayFailure(code: .unreachable, message: "navlogd refused the intake (\(reply.string("reason") ?? "no reason given"))", storedBeforeFailure: 0),
                channel: context.channel)
        case .other:
            break
        }
    }
}

/// One of navlogd's reply lines, read just enough to route it: acks are read by a scan for
/// their few integer members (one or two per body, so no JSON library on the path), rejections
/// through the event codec's tokenizer-free string reader below.
struct ReplyLine {
    /// What the line is.
    enum Kind { case ack, rejected, store, refused, other }

    /// The line's kind.
    let kind: Kind
    private let bytes: [UInt8]

    init(_ line: UnsafeRawBufferPointer) {
        bytes = Array(line)
        if bytes.starts(with: Array("{\"ack\":".utf8)) {
            kind = .ack
        } else if bytes.starts(with: Array("{\"error\":\"rejected\"".utf8)) {
            kind = .rejected
        } else if bytes.starts(with: Array("{\"error\":\"store\"".utf8)) {
            kind = .store
        } else if bytes.starts(with: Array("{\"error\":\"refused\"".utf8)) {
            kind = .refused
        } else {
            kind = .other
        }
    }

    /// The position just after `"name":` at the top level of the line, if present.
    private func valueStart(_ name: String) -> Int? {
        let needle = Array("\"\(name)\":".utf8)
        var index = 0
        var inString = false
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == 0x5C {
                    index += 2
                    continue
                }
                if byte == 0x22 { inString = false }
                index += 1
                continue
            }
            if byte == 0x7B || byte == 0x5B { depth += 1 }
            if byte == 0x7D || byte == 0x5D { depth -= 1 }
            if byte == 0x22 {
                if depth == 1, bytes.count - index >= needle.count, bytes[index..<(index + needle.count)].elementsEqual(needle) {
                    return index + needle.count
                }
                inString = true
            }
            index += 1
        }
        return nil
    }

    /// The integer member `name`, if present.
    func integer(_ name: String) -> Int? {
        guard var index = valueStart(name) else { return nil }
        var value = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            value = value &* 10 &+ Int(bytes[index] - 0x30)
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// The string member `name`, unescaped, if present.
    func string(_ name: String) -> String? {
        guard var index = valueStart(name), index < bytes.count, bytes[index] == 0x22 else { return nil }
        index += 1
        var output: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 { return String(decoding: output, as: UTF8.self) }
            if byte == 0x5C, index + 1 < bytes.count {
                let escaped = bytes[index + 1]
                switch escaped {
                case 0x6E: output.append(0x0A)
                case 0x74: output.append(0x09)
                case 0x72: output.append(0x0D)
                case 0x62: output.append(0x08)
                case 0x66: output.append(0x0C)
                case 0x75:
                    // \uXXXX (navlogd escapes only control characters this way).
                    if index + 5 < bytes.count, let scalar = UInt32(String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self), radix: 16),
                        let unicode = Unicode.Scalar(scalar)
                    {
                        output.append(contentsOf: Array(String(Character(unicode)).utf8))
                    }
                    index += 6
                    continue
                default: output.append(escaped)
                }
                index += 2
                continue
            }
            output.append(byte)
            index += 1
        }
        return nil
    }
}
