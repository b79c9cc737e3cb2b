import HTTPTypes
import Hummingbird
import HummingbirdCore
import Synchronization

/// Who may read: with a token, a request needs `Authorization: Bearer TOKEN`, or the cookie
/// that the one-time login link sets. Without one, everyone who can connect (loopback only:
/// ``ViewerServer`` refuses a wider address without a token).
struct ViewerAccess: Sendable {
    /// The cookie that a used login link sets.
    static let cookieName = "navlog_viewer"

    let token: String?
    /// The value of the cookie: a random secret of this server's run, not the token itself
    /// (the token stays out of browsers' cookie stores).
    let cookieSecret: String
    /// The code of the one-time login link, spent by its first use.
    private let loginCode: LoginCode

    init(token: String?) {
        self.token = token
        cookieSecret = Self.randomSecret()
        loginCode = LoginCode(Self.randomSecret())
    }

    /// The login link's path and query (`/login?code=…`), or nil when no token is required.
    var loginPath: String? { token == nil ? nil : "/login?code=" + loginCode.code }

    /// Whether `request` may read.
    func allows(_ request: Request) -> Bool {
        guard let token else { return true }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return Self.constantTimeEqual(String(header.dropFirst(7)), token)
        }
        if let cookie = request.cookies[Self.cookieName] {
            return Self.constantTimeEqual(cookie.value, cookieSecret)
        }
        return false
    }

    /// Spends the login code if `code` is it.
    func useLoginCode(_ code: String) -> Bool { loginCode.spend(code) }

    /// Compares without stopping at the first difference, so that timing tells nothing of a secret.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }

    /// 32 random bytes as hex, from the system's generator.
    static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }
}

/// The one-time login code and whether it was used.
private final class LoginCode: Sendable {
    let code: String
    private let spent = Mutex(false)

    init(_ code: String) { self.code = code }

    func spend(_ candidate: String) -> Bool {
        guard ViewerAccess.constantTimeEqual(candidate, code) else { return false }
        return spent.withLock { spent in
            defer { spent = true }
            return !spent
        }
    }
}

/// Turns away requests ``ViewerAccess`` does not allow, and adds the headers every answer
/// carries: a content security policy that runs only the viewer's own scripts (so that a class
/// name or title from an event can never run as code, even if a page forgot to escape it), no
/// sniffing of types, no referrer, no framing.
struct ViewerAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: ViewerAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if request.uri.path == "/login" || access.allows(request) {
            response = try await next(request, context)
        } else {
            response = ViewerResponses.error(
                status: .unauthorized,
                "This navlog viewer needs its token: open the one-time link navlog serve printed, or send the header 'Authorization: Bearer TOKEN'.")
        }
        response.headers[ViewerResponses.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        response.headers[ViewerResponses.xContentTypeOptions] = "nosniff"
        response.headers[ViewerResponses.referrerPolicy] = "no-referrer"
        response.headers[ViewerResponses.xFrameOptions] = "DENY"
        return response
    }
}
