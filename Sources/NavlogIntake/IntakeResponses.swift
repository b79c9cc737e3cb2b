import Hummingbird
import NIOCore
import NavlogJSON

/// The intake's answers: JSON bodies that say what happened and what to do.
enum IntakeResponses {
    /// `200` with `{"stored":N,"duplicates":N,"rejected":[…]}`: every stored line is durable.
    static func accepted(_ outcome: RelayOutcome) -> Response {
        var json = JSONWriter()
        json.bytes.reserveCapacity(64 + outcome.rejected.count * 96)
        json.raw("{\"stored\":")
        json.integer(outcome.stored)
        json.member("duplicates", outcome.duplicates)
        json.key("rejected")
        json.array(outcome.rejected) { json, rejection in
            json.raw("{\"line\":")
            json.integer(rejection.line)
            json.member("code", rejection.code)
            if let field = rejection.field { json.member("field", field) }
            if let column = rejection.column { json.member("column", column) }
            json.member("reason", rejection.reason)
            json.raw("}")
        }
        json.raw("}\n")
        return Self.json(json.bytes)
    }

    /// `401` with the `WWW-Authenticate` challenge.
    static func unauthorized(_ message: String) -> Response {
        var response = error(.unauthorized, code: "unauthorized", message)
        response.headers[.wwwAuthenticate] = "Bearer realm=\"navlog\""
        return response
    }

    /// An error status with `{"error":code,"reason":message}` (and the line at fault, when one
    /// is); `retryAfter` sets `Retry-After`; `close` asks the client to close the connection
    /// (the rest of a refused large body is not worth reading).
    static func error(_ status: HTTPResponse.Status, code: String, _ message: String, line: Int? = nil, retryAfter: Int? = nil, close: Bool = false) -> Response {
        var json = JSONWriter()
        json.raw("{\"error\":")
        json.string(code)
        if let line { json.member("line", line) }
        if let retryAfter { json.member("retryAfter", retryAfter) }
        json.member("reason", message)
        json.raw("}\n")
        var response = Self.json(json.bytes, status: status)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        if close { response.headers[.connection] = "close" }
        return response
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
