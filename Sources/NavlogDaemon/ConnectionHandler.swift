import Logging
import NIOCore
import NavlogEvents
import NavlogJSON
import NavlogStore

/// One client connection: frames JSON Lines, validates them, batches the events, hands each
/// batch to the ``LogWriter`` and answers the client (acks when it asked for them in a hello,
/// rejections always).
///
/// Backpressure: while the connection has ``DaemonConfiguration/maximumPendingBatchesPerConnection``
/// batches in the writer and the writer's queue holds ``DaemonConfiguration/writerQueueBytes``,
/// or while its client does not read our replies, the daemon stops reading from it. Memory
/// stays bounded and other clients are unaffected.
final class ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The connection's states.
    private enum State {
        /// Waiting for the peer's credentials (the first event-loop tick after accept).
        case identifying
        /// Reading lines.
        case open
        /// Refused or finished: input is ignored.
        case closing
    }

    private let writer: any BatchWriter
    private let statistics: DaemonStatistics
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let control: @Sendable (String) -> ByteBuffer?
    private var state = State.identifying
    private var framer: LineFramer
    private var parser: EventLineParser
    private var batch = EventBatch()
    /// The peer's credentials; its ``PeerCredentials/relayKey`` is the key of the last relay
    /// line (a trusted relay's), which every event parsed after it carries.
    private var peer = PeerCredentials(uid: UInt32.max, gid: UInt32.max, pid: -1)
    /// Whether the peer may send relay lines (relayUIDs, relayGIDs).
    private var mayRelay = false
    private var ack = HelloLine.AckMode.none
    private var pendingBatches = 0
    /// Memory its batches in the writer hold (``WriteRequest/memoryBytes``), until completed.
    private var pendingBytes = 0
    private var readPaused = false
    /// Registered with the writer to be woken when the daemon-wide queue budget has room.
    private var waitingForRoom = false
    private var bufferedWhileIdentifying: [ByteBuffer] = []
    /// The last line number handed to the writer; acks say "every line up to N is handled".
    private var lastSubmittedLine = 0
    private var rateWindowStart = 0.0
    private var rateWindowCount = 0
    private var suppressed = 0
    private let order = ConnectionOrder()
    /// The client shut down its sending side: answer what it sent, then close.
    private var inputClosed = false
    /// An ack was written and a flush is queued behind the event loop's pending tasks.
    private var flushScheduled = false
    /// Replies made while handling the current read (see ``queueReply(_:_:)``).
    private var queuedReplies: ByteBuffer?
    /// At most this many bytes of replies are queued in one read; more are dropped and counted.
    private static let maximumQueuedReplyBytes = 16 << 10

    /// The daemon-wide read budget, whose count of open connections sets this one's fair share.
    private let readBudget: SharedReadBudget?

    /// Reads the peer's trusted credentials once the connection is active.
    private let identifyPeer: PeerIdentifier

    /// A handler for one accepted connection.
    /// - Parameters:
    ///   - writer: where batches go; navlogd's ``LogWriter``.
    ///   - readBudget: the daemon-wide read budget; nil reads as if this were the only connection.
    ///   - identifyPeer: the kernel's `SO_PEERCRED` by default (``PeerCredentialsReader/read(_:)``).
    ///   - control: the reply to a `{"control":NAME}` line, or nil for an unknown request.
    init(
        writer: any BatchWriter, statistics: DaemonStatistics, configuration: DaemonConfiguration, logger: Logger, readBudget: SharedReadBudget? = nil,
        identifyPeer: @escaping PeerIdentifier = PeerCredentialsReader.read,
        control: @escaping @Sendable (String) -> ByteBuffer?
    ) {
        self.readBudget = readBudget
        self.identifyPeer = identifyPeer
        self.writer = writer
        self.statistics = statistics
        self.configuration = configuration
        self.logger = logger
        self.control = control
        framer = LineFramer(maximumLineLength: configuration.maximumLineBytes)
        parser = EventLineParser(maximumLineLength: configuration.maximumLineBytes)
    }

    func channelActive(context: ChannelHandlerContext) {
        // Count and compare under one lock: no two connections both take the last place, and
        // no `snapshot()` (it sorts the latency samples) on every accept.
        var current = 0
        statistics.update {
            current = $0.connections
            $0.connections += 1
            $0.connectionsTotal += 1
        }
        if current >= configuration.maximumConnections {
            statistics.update { $0.overLimit += 1 }
            refuse(context, reason: "navlogd already has \(current) connections, its limit (maximumConnections); try again later")
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        identifyPeer(context.channel).whenComplete { result in
            let (handler, context) = loopBound.value
            switch result {
            case .success(let (credentials, groups)): handler.identified(credentials, supplementaryGroups: groups, context)
            case .failure(let error):
                handler.refuse(context, reason: "navlogd could not read the peer's credentials (\(error)); only local Unix-socket peers are served")
            }
        }
        context.fireChannelActive()
    }

    private func identified(_ credentials: PeerCredentials, supplementaryGroups: [UInt32], _ context: ChannelHandlerContext) {
        guard case .identifying = state else { return }
        peer = credentials
        let uidAllowed = configuration.allowedUIDs.map { $0.contains(credentials.uid) }
        // The primary group or any supplementary one (the usual `navlog` group set-up adds
        // writers to the group as a supplementary group).
        let gidAllowed = configuration.allowedGIDs.map { allowed in
            allowed.contains(credentials.gid) || supplementaryGroups.contains { allowed.contains($0) }
        }
        if uidAllowed != nil || gidAllowed != nil, uidAllowed != true, gidAllowed != true {
            statistics.update { $0.refused += 1 }
            logger.notice("Refused a connection from uid \(credentials.uid) gid \(credentials.gid) pid \(credentials.pid): not in the allowed uids or gids.")
            refuse(context, reason: "uid \(credentials.uid) / gid \(credentials.gid) may not write to this navlogd (see allowedUIDs and allowedGIDs in its configuration)")
            return
        }
        mayRelay =
            configuration.relayUIDs.contains(credentials.uid) || configuration.relayGIDs.contains(credentials.gid)
            || supplementaryGroups.contains { configuration.relayGIDs.contains($0) }
        state = .open
        let buffered = bufferedWhileIdentifying
        bufferedWhileIdentifying = []
        for buffer in buffered { consume(buffer, context) }
        if !buffered.isEmpty { submit(context) }
        // Replies to the buffered lines were only queued (see ``consume(_:_:)``).
        flushReplies(context)
        closeIfAnswered(context)
    }

    private func refuse(_ context: ChannelHandlerContext, reason: String) {
        state = .closing
        var line = "{\"error\":\"refused\",\"reason\":"
        line += jsonString(reason) + "}\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: line))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        statistics.update { $0.connections -= 1 }
        // A line cut off by the disconnect is incomplete: it is not an event.
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        statistics.update { $0.bytesIn += buffer.readableBytes }
        switch state {
        case .identifying: bufferedWhileIdentifying.append(buffer)
        case .open: consume(buffer, context)
        case .closing: break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .open = state { submit(context) }
        // Replies to this read's lines were only queued (see ``consume(_:_:)``).
        flushReplies(context)
        context.fireChannelReadComplete()
    }

    /// A client that shuts down its sending side (`shutdown(SHUT_WR)`, `nc -N`) has sent all it
    /// will: its last batch is handed over (a line without its newline is not an event), and
    /// the connection closes once every ack and report has gone out.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if case .open = state {
                submit(context)
                flushReplies(context)
                closeIfAnswered(context)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// After the client's input ended: closes once no batch of it waits for the writer, after
    /// the replies already written (an empty write completes after every earlier one).
    private func closeIfAnswered(_ context: ChannelHandlerContext) {
        guard inputClosed, pendingBatches == 0, case .open = state else { return }
        state = .closing
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        updateReading(context)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("Connection error: \(error)")
        context.close(promise: nil)
    }

    // MARK: - Lines

    /// Frames and handles the lines in `buffer`.
    ///
    /// Replies made here (rejections, control answers) are only queued (``queueReply(_:_:)``):
    /// they are written and flushed once the read is complete. A flush inside `framer.feed` could re-enter this
    /// handler: when the socket write fails (the client has closed), NIO drains the socket and
    /// fires `channelRead` on the spot, and that nested `consume` would access `framer` while
    /// the outer `feed` still holds it, an exclusivity violation that aborts navlogd (found by
    /// `navlog-bench chaos-load`: bad lines from a client that disconnects at once).
    ///
    /// The parser, the batch and the peer are moved into a local for the read (and back after
    /// it): each access to a property of this class is checked for exclusivity at run time, and
    /// a line made four (`perf`, one client flat out: 1.7% of navlogd's samples, 0.27% after).
    private func consume(_ buffer: ByteBuffer, _ context: ChannelHandlerContext) {
        let receivedAt = currentMicroseconds()
        var lines = LineState(parser: Self.placeholderParser, batch: EventBatch(), peer: peer)
        swap(&lines.parser, &parser)
        swap(&lines.batch, &batch)
        defer {
            swap(&lines.parser, &parser)
            swap(&lines.batch, &batch)
            peer = lines.peer
        }
        buffer.withUnsafeReadableBytes { bytes in
            framer.feed(bytes) { number, piece in
                handle(number, piece, receivedAt: receivedAt, &lines, context)
            }
        }
    }

    /// What the parser property holds while a read has the real one (shared, never used:
    /// making one per read would allocate its buffers).
    private static let placeholderParser = EventLineParser(maximumLineLength: 0)

    /// The parser, the batch being filled and the peer, in a local while a read is handled.
    private struct LineState {
        var parser: EventLineParser
        var batch: EventBatch
        /// The peer's credentials, with the key a relay line set.
        var peer: PeerCredentials
    }

    private func handle(_ number: Int, _ piece: LineFramer.Piece, receivedAt: Int64, _ lines: inout LineState, _ context: ChannelHandlerContext) {
        guard case .open = state else { return }
        switch piece {
        case .tooLong(let length):
            report(lines.parser.tooLong(lineNumber: number, length: length), context)
        case .line(let bytes):
            do {
                switch try lines.parser.parse(bytes, lineNumber: number, receivedAt: receivedAt, peer: lines.peer, into: &lines.batch) {
                case .event:
                    // Over the rate limit: drop the event just parsed. A relay's keyed events
                    // are not limited here: the relay limits each key and client address itself,
                    // and what it relays must never be dropped silently.
                    if lines.peer.relayKey.isNone && !admit() { lines.batch.removeLast() }
                case .relay(let key):
                    if mayRelay {
                        // Each event carries its key in its header: a batch may hold events of
                        // several keys, each stored with its own.
                        lines.peer.relayKey = key
                    } else {
                        lines.peer.relayKey = .none
                        report(
                            EventRejection(
                                code: .forbidden, line: number, path: "relay",
                                reason:
                                    "uid \(lines.peer.uid) / gid \(lines.peer.gid) may not relay keys to this navlogd (see relayUIDs and relayGIDs in its configuration); the events that follow are stored without a key"
                            ), context)
                    }
                case .hello(let hello):
                    if number == 1 {
                        ack = hello.ack
                    } else {
                        report(EventRejection(code: .unknownField, line: number, path: "hello", reason: "a hello must be the first line of a connection"), context)
                    }
                case .control(let name):
                    if !canReply(context) {
                        // Like rejection reports: a client that does not read gets no more
                        // replies (an unknown request's rejection included) and costs no more
                        // work. A stats reply lists the data directory and sorts the latency
                        // samples; under navlog-bench chaos-load, stats floods from clients that
                        // never read took a fifth of the event loops' time.
                        statistics.update { $0.reportsDropped += 1 }
                    } else if var reply = control(name) {
                        queueReply(&reply, context)
                    } else {
                        report(EventRejection(code: .enum, line: number, path: "control", reason: "unknown control request \"\(name)\" (known: stats)"), context)
                    }
                case .blank:
                    break
                }
            } catch {
                // A malformed relay line clears the key: the events after it are not stored
                // under the key of an earlier one.
                if error.path == "relay" { lines.peer.relayKey = .none }
                report(error, context)
            }
        }
    }

    /// Applies the per-connection rate limit (interval + burst, like journald).
    private func admit() -> Bool {
        guard configuration.rateLimitIntervalSeconds > 0 else { return true }
        let now = monotonicSeconds()
        if now - rateWindowStart >= configuration.rateLimitIntervalSeconds {
            rateWindowStart = now
            rateWindowCount = 0
        }
        rateWindowCount += 1
        if rateWindowCount <= configuration.rateLimitBurst { return true }
        suppressed += 1
        statistics.update { $0.rateLimited += 1 }
        return false
    }

    private func report(_ rejection: EventRejection, _ context: ChannelHandlerContext) {
        // The client is not reading: never let its replies pile up.
        let replying = canReply(context)
        statistics.update { stats in
            stats.rejected[rejection.code.name, default: 0] += 1
            if !replying { stats.reportsDropped += 1 }
        }
        guard replying else { return }
        var line = "{\"error\":\"rejected\",\"line\":\(rejection.line),\"code\":\"\(rejection.code.name)\""
        if let path = rejection.path { line += ",\"field\":" + jsonString(path) }
        if let column = rejection.column { line += ",\"column\":\(column)" }
        line += ",\"reason\":" + jsonString(rejection.reason) + "}\n"
        queueReply(line, context)
    }

    // MARK: - Replies made while reading

    /// Whether a reply made while reading may be queued: not while the client leaves earlier
    /// replies unread (the channel is over its write buffer's high mark), and not beyond
    /// ``maximumQueuedReplyBytes`` in one read.
    private func canReply(_ context: ChannelHandlerContext) -> Bool {
        context.channel.isWritable && (queuedReplies?.readableBytes ?? 0) < Self.maximumQueuedReplyBytes
    }

    /// Appends a reply to the ones of this read. They go out as one buffer when the read is
    /// complete: one allocation for many rejection reports instead of one each, which is what
    /// a client that never reads costs navlogd in memory.
    private func queueReply(_ reply: inout ByteBuffer, _ context: ChannelHandlerContext) {
        startQueuedReplies(atLeast: reply.readableBytes, context)
        queuedReplies!.writeBuffer(&reply)
    }

    /// ``queueReply(_:_:)`` for a reply made as text.
    private func queueReply(_ reply: String, _ context: ChannelHandlerContext) {
        startQueuedReplies(atLeast: reply.utf8.count, context)
        queuedReplies!.writeString(reply)
    }

    /// The first reply of a read allocates the buffer the read's replies share.
    private func startQueuedReplies(atLeast bytes: Int, _ context: ChannelHandlerContext) {
        if queuedReplies == nil {
            queuedReplies = context.channel.allocator.buffer(capacity: max(bytes, 1024))
        }
    }

    /// Writes the replies of this read, if any, and flushes.
    private func flushReplies(_ context: ChannelHandlerContext) {
        if let replies = queuedReplies {
            queuedReplies = nil
            context.write(wrapOutboundOut(replies), promise: nil)
        }
        context.flush()
    }

    // MARK: - Writing

    private func submit(_ context: ChannelHandlerContext) {
        let line = framer.lineNumber
        if suppressed > 0 {
            let notice = "{\"warning\":\"rate-limited\",\"suppressed\":\(suppressed),\"line\":\(line)}\n"
            suppressed = 0
            if context.channel.isWritable { context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: notice)), promise: nil) }
        }
        guard !batch.isEmpty || (ack != .none && line > lastSubmittedLine) else { return }
        lastSubmittedLine = line
        let request = batch
        // Not reserved at the last batch's size: a thousand streaming connections would each
        // keep that much idle (1000 flat-out clients, 8M events, an 8 MiB queue budget: 225 MiB
        // peak with it, 193 MiB without; one client's events/s unchanged within the spread).
        batch = EventBatch()
        let requestBytes = request.bytes.count + request.count * MemoryLayout<EventBatch.Header>.stride
        pendingBatches += 1
        pendingBytes += requestBytes
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let accepted = writer.submit(
            WriteRequest(batch: request, ack: ack, order: order) { outcome in
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.completed(outcome, line: line, bytes: requestBytes, context)
                }
            })
        if !accepted {
            pendingBatches -= 1
            pendingBytes -= requestBytes
            refuse(context, reason: "navlogd is shutting down; events after line \(line - request.count) were not stored, resend them to the next navlogd")
            return
        }
        updateReading(context)
    }

    private func completed(_ outcome: WriteOutcome, line: Int, bytes: Int, _ context: ChannelHandlerContext) {
        pendingBatches -= 1
        pendingBytes -= bytes
        if let failure = outcome.failure {
            // Nothing after a batch that was not stored is stored (see ``ConnectionOrder``):
            // say so once, then close, so the client reconnects and resends in order.
            guard case .open = state else { return }
            state = .closing
            let reply = "{\"error\":\"store\",\"line\":\(line),\"stored\":\(outcome.stored),\"reason\":" + jsonString(failure.message) + "}\n"
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: reply))).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        } else if ack != .none {
            var reply = "{\"ack\":\(line),\"stored\":\(outcome.stored),\"duplicates\":\(outcome.duplicates)"
            if outcome.stored > 0 { reply += ",\"lsns\":[\(outcome.lsns.lowerBound),\(outcome.lsns.upperBound - 1)]" }
            reply += ",\"durable\":\(ack == .durable)}\n"
            context.write(wrapOutboundOut(context.channel.allocator.buffer(string: reply)), promise: nil)
            flushSoon(context)
        }
        updateReading(context)
        closeIfAnswered(context)
    }

    /// Flushes once the event loop has run the tasks already queued: the writer completes a
    /// group of batches at once, so the acks of one connection's batches in that group arrive
    /// as tasks back to back and go out in one socket write instead of one each.
    private func flushSoon(_ context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = loopBound.value
            handler.flushScheduled = false
            context.flush()
        }
    }

    /// Bytes a connection may hold in the writer's queue and still read on whatever the queue
    /// holds: the writer serves such a connection first (``WriterQueue/lightFlowBytes``), so a
    /// paced client's next line is read while its last batch waits. A thousand connections
    /// hold 16 MiB this way at most, as they could before with one read's batch each.
    static let lightConnectionBytes = WriterQueue.lightFlowBytes

    /// Reads only while this connection has room in the writer and its client reads our replies.
    ///
    /// Room: a few batches always, more while the writer's queue (all connections) is under its
    /// byte budget, and always while it holds less than ``lightConnectionBytes``. A paused
    /// connection has batches waiting, so one of their completions calls this again: a pause
    /// cannot outlive the writer's backlog.
    private func updateReading(_ context: ChannelHandlerContext) {
        guard !inputClosed else { return }
        let queued = writer.queuedBytes
        // The daemon-wide budget of bytes read and not yet taken by the writer bounds memory
        // however many connections stream; under it, a connection past its pending batches
        // reads on only while the queue is under writerQueueBytes.
        // A connection with nothing in the queue may always hand over one batch (a read's worth,
        // which the shared read budget keeps small): a client sending a batch a second is
        // never held behind a flood it has no part in; the floods wait for their turn.
        // A connection that asks no acks may have more in the queue: nobody waits on its events,
        // and it reads on while the writer seals a block (``DaemonConfiguration/unacknowledgedQueueBytes``).
        let unacknowledged = ack == .none
        let budget = unacknowledged ? max(configuration.unacknowledgedQueueBytes, configuration.maximumQueuedBytes) : configuration.maximumQueuedBytes
        let queueLimit = unacknowledged ? max(configuration.unacknowledgedQueueBytes, configuration.writerQueueBytes) : configuration.writerQueueBytes
        // A connection holding less than ``lightConnectionBytes`` in the queue reads on past
        // the budget and its batch count: a paced client's line is read when it comes, not
        // once its previous batch is acknowledged (under a flood, rounds later).
        let light = pendingBytes < Self.lightConnectionBytes
        let overBudget = queued >= budget && pendingBatches > 0 && !light
        // Its fair share of the budget: with many connections streaming, each may hold only its
        // part in the writer (16 KiB at least: a read's batch or two), so a thousand flooders
        // hold about the budget, not a thousand times their pending batches.
        let share = max(16 << 10, budget / max(1, readBudget?.openConnections ?? 1))
        let overShare = pendingBytes >= share && queued >= share
        let writerFull = overBudget || overShare || (!light && pendingBatches >= configuration.maximumPendingBatchesPerConnection && queued >= queueLimit)
        let repliesUnread = !context.channel.isWritable
        let shouldPause = writerFull || repliesUnread
        if overBudget && !waitingForRoom {
            // Nothing of its own may be pending: the writer wakes it when the queue is taken.
            waitingForRoom = true
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            writer.whenRoom(below: budget) {
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.waitingForRoom = false
                    handler.updateReading(context)
                }
            }
        }
        if shouldPause != readPaused {
            readPaused = shouldPause
            if shouldPause {
                statistics.update { stats in
                    if writerFull { stats.readPausesWriterBehind += 1 }
                    if repliesUnread { stats.readPausesUnreadReplies += 1 }
                }
            }
            context.channel.setOption(ChannelOptions.autoRead, value: !shouldPause).whenFailure { _ in }
            if !shouldPause { context.read() }
        }
    }
}

/// Quotes `text` as a JSON string.
func jsonString(_ text: String) -> String {
    var json = JSONWriter()
    json.string(text)
    return String(decoding: json.bytes, as: UTF8.self)
}
