import Hummingbird
import NIOCore
import NavlogEvents

/// The intake's answers: JSON bodies that say what happened and what to do.
enum IntakeResponses {
    /// `200` with `{"stored":N,"duplicates":N,"rejected":[…]}`: every stored line is durable.
    static func accepted(_ outcome: RelayOutcome) -> Response {
        var json: [UInt8] = []
        json.reserveCapacity(64 + outcome.rejected.count * 96)
        json.append(contentsOf: "{\"stored\":\(outcome.stored),\"duplicates\":\(outcome.duplicates),\"rejected\":[".utf8)
        for (index, rejection) in outcome.rejected.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(contentsOf: "{\"line\":\(rejection.line),\"code\":".utf8)
            EventJSONWriter.appendString(rejection.code, to: &json)
            if let field = rejection.field {
                json.append(contentsOf: ",\"field\":".utf8)
                EventJSONWriter.appendString(field, to: &json)
            }
            if let column = rejection.column { json.append(contentsOf: ",\"column\":\(column)".utf8) }
            json.append(contentsOf: ",\"reason\":".utf8)
            EventJSONWriter.appendString(rejection.reason, to: &json)
            json.append(UInt8(ascii: "}"))
        }
        json.append(contentsOf: "]}\n".utf8)
        return Self.json(json)
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
        var json: [UInt8] = Array("{\"error\":".utf8)
        EventJSONWriter.appendString(code, to: &json)
        if let line { json.append(contentsOf: ",\"line\":\(line)".utf8) }
        if let retryAfter { json.append(contentsOf: ",\"retryAfter\":\(retryAfter)".utf8) }
        json.append(contentsOf: ",\"reason\":".utf8)
        EventJSONWriter.appendString(message, to: &json)
        json.append(contentsOf: "}\n".utf8)
        var response = Self.json(json, status: status)
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
