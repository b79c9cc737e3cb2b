import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NavlogAnalytics
import NavlogJSON
import NavlogStore
import NavlogStoryboard

/// `navlog serve`: the read-only web viewer over a data directory: the sessions, a session's
/// timeline with its hierarchy at any instant (live while it is recorded), analytics, and the
/// storyboards' coverage. Pages are static files that fetch the JSON endpoints (schemas/).
public struct ViewerServer: Sendable {
    /// What it serves and where.
    public let configuration: ViewerConfiguration
    let data: ViewerData
    let assets: ViewerAssets
    let access: ViewerAccess

    /// Opens the log and loads the web files.
    /// - Throws: ``ViewerServerError`` for a listener wider than loopback without a token;
    ///   ``StoreError`` when the log cannot be opened; ``ViewerAssetsError`` without web files.
    public init(configuration: ViewerConfiguration) throws {
        if !ViewerConfiguration.isLoopback(configuration.host) && configuration.token == nil {
            throw ViewerServerError(
                message:
                    "Listening on \(configuration.host) lets other machines read every session. Give --token SECRET (clients send it as 'Authorization: Bearer SECRET'), or listen on 127.0.0.1."
            )
        }
        // A storyboard that cannot be read is said at start, not when someone opens the page.
        for path in configuration.storyboards {
            do {
                _ = try Storyboard.load(path: path)
            } catch {
                throw ViewerServerError(message: "The storyboard \(path) cannot be read: \(error). Check the --storyboard paths.")
            }
        }
        self.configuration = configuration
        data = try ViewerData(dataDirectory: configuration.dataDirectory, indexDirectory: configuration.indexDirectory, storyboards: configuration.storyboards)
        assets = try ViewerAssets()
        access = ViewerAccess(token: configuration.token)
    }

    /// Serves until SIGINT or SIGTERM. `announce` is told the address once listening (with the
    /// port chosen when 0 was asked) and the one-time login path when a token is required.
    public func run(announce: @escaping @Sendable (_ url: String, _ loginPath: String?) -> Void) async throws {
        var logger = Logger(label: "navlog.serve")
        logger.logLevel = .warning
        let host = configuration.host
        let loginPath = access.loginPath
        let application = Application(
            router: makeRouter(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "navlog"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shown = host.contains(":") ? "[\(host)]" : host
                announce("http://\(shown):\(port)", loginPath)
            },
            logger: logger
        )
        try await application.runService()
    }

    /// The routes: pages, their files, the JSON endpoints, and the login link.
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ViewerAccessMiddleware(access: access))
        let assets = self.assets
        let data = self.data
        func page(_ name: String) -> @Sendable (Request, BasicRequestContext) async throws -> Response {
            { _, _ in ViewerResponses.asset(assets.asset(name)) }
        }
        router.get("/", use: page("sessions.html"))
        router.get("/sessions", use: page("sessions.html"))
        router.get("/sessions/:session", use: page("session.html"))
        router.get("/analytics", use: page("analytics.html"))
        router.get("/storyboards", use: page("storyboards.html"))
        router.get("/assets/:name") { _, context in
            ViewerResponses.asset(context.parameters.get("name").flatMap { assets.asset($0) })
        }
        router.get("/login") { request, _ in
            let code = request.uri.queryParameters.get("code") ?? ""
            guard access.useLoginCode(code) else {
                return ViewerResponses.error(
                    status: .unauthorized, "This login link was already used or is wrong. Restart navlog serve for a new one, or send 'Authorization: Bearer TOKEN'.")
            }
            var response = Response.redirect(to: "/", type: .found)
            response.setCookie(Cookie(name: ViewerAccess.cookieName, value: access.cookieSecret, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        ViewerAPI(data: data).register(on: router)
        return router
    }
}

/// `navlog serve` cannot start as configured.
public struct ViewerServerError: Error, Sendable, CustomStringConvertible {
    /// What happened and what to do.
    public var message: String
    public var description: String { message }
}

/// The responses every route builds.
enum ViewerResponses {
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!

    static func asset(_ asset: ViewerAssets.Asset?) -> Response {
        guard let asset else { return error(status: .notFound, "No such page or file.") }
        var headers = HTTPFields()
        headers[.contentType] = asset.contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `{"error": message}` with `status`.
    static func error(status: HTTPResponse.Status, _ message: String) -> Response {
        var json = JSONWriter()
        json.raw("{\"error\":")
        json.string(message)
        json.raw("}\n")
        return Self.json(json.bytes, status: status)
    }
}
