import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NavlogAnalytics
import NavlogEvents
import NavlogStore

/// The JSON endpoints behind the pages (schemas/viewer-api.schema.json describes each answer).
/// All are GET and read only.
struct ViewerAPI: Sendable {
    let data: ViewerData

    func register(on router: Router<BasicRequestContext>) {
        let data = self.data
        router.get("/api/sessions") { request, _ in
            try await Self.answer {
                let query = try Self.sessionsQuery(request.uri.queryParameters)
                return try await data.derived { try $0.sessionsPage(query) }
            }
        }
        router.get("/api/sessions/:session/events") { request, context in
            try await Self.answer {
                let session = try Self.session(context)
                let from = try Self.integer(request.uri.queryParameters, "from") ?? 0
                guard let body = try await data.interactive({ try $0.timeline(session: session, from: from) }) else {
                    throw ViewerRequestError.noEvents(of: session)
                }
                return body
            }
        }
        router.get("/api/sessions/:session/state") { request, context in
            try await Self.answer {
                let session = try Self.session(context)
                let parameters = request.uri.queryParameters
                let index = try Self.integer(parameters, "index")
                let sequence = try Self.integer(parameters, "seq")
                if index != nil && sequence != nil { throw ViewerRequestError(status: 400, message: "Give index or seq, not both.") }
                return try await data.interactive { engine in
                    if let sequence { return try engine.state(session: session, sequence: UInt64(sequence)) }
                    return try engine.state(session: session, index: index)
                }
            }
        }
        router.get("/api/sessions/:session/step") { request, context in
            try await Self.answer {
                let session = try Self.session(context)
                guard let index = try Self.integer(request.uri.queryParameters, "index") else {
                    throw ViewerRequestError(status: 400, message: "Give index=K, the event's 0-based position in the session.")
                }
                return try await data.interactive { try $0.step(session: session, index: index) }
            }
        }
        router.get("/api/sessions/:session/live") { request, context in
            let session = try Self.session(context)
            // `after`: the LSN the page's timeline answer was read at, so nothing stored between
            // that answer and this stream is missed.
            let after = try Self.integer(request.uri.queryParameters, "after").map(UInt64.init)
            let known = try Self.integer(request.uri.queryParameters, "known")
            return Self.liveStream(session: session, after: after, known: known, data: data)
        }
        router.get("/api/analytics") { request, _ in
            try await Self.answer {
                let query = try Self.analyticsQuery(request.uri.queryParameters)
                return try await data.derived { try $0.analytics(query) }
            }
        }
        router.get("/api/storyboards") { _, _ in
            try await Self.answer { try await data.derived { try $0.storyboardCoverage() } }
        }
    }

    /// The session id of the path, percent-decoded: ids may hold any character, `/` included.
    static func session(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("session")
        guard let decoded = raw.removingPercentEncoding else {
            throw ViewerRequestError(status: 400, message: "The session id in the address is not valid percent-encoding: \(raw).")
        }
        return decoded
    }

    /// Runs `work` and turns its bytes, or its error, into a response.
    static func answer(_ work: () async throws -> [UInt8]) async throws -> Response {
        do {
            return ViewerResponses.json(try await work())
        } catch let error as ViewerRequestError {
            return ViewerResponses.error(status: HTTPResponse.Status(code: error.status), error.message)
        } catch let error as StoreError {
            return ViewerResponses.error(status: .internalServerError, "Reading the log failed: \(error.message)")
        }
    }

    /// A query parameter that must be a whole number ≥ 0 when present.
    static func integer(_ parameters: FlatDictionary<Substring, Substring>, _ name: Substring) throws -> Int? {
        guard let text = parameters[name] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw ViewerRequestError(status: 400, message: "\(name) must be a whole number ≥ 0, not '\(text)'.")
        }
        return value
    }

    /// A time parameter: µs since the epoch or an RFC 3339 date-time.
    static func time(_ parameters: FlatDictionary<Substring, Substring>, _ name: Substring) throws -> Int64? {
        guard let text = parameters[name], !text.isEmpty else { return nil }
        if let value = Int64(text) { return value }
        if let value = RFC3339.microseconds(String(text)) { return value }
        throw ViewerRequestError(status: 400, message: "\(name) must be µs since the epoch or an RFC 3339 time such as 2025-11-21T09:00:00Z, not '\(text)'.")
    }

    static func text(_ parameters: FlatDictionary<Substring, Substring>, _ name: Substring) -> String? {
        guard let value = parameters[name], !value.isEmpty else { return nil }
        return String(value)
    }

    static func sessionsQuery(_ parameters: FlatDictionary<Substring, Substring>) throws -> SessionsQuery {
        var query = SessionsQuery()
        query.app = text(parameters, "app")
        query.version = text(parameters, "version")
        query.device = text(parameters, "device")
        query.idiom = text(parameters, "idiom")
        query.search = text(parameters, "q")
        query.withAnomalies = parameters["anomalies"] == "1"
        query.liveOnly = parameters["live"] == "1"
        if let sort = text(parameters, "sort") {
            guard SessionsQuery.sortKeys.contains(sort.hasPrefix("-") ? String(sort.dropFirst()) : sort) else {
                throw ViewerRequestError(
                    status: 400, message: "sort takes one of \(SessionsQuery.sortKeys.sorted().joined(separator: ", ")), with - in front for descending; not '\(sort)'.")
            }
            query.sort = sort
        }
        query.offset = try integer(parameters, "offset") ?? 0
        query.limit = min(try integer(parameters, "limit") ?? 50, 500)
        return query
    }

    static func analyticsQuery(_ parameters: FlatDictionary<Substring, Substring>) throws -> AnalyticsQuery {
        var query = AnalyticsQuery()
        let since = try time(parameters, "since")
        let until = try time(parameters, "until")
        query.filter = AnalyticsFilter(since: since, until: until, app: text(parameters, "app"), version: text(parameters, "version"), idiom: text(parameters, "idiom"))
        var steps: [String] = []
        for (name, value) in parameters where name == "step" && !value.isEmpty { steps.append(String(value)) }
        query.steps = steps
        if query.steps.count == 1 { throw ViewerRequestError(status: 400, message: "A funnel needs at least two steps (step=A&step=B).") }
        if let within = try integer(parameters, "within") { query.within = Int64(within) * 1_000_000 }
        if let buckets = try integer(parameters, "buckets") { query.buckets = min(max(buckets, 1), 500) }
        return query
    }

    /// Server-sent events for a session still being recorded, checked four times a second:
    /// `event: events` with the number of new events whenever navlogd stores some; with `known`
    /// (the number of events the page has), `event: timeline` instead, carrying the timeline from
    /// that event on (the answer of `/events?from=known`), which saves the page a request. A
    /// comment every 5 s keeps proxies from closing the connection. Ends when the client goes away
    /// (seen at the next write) or the server stops.
    static func liveStream(session: String, after: UInt64?, known: Int?, data: ViewerData) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        let body = ResponseBody { writer in
            var seen: UInt64
            if let after {
                seen = after
            } else {
                seen = try await data.interactive { engine in
                    try engine.catchUp()
                    return engine.newestLSN
                }
            }
            var known = known
            var quiet = 0
            try await writer.write(ByteBuffer(string: "retry: 1000\n: navlog live \(session)\n\n"))
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(250))
                let after = seen
                let from = known
                let (count, newest, timeline) = try await data.interactive { engine -> (Int, UInt64, [UInt8]?) in
                    let (count, newest) = try engine.newEvents(session: session, after: after)
                    guard count > 0, let from else { return (count, newest, nil) }
                    return (count, newest, try engine.timeline(session: session, from: from))
                }
                seen = newest
                if count > 0 {
                    quiet = 0
                    if var timeline {
                        // The timeline is one line of JSON (strings escape their line breaks).
                        timeline.insert(contentsOf: Array("event: timeline\ndata: ".utf8), at: 0)
                        timeline.append(contentsOf: Array("\n\n".utf8))
                        try await writer.write(ByteBuffer(bytes: timeline))
                        known = (known ?? 0) + count
                    } else {
                        try await writer.write(ByteBuffer(string: "event: events\ndata: {\"new\":\(count),\"through\":\(newest)}\n\n"))
                    }
                } else {
                    quiet += 1
                    if quiet % 20 == 0 { try await writer.write(ByteBuffer(string: ": still here\n\n")) }
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
