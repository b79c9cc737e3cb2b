import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Closes a connection whose client sends a request's head or body too slowly (a "slowloris"
/// that trickles a header byte a second holds a connection forever under an idle timeout,
/// since every byte resets it). Like nginx's `client_header_timeout` and
/// `client_body_timeout`, measured from the first byte of the request, not between reads.
///
/// Two handlers share one deadline: ``RawSide`` sits before the HTTP decoder and sees the
/// first byte of a request; ``PartSide`` sits after it and sees the head and the end. Both run
/// on the connection's event loop, so the shared state needs no lock.
final class SlowClientDeadline {
    /// Where the connection is in its current request.
    private enum Phase {
        /// Between requests (keep-alive idling is the idle timeout's business).
        case idle
        /// A request's first bytes came; its head has not been decoded yet.
        case awaitingHead
        /// The head came; the body is arriving.
        case readingBody
        /// The body ended; the request is being answered.
        case answering
    }

    private var phase = Phase.idle
    /// The current request was answered before its body ended.
    private var answeredEarly = false
    private var timer: Scheduled<Void>?
    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let logger: Logger

    init(headTimeout: TimeAmount, bodyTimeout: TimeAmount, logger: Logger) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.logger = logger
    }

    fileprivate func bytesArrived(_ context: ChannelHandlerContext) {
        guard case .idle = phase else { return }
        phase = .awaitingHead
        arm(headTimeout, "its request head", context)
    }

    fileprivate func headArrived(_ context: ChannelHandlerContext) {
        phase = .readingBody
        arm(bodyTimeout, "its request body", context)
    }

    fileprivate func endArrived() {
        timer?.cancel()
        timer = nil
        // An answer sent before the body was read (a 401, a 413) has already ended.
        phase = answeredEarly ? .idle : .answering
        answeredEarly = false
    }

    fileprivate func responseEnded() {
        switch phase {
        // Bytes of a pipelined next request may already be in the decoder: start its clock.
        case .answering: phase = .idle
        case .readingBody: answeredEarly = true
        case .idle, .awaitingHead: break
        }
    }

    fileprivate func closed() {
        timer?.cancel()
        timer = nil
    }

    private func arm(_ timeout: TimeAmount, _ what: String, _ context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        let logger = self.logger
        let seconds = Double(timeout.nanoseconds) / 1e9
        timer = context.eventLoop.scheduleTask(in: timeout) {
            logger.info("Closed a connection that took over \(seconds) s to send \(what).", metadata: ["peer": "\(channel.remoteAddress?.description ?? "?")"])
            channel.close(promise: nil)
        }
    }

    /// The half before the HTTP decoder: raw bytes start a request's clock.
    final class RawSide: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        private let deadline: SlowClientDeadline

        init(_ deadline: SlowClientDeadline) { self.deadline = deadline }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            deadline.bytesArrived(context)
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadline.closed()
            context.fireChannelInactive()
        }
    }

    /// The half after the HTTP decoder: the head and the end of each request, and the end of
    /// each response.
    final class PartSide: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        private let deadline: SlowClientDeadline

        init(_ deadline: SlowClientDeadline) { self.deadline = deadline }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: deadline.headArrived(context)
            case .body: break
            case .end: deadline.endArrived()
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) { deadline.responseEnded() }
            context.write(data, promise: promise)
        }
    }
}

/// Hummingbird's HTTP/1.1 child channel with ``SlowClientDeadline`` around its decoder.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    private let base: HTTP1Channel
    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount

    init(responder: @escaping HTTPChannelHandler.Responder, idleTimeout: TimeAmount, headTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        base = HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let deadline = NIOLoopBound(SlowClientDeadline(headTimeout: headTimeout, bodyTimeout: bodyTimeout, logger: logger), eventLoop: channel.eventLoop)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(SlowClientDeadline.RawSide(deadline.value))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            // After the HTTP codec (which HTTP1Channel's setup added last but for the state
            // handler), before the request handling.
            let codec = try channel.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
            try channel.pipeline.syncOperations.addHandler(SlowClientDeadline.PartSide(deadline.value), position: .after(codec.handler))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
