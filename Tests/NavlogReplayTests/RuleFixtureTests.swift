import Foundation
import NavlogReplay
import NavlogTesting
import Testing

/// The table-driven cases of `Tests/Fixtures/replay/` (format in its README): one file per
/// rule of uikit-navigation-rules.md, each case an event stream with the expected state,
/// anomalies and resolutions after chosen events.
@Suite("UIKit navigation rules (fixture cases)")
struct RuleFixtureTests {
    static let directory = TestEnvironment.fixture("replay")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    /// One case: its events (session renamed so cases of a file share one log) and the
    /// expectations after each event.
    struct Case {
        var name: String
        var line: Int
        var events: [String] = []
        /// Expectations keyed by the index of the event they follow, with their file line.
        var expectations: [Int: [(line: Int, expect: [String: Any])]] = [:]
    }

    static func cases(in file: String) throws -> [Case] {
        let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        var cases: [Case] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw FixtureError(description: "\(file):\(number + 1): not a JSON object")
            }
            if let name = object["case"] as? String {
                cases.append(Case(name: name, line: number + 1))
            } else if let expect = object["expect"] as? [String: Any] {
                guard !cases.isEmpty, !cases[cases.count - 1].events.isEmpty else {
                    throw FixtureError(description: "\(file):\(number + 1): an expect before any event")
                }
                cases[cases.count - 1].expectations[cases[cases.count - 1].events.count - 1, default: []].append((number + 1, expect))
            } else {
                guard !cases.isEmpty else { throw FixtureError(description: "\(file):\(number + 1): an event before the first case") }
                var event = object
                event["session"] = "case\(cases.count)"
                let data = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
                cases[cases.count - 1].events.append(String(decoding: data, as: UTF8.self))
            }
        }
        return cases
    }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
    }

    @Test("every rule and anomaly id has at least one fixture case")
    func everyRuleCovered() throws {
        let ids = (1...3).map { "H\($0)" } + (1...20).map { "R\($0)" } + (1...4).map { "F\($0)" } + [1, 2, 3, 5, 6, 7].map { "E\($0)" } + (1...18).map { "A\($0)" }
        let files = Self.files
        var asserted = Set<String>()
        for file in files {
            for testCase in try Self.cases(in: file) {
                for expect in testCase.expectations.values.flatMap({ $0 }) {
                    for anomaly in expect.expect["anomalies"] as? [Any] ?? [] {
                        if let code = anomaly as? String { asserted.insert(code) }
                        if let code = (anomaly as? [String: Any])?["code"] as? String { asserted.insert(code) }
                    }
                }
            }
        }
        for id in ids where id.hasPrefix("A") {
            #expect(asserted.contains(id), "no fixture case asserts anomaly \(id)")
        }
        for id in ids where !id.hasPrefix("A") {
            #expect(files.contains { $0.hasPrefix(id + "-") || $0.hasPrefix(id + ".") || $0.hasPrefix(id + "a-") }, "no fixture file for rule \(id)")
        }
    }

    @Test("fixture cases", arguments: files)
    func fixture(file: String) throws {
        let cases = try Self.cases(in: file)
        #expect(!cases.isEmpty)
        let lines = cases.flatMap(\.events)
        var caseOfLine: [(caseIndex: Int, event: Int)] = []
        for (index, testCase) in cases.enumerated() {
            for event in testCase.events.indices { caseOfLine.append((index, event)) }
        }
        var anomaliesChecked: [Int: Int] = [:]
        try ReplayTestSupport.replay(lines) { session, line, replayer, resolution, _ in
            let (caseIndex, event) = caseOfLine[line]
            let testCase = cases[caseIndex]
            for (fileLine, expect) in testCase.expectations[event] ?? [] {
                let where_ = "\(file):\(fileLine) (case “\(testCase.name)”)"
                let state = try ReplayTestSupport.json(replayer, session: session)
                let since = anomaliesChecked[caseIndex] ?? 0
                anomaliesChecked[caseIndex] = replayer.anomalies.count
                try Self.check(
                    expect, state: state, newAnomalies: Array((state["anomalies"] as! [[String: Any]]).dropFirst(since)),
                    resolution: resolution.map { ReplayTestSupport.json($0, replayer) }, at: where_)
            }
        }
    }

    static func check(_ expect: [String: Any], state: [String: Any], newAnomalies: [[String: Any]], resolution: [String: Any]?, at place: String) throws {
        let nodes = ReplayTestSupport.nodes(state)
        let rendered = { String(decoding: try! JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self) }
        for (key, value) in expect {
            switch key {
            case "focus":
                #expect(same(state["focus"], value), "\(place): focus is \(state["focus"] ?? "nil"), expected \(value)")
            case "focusPath":
                #expect(same(state["focusPath"], value), "\(place): focusPath is \(state["focusPath"] ?? []), expected \(value)")
            case "visible":
                let actual = Set(state["visible"] as? [String] ?? [])
                let expected = Set(value as? [String] ?? [])
                #expect(actual == expected, "\(place): visible is \(actual.sorted()), expected \(expected.sorted())")
            case "anomalies":
                let expected = value as? [Any] ?? []
                let summary = newAnomalies.map { "\($0["code"]!) \($0["rule"] ?? "-") \($0["message"]!)" }
                guard expected.count == newAnomalies.count else {
                    Issue.record("\(place): anomalies raised: \(summary), expected \(expected)")
                    continue
                }
                for (want, got) in zip(expected, newAnomalies) {
                    if let code = want as? String {
                        #expect(got["code"] as? String == code, "\(place): anomalies raised: \(summary), expected \(expected)")
                    } else if let want = want as? [String: Any] {
                        for (field, wanted) in want {
                            if field == "controllers" {
                                #expect(Set(got["controllers"] as? [String] ?? []) == Set(wanted as? [String] ?? []), "\(place): anomaly controllers \(got), expected \(want)")
                            } else {
                                #expect(same(got[field], wanted), "\(place): anomaly \(field) is \(got[field] ?? "nil"), expected \(wanted) (\(summary))")
                            }
                        }
                    }
                }
            case "nodes":
                for (id, partial) in value as? [String: Any] ?? [:] {
                    guard let node = nodes[id] else {
                        Issue.record("\(place): \(id) is not in the tree: \(rendered())")
                        continue
                    }
                    checkNode(node, partial as? [String: Any] ?? [:], id: id, at: place)
                }
            case "windows":
                let windows = state["windows"] as? [[String: Any]] ?? []
                for (window, root) in value as? [String: Any] ?? [:] {
                    let actual = windows.first { $0["id"] as? String == window }.flatMap { ($0["root"] as? [String: Any])?["id"] }
                    #expect(same(actual, root), "\(place): window \(window) root is \(actual ?? "none"), expected \(root)")
                }
            case "attached":
                for id in value as? [String] ?? [] { #expect(nodes[id] != nil, "\(place): \(id) should be attached: \(rendered())") }
            case "detached":
                for id in value as? [String] ?? [] { #expect(nodes[id] == nil, "\(place): \(id) should not be in the tree: \(rendered())") }
            case "dwell":
                let actual = state["dwell"] as? [String: Any] ?? [:]
                for (id, wanted) in value as? [String: Any] ?? [:] {
                    #expect(same(actual[id] ?? 0, wanted), "\(place): dwell of \(id) is \(actual[id] ?? 0) µs, expected \(wanted)")
                }
            case "foreground", "traits":
                #expect(same(state[key], value), "\(place): \(key) is \(state[key] ?? "nil"), expected \(value)")
            case "resolution":
                guard let resolution else {
                    Issue.record("\(place): the event has no resolution (not an intent?)")
                    continue
                }
                for (field, wanted) in value as? [String: Any] ?? [:] {
                    #expect(same(resolution[field], wanted), "\(place): resolution \(resolution), expected \(value)")
                }
            default:
                Issue.record("\(place): unknown expectation \(key)")
            }
        }
    }

    static func checkNode(_ node: [String: Any], _ partial: [String: Any], id: String, at place: String) {
        func ids(_ list: Any?) -> [String] { (list as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }
        for (key, wanted) in partial {
            switch key {
            case "stack", "tabs":
                #expect(ids(node[key]) == (wanted as? [String] ?? []), "\(place): \(id).\(key) is \(ids(node[key])), expected \(wanted)")
            case "children":
                let children = node["children"] as? [[String: Any]] ?? []
                let expected = wanted as? [Any] ?? []
                #expect(children.count == expected.count, "\(place): \(id).children is \(ids(children)), expected \(expected)")
                for (child, want) in zip(children, expected) {
                    if let want = want as? String {
                        #expect(child["id"] as? String == want, "\(place): \(id).children is \(ids(children)), expected \(expected)")
                    } else if let want = want as? [String: Any] {
                        for (field, value) in want {
                            #expect(same(child[field], value), "\(place): \(id) child \(child["id"] ?? "?") \(field) is \(child[field] ?? "nil"), expected \(value)")
                        }
                    }
                }
            case "columns":
                let columns = node["columns"] as? [String: [String: Any]] ?? [:]
                for (column, want) in wanted as? [String: Any] ?? [:] {
                    #expect(same(columns[column]?["id"], want), "\(place): \(id).columns.\(column) is \(columns[column]?["id"] ?? "absent"), expected \(want)")
                }
            case "presented":
                let presented = node["presented"] as? [String: Any]
                if wanted is NSNull {
                    #expect(presented == nil, "\(place): \(id) presents \(presented ?? [:]), expected nothing")
                } else {
                    let actual: [String: Any?] = [
                        "id": (presented?["node"] as? [String: Any])?["id"], "style": presented?["style"], "effectiveStyle": presented?["effectiveStyle"],
                    ]
                    for (field, value) in wanted as? [String: Any] ?? [:] {
                        #expect(same(actual[field] ?? nil, value), "\(place): \(id).presented.\(field) is \(String(describing: actual[field] ?? nil)), expected \(value)")
                    }
                }
            default:
                #expect(same(node[key], wanted), "\(place): \(id).\(key) is \(node[key] ?? "absent"), expected \(wanted)")
            }
        }
    }

    /// JSON equality of two Foundation values (null matches a missing value).
    static func same(_ a: Any?, _ b: Any?) -> Bool {
        let a = a is NSNull ? nil : a
        let b = b is NSNull ? nil : b
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        default:
            let encode = { (value: Any) in try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed]) }
            return encode(a!) == encode(b!)
        }
    }
}
