import Foundation  // JSONEncoder for the stats reply (control path only)
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NavlogEvents
import NavlogStore
public import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket as a `Service`: binds (or adopts systemd's socket), tells systemd it is
/// ready, serves connections, and on graceful shutdown stops accepting, lets connections hand
/// what they already read to the writer, and closes them.
public final class SocketServer: Service, Sendable {
    private let configuration: DaemonConfiguration
    private let writer: LogWriter
    private let statistics: DaemonStatistics
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let environment: [String: String]

    init(configuration: DaemonConfiguration, writer: LogWriter, statistics: DaemonStatistics, logger: Logger, environment: [String: String]) {
        self.configuration = configuration
        self.writer = writer
        self.statistics = statistics
        self.logger = logger
        self.notifier = SystemdNotifier(environment: environment)
        self.environment = environment
    }

    public func run() async throws {
        let threads = configuration.eventLoopThreads > 0 ? configuration.eventLoopThreads : System.coreCount
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let children = ChildChannels()
        let statistics = self.statistics
        let dataDirectory = configuration.dataDirectory
        let writer = self.writer
        let control: @Sendable (String) -> ByteBuffer? = { name in
            guard name == "stats" else { return nil }
            var snapshot = statistics.snapshot()
            snapshot.lagEvents += writer.queuedEvents
            snapshot.writerQueueBytes = writer.queuedBytes
            // Size on disk from the directory itself (never waits for the writer).
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
            snapshot.segments = names.filter { $0.hasSuffix(".zst") }.count
            snapshot.bytesOnDisk = names.filter { $0.hasSuffix(".zst") || $0.hasSuffix(".idx") }.reduce(0) { total, name in
                total + ((try? FileManager.default.attributesOfItem(atPath: dataDirectory + "/" + name)[.size] as? Int) ?? 0)
            }
            var data = (try? JSONEncoder().encode(snapshot)) ?? Data("{}".utf8)
            data.append(0x0A)
            return ByteBuffer(bytes: data)
        }
        let readBudget = SharedReadBudget(budget: configuration.maximumQueuedBytes)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 1024)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 8 << 10, high: 32 << 10))
            // A client may shut down its sending side and still read its acks.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [configuration, writer, logger] channel in
                children.add(channel)
                readBudget.opened()
                channel.closeFuture.whenComplete { _ in
                    children.remove(channel)
                    readBudget.closed()
                }
                return channel.eventLoop.makeCompletedFuture {
                    // Reads sized by the connection's share of the daemon-wide budget.
                    try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: readBudget.allocator)
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionHandler(
                            writer: writer, statistics: statistics, configuration: configuration, logger: logger, readBudget: readBudget, control: control)
                    )
                }
            }
        let server: any Channel
        if let descriptor = SocketActivation.inheritedSocket(environment: environment) {
            server = try await bootstrap.withBoundSocket(descriptor).get()
            logger.info("Serving the socket systemd passed (fd \(descriptor)).")
        } else {
            // Create the socket file with the configured mode from the start: with a chmod after
            // bind, a peer the mode excludes could connect in between. (Nothing else creates
            // files at this point: recovery is done and no event can arrive before the bind.)
            let mode = mode_t(configuration.socketModeValue ?? 0o660)
            let previousMask = umask(~mode & 0o777)
            defer { umask(previousMask) }
            server = try await bootstrap.bind(unixDomainSocketPath: configuration.socketPath, cleanupExistingSocketFile: true).get()
            umask(previousMask)
            chmod(configuration.socketPath, mode)
            logger.info("Listening on \(configuration.socketPath), writing to \(configuration.dataDirectory).")
        }
        notifier.notify("READY=1\nSTATUS=Accepting events on \(configuration.socketPath)")
        let watchdog = SystemdNotifier.watchdogInterval(environment: environment)
        await withTaskGroup(of: Void.self) { tasks in
            if let interval = watchdog {
                tasks.addTask { [notifier] in
                    while !Task.isCancelled {
                        notifier.notify("WATCHDOG=1")
                        try? await Task.sleep(for: .seconds(interval))
                    }
                }
            }
            tasks.addTask { [notifier, statistics] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(5))
                    let snapshot = statistics.snapshot()
                    if let storeError = snapshot.storeError {
                        notifier.notify("STATUS=Refusing events since \(snapshot.storeErrorSince ?? "now"), the log cannot be written: \(storeError)")
                    } else {
                        notifier.notify("STATUS=\(snapshot.connections) connections, \(snapshot.accepted) events stored")
                    }
                }
            }
            try? await gracefulShutdown()
            tasks.cancelAll()
        }
        notifier.notify("STOPPING=1\nSTATUS=Draining connections")
        logger.info("Stopping: no new connections; draining open ones.")
        try? await server.close()
        // Every byte a connection already read was handed to the writer synchronously; closing
        // now drops only partial lines (incomplete events).
        await children.closeAll()
        // The writer stores and fsyncs what is queued before the event loops end: each batch's
        // completion runs on its connection's loop, and a loop that has shut down cannot take
        // it (NIO says so for each one; with a thousand connections' batches queued, hundreds).
        // The writer service's own stop then finds it stopped and reports how it ended.
        _ = await waitOffThePool { writer.stop() }
        try? await group.shutdownGracefully()
    }
}

/// The open client channels, so shutdown can close them.
final class ChildChannels: Sendable {
    private let channels = NIOLockedValueBox([ObjectIdentifier: any Channel]())

    func add(_ channel: any Channel) { channels.withLockedValue { $0[ObjectIdentifier(channel)] = channel } }
    func remove(_ channel: any Channel) { _ = channels.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) } }

    /// Closes every connection. Acks already sent were flushed when they were written; a
    /// client that is not reading cannot hold the stop up, because nothing waits for its
    /// pending replies (events in flight are stored regardless, and a resend is deduplicated).
    func closeAll() async {
        let open = channels.withLockedValue { Array($0.values) }
        for channel in open {
            try? await channel.close().get()
        }
    }
}
