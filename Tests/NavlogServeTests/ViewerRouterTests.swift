import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NavlogEvents
import NavlogStore
import NavlogTesting
import Testing

@testable import NavlogServe

/// `navlog serve`'s routes in process (HummingbirdTesting's router test client, no socket), over a
/// small log the test writes: two hand-written sessions whose hierarchy at each instant follows
/// from ../shared/spec/uikit-navigation-rules.md. Tests/browser drives the same pages in Chromium
/// and checks every answer against navlog replay; these check the answers themselves.
@Suite("navlog serve's routes, in process")
struct ViewerRouterTests {
    static let start: Int64 = 1_763_715_600_000_000
    static func at(_ seconds: Int64) -> Int64 { start + seconds * 1_000_000 }

    /// `shop/1` (an id with a `/`, as ids may have): a navigation controller becomes the window's
    /// root (empty: no screen, E3), the list is pushed at 1 s, the detail over it at 3 s (R8),
    /// popped at 6 s (R9), the session ends at 10 s. `pad-2`, a minute later on an iPad: the list
    /// at 61 s, then a pop of the root at 62 s (A9: nothing happens); not ended. No animation,
    /// so each change is complete at its event (E2 does not apply).
    static let lines: [String] = {
        func event(_ session: String, _ seq: Int, _ seconds: Int64, _ type: String, _ fields: String) -> String {
            #"{"type":"\#(type)","session":"\#(session)","seq":\#(seq),"ts":\#(at(seconds)),\#(fields)}"#
        }
        let nav = #""vc":{"id":"nav","class":"UINavigationController"}"#
        let list = #""nav":"nav","vc":{"id":"list","class":"ListViewController"},"animated":false"#
        return [
            event("shop/1", 1, 0, "session.start", #""app":"Shop","version":"2.0","device":"iPhone15,2","idiom":"phone""#),
            event("shop/1", 2, 0, "window.root", nav),
            event("shop/1", 3, 1, "nav.push", list),
            event("shop/1", 4, 3, "nav.push", #""nav":"nav","vc":{"id":"detail","class":"DetailViewController"},"animated":false"#),
            event("shop/1", 5, 6, "nav.pop", #""nav":"nav","animated":false"#),
            event("shop/1", 6, 10, "session.end", #""reason":"user""#),
            event("pad-2", 1, 60, "session.start", #""app":"Shop","version":"2.1","device":"iPad13,1","idiom":"pad""#),
            event("pad-2", 2, 60, "window.root", nav),
            event("pad-2", 3, 61, "nav.push", list),
            event("pad-2", 4, 62, "nav.pop", #""nav":"nav","animated":false"#),
        ]
    }()

    /// Writes ``lines`` to a log in a new directory (LSN 1 to 10, in this order) and runs `body`
    /// with a router test client of a viewer over it.
    static func withViewer(
        token: String? = nil, storyboards: [String] = [], _ body: @escaping @Sendable (any TestClientProtocol, ViewerServer) async throws -> Void
    ) async throws {
        try await TestEnvironment.withTemporaryDirectory { directory in
            var parser = EventLineParser()
            var batch = EventBatch()
            for (number, line) in lines.enumerated() { _ = try parser.parse(line, lineNumber: number + 1, into: &batch) }
            let log = try EventLog(directory: directory.path)
            _ = try log.append(batch)
            try log.close()
            let server = try ViewerServer(configuration: ViewerConfiguration(dataDirectory: directory.path, token: token, storyboards: storyboards))
            let app = Application(router: server.makeRouter())
            try await app.test(.router) { client in try await body(client, server) }
        }
    }

    /// A GET whose answer must be JSON with `status`: its object.
    static func getJSON(_ client: any TestClientProtocol, _ uri: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) async throws -> [String: Any] {
        let response = try await client.execute(uri: uri, method: .get, headers: headers)
        #expect(response.status == status, "\(uri): \(String(buffer: response.body))")
        #expect(response.headers[.contentType] == "application/json", "\(uri)")
        let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
        return try #require(object as? [String: Any], "\(uri) answers a JSON object")
    }

    /// A JSON value written with sorted keys, to compare two answers whatever their key order.
    static func canonical(_ value: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
    }

    /// The ids of a list of nodes or of sessions.
    static func ids(_ value: Any?, key: String = "id") -> [String]? {
        (value as? [[String: Any]])?.compactMap { $0[key] as? String }
    }

    /// The root of the state's first window.
    static func root(_ state: [String: Any]) -> [String: Any]? {
        ((state["windows"] as? [[String: Any]])?.first?["root"]) as? [String: Any]
    }

    // MARK: - Session state and timeline

    @Test("the state at each instant: the list alone, the detail pushed over it, the list again after the pop (R8, R9, F1–F3)")
    func stateAtEachInstant() async throws {
        try await Self.withViewer { client, _ in
            let listed = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?index=2")
            #expect(listed["session"] as? String == "shop/1")
            let windows = try #require(listed["windows"] as? [[String: Any]])
            #expect(windows.count == 1 && windows.first?["id"] as? String == "main", "window.root's default window")
            let nav = try #require(Self.root(listed))
            #expect(nav["id"] as? String == "nav" && nav["class"] as? String == "UINavigationController" && nav["kind"] as? String == "navigation")
            #expect(Self.ids(nav["stack"]) == ["list"])
            #expect(listed["focus"] as? String == "list")
            #expect(listed["focusPath"] as? [String] == ["nav", "list"])

            let pushed = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?index=3")
            let stack = try #require(Self.root(pushed)?["stack"] as? [[String: Any]])
            #expect(Self.ids(stack) == ["list", "detail"], "bottom first")
            #expect(stack.last?["class"] as? String == "DetailViewController" && stack.last?["kind"] as? String == "plain")
            #expect(pushed["focus"] as? String == "detail")
            #expect(pushed["focusPath"] as? [String] == ["nav", "detail"])
            #expect(Set(pushed["visible"] as? [String] ?? []) == ["nav", "detail"], "the list under the top of the stack is hidden")
            #expect((pushed["anomalies"] as? [Any])?.isEmpty == true)
            let at = try #require(pushed["at"] as? [String: Any])
            #expect(at["seq"] as? Int == 4 && at["index"] as? Int == 3 && at["lsn"] as? Int == 4)
            #expect((at["ts"] as? NSNumber)?.int64Value == Self.at(3))

            let popped = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?index=4")
            #expect(Self.ids(Self.root(popped)?["stack"]) == ["list"])
            #expect(popped["focus"] as? String == "list")

            // By seq, the same instant as by index; without either, the end.
            let bySeq = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?seq=4")
            #expect(try Self.canonical(bySeq) == Self.canonical(pushed))
            let end = try await Self.getJSON(client, "/api/sessions/shop%2F1/state")
            #expect((end["at"] as? [String: Any])?["seq"] as? Int == 6)
        }
    }

    @Test("a pop of a stack of one changes nothing and is A9 pop-root, in the state and the timeline")
    func popOfTheRoot() async throws {
        try await Self.withViewer { client, _ in
            let state = try await Self.getJSON(client, "/api/sessions/pad-2/state")
            #expect(Self.ids(Self.root(state)?["stack"]) == ["list"])
            #expect(state["focus"] as? String == "list")
            let anomalies = try #require(state["anomalies"] as? [[String: Any]])
            #expect(anomalies.map { $0["code"] as? String } == ["A9"])
            #expect(anomalies.first?["name"] as? String == "pop-root")
            #expect(anomalies.first?["fatal"] as? Bool == false)
            let event = try #require(anomalies.first?["event"] as? [String: Any])
            #expect(event["session"] as? String == "pad-2" && event["seq"] as? Int == 4 && event["lsn"] as? Int == 10)

            let timeline = try await Self.getJSON(client, "/api/sessions/pad-2/events")
            let marked = try #require(timeline["anomalies"] as? [[String: Any]])
            #expect(marked.count == 1)
            #expect(marked.first?["index"] as? Int == 3 && marked.first?["code"] as? String == "A9" && marked.first?["name"] as? String == "pop-root")
            #expect(timeline["ended"] as? Bool == false)
        }
    }

    @Test("the timeline: every event's time, seq, type and the focus after it, and the session's description")
    func timeline() async throws {
        try await Self.withViewer { client, _ in
            let timeline = try await Self.getJSON(client, "/api/sessions/shop%2F1/events")
            #expect(timeline["session"] as? String == "shop/1")
            #expect(timeline["count"] as? Int == 6 && timeline["from"] as? Int == 0)
            #expect((timeline["ts"] as? [NSNumber])?.map(\.int64Value) == [0, 0, 1, 3, 6, 10].map(Self.at))
            #expect(timeline["seq"] as? [Int] == [1, 2, 3, 4, 5, 6])
            let types = try #require(timeline["types"] as? [String])
            let typeColumn = try #require(timeline["type"] as? [Int])
            #expect(typeColumn.map { types[$0] } == ["session.start", "window.root", "nav.push", "nav.push", "nav.pop", "session.end"])
            // -1: no focus (nothing shown yet, then an empty navigation controller: E3).
            let focusIDs = try #require(timeline["focusIDs"] as? [String])
            let focusClasses = try #require(timeline["focusClasses"] as? [String])
            let focus = try #require(timeline["focus"] as? [Int])
            #expect(focus.prefix(5).map { $0 < 0 ? nil : focusIDs[$0] } == [nil, nil, "list", "detail", "list"])
            #expect(focus.prefix(5).map { $0 < 0 ? nil : focusClasses[$0] } == [nil, nil, "ListViewController", "DetailViewController", "ListViewController"])
            #expect((timeline["anomalies"] as? [Any])?.isEmpty == true)
            #expect(timeline["app"] as? String == "Shop" && timeline["version"] as? String == "2.0")
            #expect(timeline["device"] as? String == "iPhone15,2" && timeline["idiom"] as? String == "phone")
            #expect((timeline["first"] as? NSNumber)?.int64Value == Self.at(0) && (timeline["last"] as? NSNumber)?.int64Value == Self.at(10))
            #expect(timeline["ended"] as? Bool == true && timeline["lateEvents"] as? Int == 0)
            #expect(timeline["through"] as? Int == 10, "the newest LSN of the log")

            let later = try await Self.getJSON(client, "/api/sessions/shop%2F1/events?from=3")
            #expect(later["from"] as? Int == 3 && later["count"] as? Int == 6)
            #expect(later["seq"] as? [Int] == [4, 5, 6])
        }
    }

    @Test("a step: the state after event K, the state before it, and the event with what it resolved into")
    func step() async throws {
        try await Self.withViewer { client, _ in
            let step = try await Self.getJSON(client, "/api/sessions/shop%2F1/step?index=3")
            let state = try #require(step["state"] as? [String: Any])
            let previous = try #require(step["previous"] as? [String: Any])
            let after = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?index=3")
            let before = try await Self.getJSON(client, "/api/sessions/shop%2F1/state?index=2")
            #expect(try Self.canonical(state) == Self.canonical(after), "the state endpoint's answer")
            #expect(try Self.canonical(previous) == Self.canonical(before))
            let event = try #require(step["event"] as? [String: Any])
            #expect(event["index"] as? Int == 3 && event["seq"] as? Int == 4 && event["lsn"] as? Int == 4 && event["type"] as? String == "nav.push")
            #expect(event["focus"] as? String == "detail" && event["focusClass"] as? String == "DetailViewController")
            let line = try #require(event["event"] as? [String: Any])
            #expect((line["vc"] as? [String: Any])?["id"] as? String == "detail", "the event as stored")

            let first = try await Self.getJSON(client, "/api/sessions/shop%2F1/step?index=0")
            #expect(first["previous"] is NSNull, "nothing before the first event")
        }
    }

    @Test("unknown sessions and instants are 404, malformed parameters 400, each with a message that says what to do")
    func requestErrors() async throws {
        try await Self.withViewer { client, _ in
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("/api/sessions/no-such-session/events", .notFound, "The log holds no events of session no-such-session."),
                ("/api/sessions/no-such-session/state", .notFound, "The log holds no events of session no-such-session."),
                ("/api/sessions/shop%2F1/state?index=6", .notFound, "Session shop/1 has 6 events (index 0 to 5); 6 is past its end."),
                ("/api/sessions/shop%2F1/state?seq=99", .notFound, "Session shop/1 has no event with seq 99"),
                ("/api/sessions/shop%2F1/step?index=6", .notFound, "6 is past its end."),
                ("/api/sessions/shop%2F1/state?index=-1", .badRequest, "index must be a whole number ≥ 0, not '-1'."),
                ("/api/sessions/shop%2F1/state?index=1&seq=1", .badRequest, "Give index or seq, not both."),
                ("/api/sessions/shop%2F1/step", .badRequest, "Give index=K"),
                ("/api/sessions/shop%2F1/events?from=x", .badRequest, "from must be a whole number"),
                ("/api/sessions?limit=ten", .badRequest, "limit must be a whole number ≥ 0, not 'ten'."),
                ("/api/sessions?sort=colour", .badRequest, "sort takes one of anomalies, app, device, duration, events, first, last, session, version"),
                ("/api/analytics?since=yesterday", .badRequest, "since must be µs since the epoch or an RFC 3339 time"),
                ("/api/analytics?step=ListViewController", .badRequest, "A funnel needs at least two steps"),
            ]
            for (uri, status, message) in cases {
                let answer = try await Self.getJSON(client, uri, status: status)
                let error = try #require(answer["error"] as? String, "\(uri)")
                #expect(error.contains(message), "\(uri): \(error)")
                #expect(answer.count == 1, "\(uri): only the error")
            }
        }
    }

    // MARK: - Sessions, analytics, storyboards

    @Test("the sessions list: each session's summary, newest first, with filters, search, sorts, pages and facets")
    func sessionsList() async throws {
        try await Self.withViewer { client, _ in
            let page = try await Self.getJSON(client, "/api/sessions")
            #expect(page["total"] as? Int == 2 && page["offset"] as? Int == 0 && page["limit"] as? Int == 50 && page["through"] as? Int == 10)
            let sessions = try #require(page["sessions"] as? [[String: Any]])
            #expect(Self.ids(sessions, key: "session") == ["pad-2", "shop/1"], "newest first (-first)")
            let shop = try #require(sessions.last)
            #expect(shop["app"] as? String == "Shop" && shop["version"] as? String == "2.0" && shop["device"] as? String == "iPhone15,2")
            #expect(shop["idiom"] as? String == "phone")
            #expect((shop["first"] as? NSNumber)?.int64Value == Self.at(0) && (shop["last"] as? NSNumber)?.int64Value == Self.at(10))
            #expect(shop["duration"] as? Int == 10_000_000 && shop["events"] as? Int == 6 && shop["anomalies"] as? Int == 0 && shop["ended"] as? Bool == true)
            let pad = try #require(sessions.first)
            #expect(pad["events"] as? Int == 4 && pad["anomalies"] as? Int == 1 && pad["ended"] as? Bool == false && pad["duration"] as? Int == 2_000_000)
            let facets = try #require(page["facets"] as? [String: [String]])
            #expect(facets == ["app": ["Shop"], "version": ["2.0", "2.1"], "device": ["iPad13,1", "iPhone15,2"], "idiom": ["pad", "phone"]])

            for (query, expected) in [
                ("idiom=pad", ["pad-2"]), ("version=2.0", ["shop/1"]), ("anomalies=1", ["pad-2"]), ("live=1", ["pad-2"]), ("q=SHOP%2F", ["shop/1"]),
                ("q=nothing-like-it", []), ("sort=events", ["pad-2", "shop/1"]), ("sort=-events", ["shop/1", "pad-2"]), ("sort=session", ["pad-2", "shop/1"]),
            ] {
                let answer = try await Self.getJSON(client, "/api/sessions?" + query)
                #expect(Self.ids(answer["sessions"], key: "session") == expected, "\(query)")
                #expect(answer["total"] as? Int == expected.count, "\(query)")
            }
            let second = try await Self.getJSON(client, "/api/sessions?sort=-events&limit=1&offset=1")
            #expect(second["total"] as? Int == 2 && second["limit"] as? Int == 1 && second["offset"] as? Int == 1)
            #expect(Self.ids(second["sessions"], key: "session") == ["pad-2"])
            let capped = try await Self.getJSON(client, "/api/sessions?limit=100000")
            #expect(capped["limit"] as? Int == 500, "a page holds 500 at most")
        }
    }

    @Test("analytics: screen views and dwell in the foreground (F4, E3), transitions, a funnel, anomalies by code; filters narrow them")
    func analytics() async throws {
        try await Self.withViewer { client, _ in
            let answer = try await Self.getJSON(client, "/api/analytics")
            let screens = try #require(answer["screens"] as? [[String: Any]])
            let byScreen = Dictionary(uniqueKeysWithValues: screens.compactMap { row in (row["screen"] as? String).map { ($0, row) } })
            #expect(Set(byScreen.keys) == ["ListViewController", "DetailViewController"], "a navigation controller is never the screen")
            #expect(byScreen["ListViewController"]?["views"] as? Int == 3 && byScreen["ListViewController"]?["sessions"] as? Int == 2)
            #expect(byScreen["DetailViewController"]?["views"] as? Int == 1 && byScreen["DetailViewController"]?["sessions"] as? Int == 1)
            #expect(byScreen["DetailViewController"]?["dwellTotal"] as? Int == 3_000_000, "focused from 3 s to 6 s")
            let transitions = try #require(answer["transitions"] as? [[String: Any]])
            let moves = Set(transitions.map { "\($0["from"] as? String ?? "-") > \($0["to"] as? String ?? "-") \($0["how"] as? String ?? "")" })
            #expect(moves.isSuperset(of: ["ListViewController > DetailViewController push", "DetailViewController > ListViewController pop"]))
            #expect(answer["funnel"] is NSNull, "no steps, no funnel")
            let anomalies = try #require(answer["anomalies"] as? [String: Any])
            let codes = try #require(anomalies["codes"] as? [[String: Any]])
            #expect(codes.count == 1)
            #expect(codes.first?["code"] as? String == "A9" && codes.first?["name"] as? String == "pop-root" && codes.first?["count"] as? Int == 1)
            #expect(codes.first?["sessions"] as? Int == 1 && codes.first?["fatal"] as? Bool == false)
            #expect(answer["through"] as? Int == 10)

            let funnel = try await Self.getJSON(client, "/api/analytics?step=ListViewController&step=DetailViewController")
            let steps = try #require(funnel["funnel"] as? [[String: Any]])
            #expect(steps.map { $0["screen"] as? String } == ["ListViewController", "DetailViewController"])
            #expect(steps.map { $0["sessions"] as? Int } == [2, 1], "both sessions reach the list, one goes on to the detail")

            let pad = try await Self.getJSON(client, "/api/analytics?idiom=pad")
            #expect(Self.ids(pad["screens"], key: "screen") == ["ListViewController"])
            let before = try await Self.getJSON(client, "/api/analytics?until=2025-11-21T08:00:00Z")
            #expect((before["screens"] as? [Any])?.isEmpty == true, "nothing before the sessions began")
        }
    }

    @Test("storyboards: none given says how to give them; a given one lists its scenes and segues with what the sessions used")
    func storyboards() async throws {
        try await Self.withViewer { client, _ in
            let none = try await Self.getJSON(client, "/api/storyboards")
            #expect((none["storyboards"] as? [Any])?.isEmpty == true)
            #expect((none["note"] as? String)?.contains("--storyboard FILE") == true)
        }
        try await Self.withViewer(storyboards: [TestEnvironment.fixture("serve/Shop.storyboard").path]) { client, _ in
            let answer = try await Self.getJSON(client, "/api/storyboards")
            let storyboard = try #require((answer["storyboards"] as? [[String: Any]])?.first)
            #expect(storyboard["name"] as? String == "Shop")
            let scenes = try #require(storyboard["scenes"] as? [[String: Any]])
            let byClass = Dictionary(uniqueKeysWithValues: scenes.compactMap { row in (row["class"] as? String).map { ($0, row) } })
            #expect(Set(byClass.keys) == ["UINavigationController", "ListViewController", "DetailViewController"])
            #expect(byClass["ListViewController"]?["visits"] as? Int == 3 && byClass["ListViewController"]?["sessions"] as? Int == 2)
            #expect(byClass["DetailViewController"]?["visits"] as? Int == 1 && byClass["DetailViewController"]?["sessions"] as? Int == 1)
            let segues = try #require(storyboard["segues"] as? [[String: Any]])
            let show = try #require(segues.first { $0["kind"] as? String == "show" })
            #expect(show["identifier"] as? String == "showDetail" && show["uses"] as? Int == 1, "the push of the detail from the list")
            #expect((answer["unexpected"] as? [Any])?.isEmpty == true)
            #expect(answer["transitions"] as? Int == 1)
        }
    }

    // MARK: - Pages, files and access

    @Test("pages and their files are served with their types and the security headers; anything else is a 404")
    func pagesAndFiles() async throws {
        try await Self.withViewer { client, _ in
            let web = TestEnvironment.packageRoot.appendingPathComponent("Sources/NavlogServe/Web")
            for (uri, file, type) in [
                ("/assets/viewer.css", "viewer.css", "text/css; charset=utf-8"), ("/assets/session.js", "session.js", "text/javascript; charset=utf-8"),
                ("/assets/icon.svg", "icon.svg", "image/svg+xml"),
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok, "\(uri)")
                #expect(response.headers[.contentType] == type, "\(uri)")
                #expect(Array(response.body.readableBytesView) == Array(try Data(contentsOf: web.appendingPathComponent(file))), "\(uri) is \(file)")
                Self.expectSecurityHeaders(response, uri)
            }
            // A page is its file after the first line (<!--#page title="…" scripts="…"-->) in the
            // frame of every page, with its title and scripts.
            for (uri, file, title, scripts) in [
                ("/", "sessions.html", "Sessions", ["sessions.js"]), ("/sessions", "sessions.html", "Sessions", ["sessions.js"]),
                ("/sessions/shop%2F1", "session.html", "Session", ["hierarchy.js", "session.js"]), ("/analytics", "analytics.html", "Analytics", ["analytics.js"]),
                ("/storyboards", "storyboards.html", "Storyboards", ["storyboards.js"]), ("/assets/analytics.html", "analytics.html", "Analytics", ["analytics.js"]),
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok, "\(uri)")
                #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                let head = [
                    "<!doctype html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">", "<title>\(title) · navlog</title>",
                    "<link rel=\"icon\" href=\"/assets/icon.svg\">", "<link rel=\"stylesheet\" href=\"/assets/viewer.css\">",
                    "<script src=\"/assets/common.js\" defer></script>",
                ]
                let top = head + scripts.map { "<script src=\"/assets/\($0)\" defer></script>" } + ["</head>", "<body>", "<main>"]
                let source = try String(contentsOf: web.appendingPathComponent(file), encoding: .utf8)
                #expect(source.hasPrefix("<!--#page title=\"\(title)\" "), "\(file) begins with its title and scripts")
                let own = source.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[1]
                let page = top.joined(separator: "\n") + "\n" + own + "</main>\n</body>\n</html>\n"
                #expect(String(buffer: response.body) == page, "\(uri) is \(file) in the frame")
                Self.expectSecurityHeaders(response, uri)
            }
            for uri in ["/assets/nope.js", "/assets/page.html", "/assets/..%2f..%2fPackage.swift", "/assets/../../Package.swift", "/nowhere"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .notFound, "\(uri)")
                #expect(!String(buffer: response.body).contains("PackageDescription"), "\(uri)")
            }
            // A file the viewer does not ship, asked for by a route it has: the middleware's headers too.
            for uri in ["/assets/nope.js", "/assets/..%2f..%2fPackage.swift"] {
                Self.expectSecurityHeaders(try await client.execute(uri: uri, method: .get), uri)
            }
            let missing = try await Self.getJSON(client, "/assets/nope.js", status: .notFound)
            #expect(missing["error"] as? String == "No such page or file.")
            for method in [HTTPRequest.Method.post, .put, .delete] {
                let response = try await client.execute(uri: "/api/sessions", method: method, body: ByteBuffer(string: "{}"))
                #expect([HTTPResponse.Status.notFound, .methodNotAllowed].contains(response.status), "\(method) is refused: read only")
            }
            let json = try await client.execute(uri: "/api/sessions", method: .get)
            #expect(json.headers[.cacheControl] == "no-store", "answers are never cached: the log grows")
        }
    }

    @Test("a page is put in the frame: its title, a script line per script, its lines in place of {{main}}; without its first line it is refused")
    func pageInFrame() throws {
        let frame = Array("<title>{{title}} · navlog</title>\n{{scripts}}\n<main>\n{{main}}\n</main>\n".utf8)
        let page = try ViewerAssets.page(Array("<!--#page title=\"T\" scripts=\"a.js b.js\"-->\n<p>{{title}}</p>\n".utf8), frame: frame, name: "t.html")
        #expect(
            String(decoding: page, as: UTF8.self)
                == "<title>T · navlog</title>\n<script src=\"/assets/a.js\" defer></script>\n<script src=\"/assets/b.js\" defer></script>\n<main>\n<p>{{title}}</p>\n</main>\n")
        let error = #expect(throws: ViewerAssetsError.self) { try ViewerAssets.page(Array("<main>\n".utf8), frame: frame, name: "t.html") }
        #expect(error?.message.contains("t.html") == true)
    }

    /// The headers every answer carries (ViewerAccessMiddleware): only the viewer's own scripts run.
    static func expectSecurityHeaders(_ response: TestResponse, _ uri: String) {
        #expect(response.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true, "\(uri)")
        #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(uri)")
        #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY", "\(uri)")
        #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer", "\(uri)")
    }

    @Test("with a token: 401 without it, 200 with the bearer header or the cookie of the one-time login link, which works once")
    func token() async throws {
        try await Self.withViewer(token: "viewer-secret-0123456789") { client, server in
            let refused = try await Self.getJSON(client, "/api/sessions", status: .unauthorized)
            #expect((refused["error"] as? String)?.contains("Authorization: Bearer TOKEN") == true)
            _ = try await Self.getJSON(client, "/api/sessions", status: .unauthorized, headers: [.authorization: "Bearer wrong"])
            _ = try await Self.getJSON(client, "/api/sessions", headers: [.authorization: "Bearer viewer-secret-0123456789"])
            _ = try await Self.getJSON(client, "/login?code=0000", status: .unauthorized)

            let login = try #require(server.access.loginPath)
            let response = try await client.execute(uri: login, method: .get)
            #expect(response.status == .found && response.headers[.location] == "/")
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && !cookie.contains("viewer-secret"), "the cookie is a secret of its own, kept from scripts")
            let value = try #require(cookie.split(separator: ";").first.map(String.init))
            _ = try await Self.getJSON(client, "/api/sessions", headers: [.cookie: value])
            let again = try await Self.getJSON(client, login, status: .unauthorized)
            #expect((again["error"] as? String)?.contains("already used") == true)
        }
    }

    @Test("a listener beyond loopback without a token is refused at start, naming --token")
    func wideListenerNeedsToken() throws {
        let error = #expect(throws: ViewerServerError.self) {
            try ViewerServer(configuration: ViewerConfiguration(dataDirectory: "/nonexistent", host: "0.0.0.0"))
        }
        #expect(error?.message.contains("--token") == true)
    }
}
