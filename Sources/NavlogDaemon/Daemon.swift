public import Logging
import Metrics
import NavlogStore
import Prometheus
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// navlogd assembled: the log writer and the socket server in one `ServiceGroup` that turns
/// SIGTERM and SIGINT into a graceful stop (stop accepting, drain, flush, fsync, exit 0).
public struct Daemon: Sendable {
    /// The settings in force.
    public let configuration: DaemonConfiguration
    /// The counters `navlog stats` reports.
    public let statistics = DaemonStatistics()

    /// Creates a daemon.
    public init(configuration: DaemonConfiguration) {
        self.configuration = configuration
    }

    /// Opens the log (recovering it) and runs until a signal stops it.
    /// - Throws: ``StoreError`` when the data directory cannot be opened, or a bind error.
    public func run(logger: Logger, environment: [String: String]) async throws {
        // A file size limit (ulimit -f, LimitFSIZE=) must make writes fail with EFBIG, which the
        // writer handles like a full disk, instead of killing the daemon with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        // Metrics first: the timers the writer records bind to the factory in force then.
        var metrics: (host: String, port: Int, registry: PrometheusCollectorRegistry)?
        if let address = configuration.metricsAddress {
            let (host, port) = try MetricsServer.parse(address).get()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            metrics = (host, port, registry)
        }
        let log = try EventLog(directory: configuration.dataDirectory, options: configuration.logOptions)
        let recovery = log.recovery
        if !recovery.isClean {
            for sentence in recovery.sentences { logger.warning("Recovering the log: \(sentence)") }
        }
        let writer = try LogWriter(
            log: log, statistics: statistics, flushInterval: configuration.flushIntervalSeconds, lossGrace: configuration.lossGraceSeconds,
            roundBytes: configuration.writerRoundBytes, roundLimitBytes: configuration.writerRoundLimitBytes, logger: logger)
        let writerService = WriterService(writer: writer)
        let server = SocketServer(configuration: configuration, writer: writer, statistics: statistics, logger: logger, environment: environment)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: writerService), .init(service: server)]
        if configuration.compactionIntervalSeconds > 0 {
            // After the writer: it stops before it, so nothing is installed after the writer's last round.
            services.append(
                .init(
                    service: CompactionService(
                        directory: configuration.dataDirectory, options: configuration.logOptions, interval: configuration.compactionIntervalSeconds,
                        writer: writer, statistics: statistics, logger: logger)))
        }
        if let metrics {
            services.append(
                .init(
                    service: MetricsServer(
                        host: metrics.host, port: metrics.port, registry: metrics.registry, statistics: statistics, writer: writer, logger: logger)))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // A stop that takes longer than this escalates to cancellation (the writer still
        // flushes what it holds before its thread exits).
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int(configuration.shutdownTimeoutSeconds * 1000))
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
    }
}
