import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import NavlogIntake

/// The routes in process (HummingbirdTesting), for the answers that never reach navlogd; the
/// end-to-end tests with a real navlogd are Tests/intake/test_intake.py.
@Suite("The intake's answers before navlogd")
struct IntakeRouterTests {
    static let secret = "0123456789abcdef-router"

    static func server(socket: String = "/nonexistent/navlogd.sock") throws -> IntakeServer {
        var configuration = IntakeConfiguration(socketPath: socket, host: "127.0.0.1", port: 0, keysPath: "")
        configuration.maximumLineBytes = 100
        return IntakeServer(
            configuration: configuration, keys: IntakeKeyStore(keys: try IntakeKeys(keys: [("ios", secret)])), logger: Logger(label: "test"))
    }

    static func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }

    @Test("no key or a wrong key: 401 with the challenge")
    func unauthorized() async throws {
        let app = Application(router: try Self.server().makeRouter())
        try await app.test(.router) { client in
            try await client.execute(uri: "/v1/events", method: .post, body: ByteBuffer(string: "{}\n")) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer realm=\"navlog\"")
                #expect(Self.json(response.body)["error"] as? String == "unauthorized")
            }
            try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer nope-nope-nope-nope"], body: ByteBuffer(string: "{}\n")) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test("encodings and limits: 415, 400, 413 naming the line")
    func refusals() async throws {
        let app = Application(router: try Self.server().makeRouter())
        let auth: HTTPFields = [.authorization: "Bearer \(Self.secret)"]
        try await app.test(.router) { client in
            var headers = auth
            headers[.contentEncoding] = "br"
            try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: "x\n")) { #expect($0.status == .unsupportedMediaType) }
            headers[.contentEncoding] = "gzip"
            try await client.execute(uri: "/v1/events", method: .post, headers: headers, body: ByteBuffer(string: "not gzip\n")) { response in
                #expect(response.status == .badRequest)
                #expect(Self.json(response.body)["error"] as? String == "malformed-body")
            }
            let body = "{\"type\":\"mark\"}\n" + String(repeating: "x", count: 101) + "\n"
            try await client.execute(uri: "/v1/events", method: .post, headers: auth, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .contentTooLarge)
                #expect(Self.json(response.body)["line"] as? Int == 2)
            }
        }
    }

    @Test("navlogd away: 503 with Retry-After, and /healthz says so")
    func unavailable() async throws {
        let app = Application(router: try Self.server().makeRouter())
        try await app.test(.router) { client in
            let line = #"{"type":"mark","session":"s","seq":1,"name":"n"}"# + "\n"
            try await client.execute(uri: "/v1/events", method: .post, headers: [.authorization: "Bearer \(Self.secret)"], body: ByteBuffer(string: line)) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "5")
                #expect((Self.json(response.body)["reason"] as? String)?.contains("Nothing of the body was stored") == true)
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .serviceUnavailable) }
        }
    }
}
