import CoreMetrics
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
public import ServiceLifecycle
import Synchronization

/// navlogd's counters and latency histograms through swift-metrics, served in Prometheus's text
/// format at `http://ADDRESS/metrics` (`metricsAddress`, opt-in, loopback only) as a `Service`.
///
/// Latencies (fsync, ack) are recorded as they happen (``DaemonMetrics``); counters and gauges
/// are brought up to date from ``DaemonStatistics`` at each scrape, so the hot paths keep one
/// place of accounting.
public final class MetricsServer: Service, Sendable {
    private let host: String
    private let port: Int
    private let registry: PrometheusCollectorRegistry
    private let statistics: DaemonStatistics
    private let writer: LogWriter
    private let logger: Logger
    private let last = Mutex(DaemonStatistics.Snapshot())

    init(host: String, port: Int, registry: PrometheusCollectorRegistry, statistics: DaemonStatistics, writer: LogWriter, logger: Logger) {
        self.host = host
        self.port = port
        self.registry = registry
        self.statistics = statistics
        self.writer = writer
        self.logger = logger
    }

    /// `host:port` of a loopback address, or a sentence saying what is wrong.
    static func parse(_ address: String) -> Result<(String, Int), ConfigurationError> {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (1...65_535).contains(port) else {
            return .failure(ConfigurationError(message: "metricsAddress \"\(address)\" is not HOST:PORT (for example 127.0.0.1:9477)."))
        }
        let host = String(address[..<colon].filter { $0 != "[" && $0 != "]" })
        guard host == "127.0.0.1" || host == "localhost" || host == "::1" || host.hasPrefix("127.") else {
            return .failure(
                ConfigurationError(
                    message:
                        "metricsAddress \"\(address)\" is not a loopback address: navlogd serves its metrics on loopback only (127.0.0.1 or ::1); put a proxy in front to export them."
                ))
        }
        return .success((host, port))
    }

    public func run() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(MetricsHTTPHandler(scrape: { self.scrape() }))
                }
            }
            .bind(host: host, port: port).get()
        logger.info("Serving metrics on http://\(host):\(port)/metrics.")
        try? await gracefulShutdown()
        try? await server.close()
    }

    /// The metrics now, in Prometheus's text format.
    func scrape() -> [UInt8] {
        var now = statistics.snapshot()
        now.writerQueueBytes = writer.queuedBytes
        now.lagEvents += writer.queuedEvents
        let previous = last.withLock { last in
            defer { last = now }
            return last
        }
        func count(_ label: String, _ value: Int, _ before: Int, _ dimensions: [(String, String)] = []) {
            if value > before { Counter(label: label, dimensions: dimensions).increment(by: value - before) }
        }
        count("navlogd_connections_total", now.connectionsTotal, previous.connectionsTotal)
        count("navlogd_connections_refused_total", now.refused, previous.refused, [("cause", "access")])
        count("navlogd_connections_refused_total", now.overLimit, previous.overLimit, [("cause", "limit")])
        count("navlogd_events_stored_total", now.accepted, previous.accepted)
        count("navlogd_events_duplicate_total", now.duplicates, previous.duplicates)
        count("navlogd_events_rate_limited_total", now.rateLimited, previous.rateLimited)
        count("navlogd_events_store_refused_total", now.storeRefusedEvents, previous.storeRefusedEvents)
        count("navlogd_sequence_lost_total", now.lost, previous.lost)
        count("navlogd_bytes_in_total", now.bytesIn, previous.bytesIn)
        count("navlogd_fsyncs_total", now.fsyncs, previous.fsyncs)
        count("navlogd_store_failures_total", now.storeFailures, previous.storeFailures)
        count("navlogd_read_pauses_total", now.readPausesWriterBehind, previous.readPausesWriterBehind, [("cause", "writer_behind")])
        count("navlogd_read_pauses_total", now.readPausesUnreadReplies, previous.readPausesUnreadReplies, [("cause", "unread_replies")])
        count("navlogd_segments_compacted_total", now.segmentsCompacted, previous.segmentsCompacted, [])
        count("navlogd_reports_dropped_total", now.reportsDropped, previous.reportsDropped)
        for (reason, value) in now.rejected {
            count("navlogd_lines_rejected_total", value, previous.rejected[reason] ?? 0, [("reason", reason)])
        }
        Gauge(label: "navlogd_connections").record(now.connections)
        Gauge(label: "navlogd_sequence_missing").record(now.missing)
        Gauge(label: "navlogd_sessions_tracked").record(now.sessionsTracked)
        Gauge(label: "navlogd_lag_events").record(now.lagEvents)
        Gauge(label: "navlogd_writer_queue_bytes").record(now.writerQueueBytes)
        Gauge(label: "navlogd_store_error").record(now.storeError == nil ? 0 : 1)
        var output: [UInt8] = []
        registry.emit(into: &output)
        return output
    }
}

/// The latencies navlogd records as they happen (swift-metrics timers: Prometheus histograms).
/// Created on first use, after `MetricsSystem.bootstrap` (no-ops when metrics are off).
enum DaemonMetrics {
    /// From a batch handed to the writer to its ack being ready (after the fsync for durable).
    static let ackLatency = Timer(label: "navlogd_ack_latency_seconds")
    /// One fsync round of the log.
    static let fsyncDuration = Timer(label: "navlogd_fsync_duration_seconds")
}

/// Answers `GET /metrics`; everything else is 404 (read-only, nothing else served).
private final class MetricsHTTPHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let scrape: @Sendable () -> [UInt8]
    private let path = Mutex<String?>(nil)

    init(scrape: @escaping @Sendable () -> [UInt8]) {
        self.scrape = scrape
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path.withLock { $0 = head.method == .GET ? head.uri : nil }
        case .body:
            break
        case .end:
            let uri = path.withLock { $0 }
            let found = uri == "/metrics" || uri?.hasPrefix("/metrics?") == true
            let body = found ? scrape() : Array("navlogd serves GET /metrics only.\n".utf8)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
            headers.add(name: "Content-Length", value: "\(body.count)")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
