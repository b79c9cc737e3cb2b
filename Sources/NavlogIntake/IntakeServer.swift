import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NavlogEvents
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `navlog intake`: devices `POST /v1/events` with a bearer key; each body's lines are relayed
/// to navlogd as that key's events, and the answer waits for navlogd's durable ack, so a
/// `200` means every stored line is on disk and the client may delete its copy.
public struct IntakeServer: Sendable {
    /// What it serves and where.
    public let configuration: IntakeConfiguration
    let keys: IntakeKeyStore
    let relay: RelayPool
    let keyLimits = RateLimiter()
    let addressLimits = RateLimiter()
    let metrics = IntakeMetrics()
    let logger: Logger

    /// Loads the keys and prepares the navlogd connections (opened on first use).
    /// - Throws: ``IntakeKeys/LoadError`` when the key file cannot be used.
    public init(configuration: IntakeConfiguration, logger: Logger) throws {
        try self.init(configuration: configuration, keys: IntakeKeyStore(path: configuration.keysPath), logger: logger)
    }

    /// An intake with keys given in memory (tests).
    init(configuration: IntakeConfiguration, keys: IntakeKeyStore, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.keys = keys
        relay = RelayPool(
            socketPath: configuration.socketPath, group: MultiThreadedEventLoopGroup.singleton, maximumConnections: configuration.relayConnections,
            maximumWaiters: configuration.maximumWaitingRequests, timeout: .seconds(configuration.relayTimeoutSeconds))
    }

    /// Serves until SIGINT or SIGTERM (in-flight requests finish first); SIGHUP reloads the
    /// keys. `announce` is told the URL once listening.
    public func run(announce: @escaping @Sendable (String) -> Void) async throws {
        let host = configuration.host
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let application = Application(
            router: makeRouter(),
            server: try serverBuilder(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "navlog-intake"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]" : host
                announce("\(scheme)://\(shown):\(port)")
            },
            logger: logger
        )
        let reloader = KeyReloadService(keys: keys, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: application), .init(service: reloader)]
        if let metricsHost = configuration.metricsHost {
            let registry = metrics.registry
            let router = Router()
            router.get("/metrics") { _, _ in
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; version=0.0.4"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
            let metricsServer = Application(
                router: router,
                configuration: ApplicationConfiguration(address: .hostname(metricsHost, port: configuration.metricsPort), serverName: "navlog-intake-metrics"),
                logger: logger)
            services.append(.init(service: metricsServer))
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        await relay.closeAll()
    }

    private func serverBuilder() throws -> HTTPServerBuilder {
        let configuration = self.configuration
        let plain = HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                responder: responder, idleTimeout: .seconds(configuration.idleTimeoutSeconds), headTimeout: .seconds(configuration.headTimeoutSeconds),
                bodyTimeout: .seconds(configuration.bodyTimeoutSeconds))
        }
        guard let certificatePath = configuration.tlsCertificatePath else { return plain }
        guard let keyPath = configuration.tlsKeyPath else {
            throw IntakeStartError(message: "--tls-cert needs --tls-key (the certificate's private key, PEM).")
        }
        let tls: TLSConfiguration
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
            guard !chain.isEmpty else { throw IntakeStartError(message: "\(certificatePath) holds no PEM certificate.") }
            tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: keyPath, format: .pem)))
        } catch let error as IntakeStartError {
            throw error
        } catch {
            throw IntakeStartError(
                message: "The TLS certificate \(certificatePath) or key \(keyPath) cannot be used (\(error)). Give PEM files: the chain, then its unencrypted private key.")
        }
        return try .tls(plain, tlsConfiguration: tls)
    }

    /// The routes: `POST /v1/events` and `GET /healthz`.
    func makeRouter() -> Router<IntakeRequestContext> {
        let router = Router(context: IntakeRequestContext.self)
        router.post("/v1/events") { request, context in
            await self.receive(request, context: context)
        }
        router.get("/healthz") { _, _ in
            if let failure = await self.relay.probe() {
                return IntakeResponses.error(.serviceUnavailable, code: "unavailable", failure.message + ".", retryAfter: self.configuration.unavailableRetryAfterSeconds)
            }
            return IntakeResponses.json(Array("{\"status\":\"ok\"}\n".utf8))
        }
        return router
    }
}

/// A request's context: Hummingbird's, plus the peer address (for the per-address limit).
struct IntakeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's peer.
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// `navlog intake` cannot start as configured.
public struct IntakeStartError: Error, Sendable, CustomStringConvertible {
    /// What happened and what to do.
    public var message: String
    public var description: String { message }
}

/// Reloads the keys on SIGHUP: connections stay open, the next request sees the new keys; a
/// file that cannot be read keeps the old keys and says why.
struct KeyReloadService: Service {
    let keys: IntakeKeyStore
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            do {
                let count = try keys.reload()
                logger.notice("Reloaded \(count) keys from \(keys.path ?? "memory").")
            } catch {
                logger.error("Kept the keys in force: \(error.message)")
            }
        }
    }
}

extension TimeAmount {
    /// A duration given in (fractional) seconds.
    static func seconds(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1e9))
    }
}
