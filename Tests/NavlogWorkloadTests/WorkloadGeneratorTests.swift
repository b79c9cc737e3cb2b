import Foundation
import NavlogWorkload
import Testing

/// Every event type of `schemas/README.md`. The generator produces all of them; see the
/// ``WorkloadGenerator`` documentation for the fields and variants it leaves out.
let allEventTypes: Set<String> = [
    "session.start", "session.end", "app.foreground", "app.background", "traits.change", "window.root",
    "nav.push", "nav.pop", "nav.popTo", "nav.popToRoot", "nav.set", "tab.set", "tab.select", "split.set",
    "split.collapse", "split.expand", "present", "dismiss", "show", "showDetail", "segue", "unwind", "child.add",
    "child.remove", "child.willMove", "child.didMove", "vc.appear", "vc.disappear", "transition.begin",
    "transition.end", "mark",
]

/// One parsed line.
struct ParsedEvent {
    var object: [String: Any]
    var type: String { object["type"] as? String ?? "" }
    var session: String { object["session"] as? String ?? "" }
    var seq: Int64 { (object["seq"] as? NSNumber)?.int64Value ?? -1 }
    var ts: Int64 { (object["ts"] as? NSNumber)?.int64Value ?? -1 }
}

/// Parses lines with Foundation (tests only); fails the test on any line that is not a JSON object.
func parse(_ lines: [[UInt8]]) throws -> [ParsedEvent] {
    try lines.enumerated().map { index, line in
        let value = try JSONSerialization.jsonObject(with: Data(line))
        let object = try #require(value as? [String: Any], "line \(index + 1) is not a JSON object")
        return ParsedEvent(object: object)
    }
}

/// 20,000 events of the default configuration for `seed`, parsed once per seed and shared.
enum Corpus {
    nonisolated(unsafe) static let seed42: (lines: [[UInt8]], events: [ParsedEvent]) = {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 42))
        let lines = generator.lines(20_000)
        let events = (try? parse(lines)) ?? []
        return (lines, events)
    }()
}

@Suite("WorkloadGenerator")
struct WorkloadGeneratorTests {
    @Test("the same seed gives the same bytes")
    func sameSeedSameBytes() {
        var a = WorkloadGenerator(WorkloadConfiguration(seed: 7))
        var b = WorkloadGenerator(WorkloadConfiguration(seed: 7))
        let first = a.ndjson(events: 20_000)
        let second = b.ndjson(events: 20_000)
        #expect(first.count > 1_000_000)
        #expect(first == second)
    }

    @Test("different seeds give different bytes")
    func differentSeedsDiffer() {
        var a = WorkloadGenerator(WorkloadConfiguration(seed: 1))
        var b = WorkloadGenerator(WorkloadConfiguration(seed: 2))
        #expect(a.ndjson(events: 2_000) != b.ndjson(events: 2_000))
    }

    @Test("nextLine, lines and ndjson give the same stream")
    func apisAgree() {
        var a = WorkloadGenerator(WorkloadConfiguration(seed: 9))
        var b = WorkloadGenerator(WorkloadConfiguration(seed: 9))
        var c = WorkloadGenerator(WorkloadConfiguration(seed: 9))
        var joined: [UInt8] = []
        var line: [UInt8] = Array("stale contents".utf8)
        for _ in 0..<3_000 {
            a.nextLine(into: &line)
            #expect(line.last != UInt8(ascii: "\n"))
            #expect(line.first == UInt8(ascii: "{"))
            joined += line
            joined.append(UInt8(ascii: "\n"))
        }
        let fromLines = b.lines(3_000).reduce(into: [UInt8]()) {
            $0 += $1; $0.append(UInt8(ascii: "\n"))
        }
        #expect(joined == fromLines)
        #expect(joined == c.ndjson(events: 3_000))
        #expect(a.eventsGenerated == 3_000)
    }

    @Test("every line is a JSON object with the envelope fields")
    func linesAreObjectsWithEnvelope() throws {
        let (lines, events) = Corpus.seed42
        #expect(events.count == 20_000)
        for (line, event) in zip(lines, events) {
            #expect(line.count <= 65_536)
            #expect(allEventTypes.contains(event.type), "unknown type \(event.type)")
            #expect((1...128).contains(event.session.utf8.count))
            #expect(event.object["ts"] is NSNumber && event.ts > 1_700_000_000_000_000)
            #expect(event.object["ts"] as? String == nil, "ts is an integer, never a string")
            #expect(event.seq >= 1)
            if event.type != "traits.change", let v = event.object["v"] {
                #expect((v as? NSNumber)?.intValue == 1)
            }
        }
    }

    @Test("session ids look like lowercase UUIDs")
    func sessionIDsLookLikeUUIDs() {
        let hex = Set("0123456789abcdef")
        for event in Corpus.seed42.events.prefix(2_000) {
            let parts = event.session.split(separator: "-", omittingEmptySubsequences: false)
            #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
            #expect(parts.allSatisfy { $0.allSatisfy(hex.contains) })
        }
    }

    @Test("each session counts seq 1, 2, 3… and its ts never goes back; the stream is in time order")
    func perSessionOrder() {
        var lastSeq: [String: Int64] = [:]
        var lastTs: [String: Int64] = [:]
        var previous: Int64 = .min
        for event in Corpus.seed42.events {
            if let seq = lastSeq[event.session] {
                #expect(event.seq == seq + 1, "session \(event.session): seq \(event.seq) after \(seq)")
                #expect(event.ts >= lastTs[event.session]!)
            } else {
                #expect(event.seq == 1)
                #expect(event.type == "session.start")
            }
            lastSeq[event.session] = event.seq
            lastTs[event.session] = event.ts
            #expect(event.ts >= previous)
            previous = event.ts
        }
    }

    @Test("every event type appears in 20,000 events")
    func everyTypeAppears() {
        let seen = Set(Corpus.seed42.events.map(\.type))
        #expect(seen == allEventTypes, "missing: \(allEventTypes.subtracting(seen).sorted())")
    }

    @Test("at least 100 sessions are interleaved in 20,000 events")
    func sessionsInterleave() {
        let events = Corpus.seed42.events
        #expect(Set(events.map(\.session)).count >= 100)
        var switches = 0
        for (a, b) in zip(events, events.dropFirst()) where a.session != b.session { switches += 1 }
        #expect(switches > 5_000)
        #expect(events.contains { $0.type == "session.end" }, "sessions end and are replaced")
    }

    @Test("a controller is a full ref at its first mention and a bare id after")
    func refsFullThenBare() {
        var known: [String: Set<String>] = [:]
        let refKeys = [
            "vc", "nav", "tab", "split", "primary", "secondary", "from", "source", "destination", "target",
            "parent",
        ]
        for event in Corpus.seed42.events {
            var refs: [Any] = refKeys.compactMap { event.object[$0] }.filter { !($0 is NSNull) }
            if let vcs = event.object["vcs"] as? [Any] { refs += vcs }
            for ref in refs {
                if let object = ref as? [String: Any] {
                    let id = object["id"] as? String ?? ""
                    #expect(id.hasPrefix("0x"))
                    #expect(object["class"] is String)
                    #expect(!known[event.session, default: []].contains(id), "\(id) described twice")
                    known[event.session, default: []].insert(id)
                } else if let id = ref as? String {
                    #expect(known[event.session, default: []].contains(id), "\(id) used before it was described")
                } else {
                    Issue.record("a ref is neither a string nor an object: \(ref)")
                }
            }
        }
    }

    @Test("a cause names an earlier intent of the same session")
    func causesNameIntents() {
        var intents: [String: [Int64: String]] = [:]
        var causes = 0
        for event in Corpus.seed42.events {
            let isIntent =
                event.type == "show" || event.type == "showDetail" || event.type == "unwind"
                || (event.type == "segue" && (event.object["phase"] as? String ?? "perform") == "perform")
            if isIntent { intents[event.session, default: [:]][event.seq] = event.type }
            if let cause = (event.object["cause"] as? NSNumber)?.int64Value {
                causes += 1
                #expect(cause < event.seq)
                #expect(intents[event.session]?[cause] != nil, "cause \(cause) of \(event.type) is no intent")
            }
        }
        #expect(causes > 100)
    }

    @Test("every line follows the field contract of schemas/README.md")
    func fieldContract() {
        for event in Corpus.seed42.events {
            guard let contract = FieldContract.table[event.type] else {
                Issue.record("no contract for \(event.type)")
                continue
            }
            let keys = Set(event.object.keys)
            let envelope: Set<String> =
                event.type == "traits.change"
                ? ["type", "session", "ts", "seq", "cause"] : ["type", "session", "ts", "seq", "v", "cause"]
            #expect(contract.required.isSubset(of: keys), "\(event.type) lacks \(contract.required.subtracting(keys))")
            let unknown = keys.subtracting(contract.required).subtracting(contract.optional).subtracting(envelope)
            #expect(unknown.isEmpty, "\(event.type) has unknown fields \(unknown)")
            for (key, kind) in contract.kinds {
                if let value = event.object[key] {
                    #expect(kind.accepts(value), "\(event.type).\(key) = \(value)")
                }
            }
            if event.type == "tab.select" {
                #expect(keys.contains("index") || keys.contains("vc"))
            }
        }
    }

    @Test("a small configuration keeps starting sessions")
    func sessionsAreReplaced() throws {
        var configuration = WorkloadConfiguration(seed: 3, concurrentSessions: 2, meanEventsPerSession: 30)
        configuration.padFraction = 1
        var generator = WorkloadGenerator(configuration)
        let events = try parse(generator.lines(5_000))
        let starts = events.filter { $0.type == "session.start" }
        #expect(starts.count > 20)
        #expect(generator.sessionsStarted >= starts.count)
        #expect(starts.allSatisfy { $0.object["idiom"] as? String == "pad" })
        #expect(events.first?.ts ?? 0 >= WorkloadConfiguration.defaultStartTime)
    }

    @Test(
        "tools/schema-check.py accepts every line",
        .enabled(if: SchemaTool.isAvailable, "needs tools/schema-check.py and Python's jsonschema"))
    func schemaToolAcceptsEveryLine() throws {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 42))
        let count = 5_000
        let name = "navlog-workload-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try Data(generator.ndjson(events: count)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try SchemaTool.run([SchemaTool.script.path, file.path])
        #expect(status == 0)
        let results = output.split(separator: UInt8(ascii: "\n"))
        #expect(results.count == count)
        for (index, result) in results.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(result)) as? [String: Any]
            let ok = (object?["ok"] as? NSNumber).map { FieldContract.Kind.isBoolean($0) && $0.boolValue } ?? false
            #expect(ok, "line \(index + 1): \(String(decoding: result, as: UTF8.self))")
        }
    }

    @Test("names with characters that need escaping are escaped")
    func escaping() throws {
        let app = WorkloadApp(
            name: "Café \"Quote\" \\ Tab\t", catalog: .recipes, releases: [.init(version: "1.0", build: "1")])
        var generator = WorkloadGenerator(
            WorkloadConfiguration(seed: 5, concurrentSessions: 3, apps: [app]))
        let events = try parse(generator.lines(500))
        let names = Set(events.compactMap { $0.object["app"] as? String })
        #expect(names == ["Café \"Quote\" \\ Tab\t"])
    }
}

/// A compact form of the per-type field table of `schemas/README.md`.
struct FieldContract {
    enum Kind {
        case string, bool, uint, ref, nullableRef, refs, sizeClass, style, transition, anchor, props, traits
        case oneOf(Set<String>)

        /// Whether JSONSerialization made this number from `true` or `false` (objCType `c`, on Linux and macOS).
        static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

        func accepts(_ value: Any) -> Bool {
            switch self {
            case .string: return value is String
            case .bool: return (value as? NSNumber).map(Self.isBoolean) ?? false
            case .uint:
                guard let number = value as? NSNumber, !Self.isBoolean(number) else { return false }
                return number.doubleValue >= 0 && number.doubleValue.rounded() == number.doubleValue
            case .ref:
                if let id = value as? String { return !id.isEmpty }
                guard let object = value as? [String: Any] else { return false }
                let allowed: Set<String> = [
                    "id", "class", "sbid", "storyboard", "title", "kind", "definesContext",
                    "unwindActions", "restorationId",
                ]
                return Set(object.keys).isSubset(of: allowed) && (object["id"] as? String).map { !$0.isEmpty } == true
                    && object["class"] is String
                    && (object["kind"].map { ["navigation", "tab", "split", "page", "alert", "plain"].contains($0 as? String ?? "") } ?? true)
                    && (object["unwindActions"].map { $0 is [String] } ?? true)
            case .nullableRef: return value is NSNull || Kind.ref.accepts(value)
            case .refs: return (value as? [Any]).map { $0.allSatisfy(Kind.ref.accepts) } ?? false
            case .sizeClass: return ["compact", "regular"].contains(value as? String ?? "")
            case .style:
                return [
                    "fullScreen", "pageSheet", "formSheet", "currentContext", "overFullScreen", "overCurrentContext",
                    "popover", "custom", "automatic",
                ].contains(value as? String ?? "")
            case .transition:
                return ["coverVertical", "flipHorizontal", "crossDissolve", "partialCurl"].contains(value as? String ?? "")
            case .anchor:
                guard let object = value as? [String: Any],
                    Set(object.keys).isSubset(of: ["barButtonItem", "sourceView", "sourceRect"])
                else { return false }
                if let rect = object["sourceRect"] {
                    guard let rect = rect as? [String: Any], Set(rect.keys) == ["x", "y", "width", "height"] else { return false }
                    return rect.values.allSatisfy { $0 is NSNumber }
                }
                return true
            case .props:
                return (value as? [String: Any]).map { $0.values.allSatisfy { $0 is String || $0 is NSNumber } } ?? false
            case .traits:
                guard let object = value as? [String: Any], Set(object.keys) == ["h", "v"] else { return false }
                return Kind.sizeClass.accepts(object["h"]!) && Kind.sizeClass.accepts(object["v"]!)
            case .oneOf(let names): return names.contains(value as? String ?? "")
            }
        }
    }

    var required: Set<String>
    var optional: Set<String>
    var kinds: [String: Kind]

    init(_ required: [String: Kind], _ optional: [String: Kind] = [:]) {
        self.required = Set(required.keys)
        self.optional = Set(optional.keys)
        kinds = required.merging(optional) { a, _ in a }
    }

    static let table: [String: FieldContract] = [
        "session.start": FieldContract(
            ["app": .string],
            [
                "version": .string, "build": .string, "os": .string, "device": .string,
                "idiom": .oneOf(["phone", "pad", "mac", "tv", "vision"]), "traits": .traits,
            ]),
        "session.end": FieldContract([:], ["reason": .string]),
        "app.foreground": FieldContract([:]),
        "app.background": FieldContract([:]),
        "traits.change": FieldContract(["h": .sizeClass, "v": .sizeClass]),
        "window.root": FieldContract(["vc": .ref], ["window": .string]),
        "nav.push": FieldContract(["nav": .ref, "vc": .ref], ["animated": .bool]),
        "nav.pop": FieldContract(["nav": .ref], ["vc": .ref, "animated": .bool]),
        "nav.popTo": FieldContract(["nav": .ref, "vc": .ref], ["animated": .bool]),
        "nav.popToRoot": FieldContract(["nav": .ref], ["animated": .bool]),
        "nav.set": FieldContract(["nav": .ref, "vcs": .refs], ["animated": .bool]),
        "tab.set": FieldContract(["tab": .ref, "vcs": .refs], ["selected": .uint]),
        "tab.select": FieldContract(["tab": .ref], ["index": .uint, "vc": .ref, "byUser": .bool]),
        "split.set": FieldContract(["split": .ref], ["primary": .ref, "secondary": .ref, "supplementary": .ref]),
        "split.collapse": FieldContract(["split": .ref]),
        "split.expand": FieldContract(["split": .ref]),
        "present": FieldContract(
            ["from": .ref, "vc": .ref],
            [
                "style": .style, "transition": .transition, "animated": .bool, "anchor": .anchor,
                "alertStyle": .oneOf(["alert", "actionSheet"]),
            ]),
        "dismiss": FieldContract(["vc": .ref], ["animated": .bool]),
        "show": FieldContract(["from": .ref, "vc": .ref]),
        "showDetail": FieldContract(["from": .ref, "vc": .ref]),
        "segue": FieldContract(
            [
                "kind": .oneOf([
                    "show", "showDetail", "presentation", "popoverPresentation", "embed", "unwind", "custom",
                    "relationship", "push", "modal", "replace", "popover",
                ]),
                "source": .ref,
            ],
            [
                "identifier": .string, "destination": .ref, "style": .style, "transition": .transition,
                "animated": .bool, "anchor": .anchor, "action": .string,
                "relationship": .oneOf([
                    "rootViewController", "viewControllers", "masterViewController",
                    "detailViewController", "supplementaryViewController", "compactViewController",
                ]),
                "phase": .oneOf(["should", "prepare", "perform"]), "result": .bool, "segueClass": .string,
            ]),
        "unwind": FieldContract(["source": .ref, "action": .string], ["target": .ref]),
        "child.add": FieldContract(["parent": .ref, "vc": .ref], ["slot": .string]),
        "child.remove": FieldContract(["vc": .ref], ["parent": .ref, "slot": .string]),
        "child.willMove": FieldContract(["vc": .ref], ["parent": .nullableRef, "slot": .string]),
        "child.didMove": FieldContract(["vc": .ref], ["parent": .nullableRef, "slot": .string]),
        "vc.appear": FieldContract(["vc": .ref, "phase": .oneOf(["will", "did"])], ["animated": .bool]),
        "vc.disappear": FieldContract(["vc": .ref, "phase": .oneOf(["will", "did"])], ["animated": .bool]),
        "transition.begin": FieldContract(["id": .string], ["interactive": .bool]),
        "transition.end": FieldContract(["id": .string], ["interactive": .bool, "completed": .bool]),
        "mark": FieldContract(["name": .string], ["props": .props]),
    ]
}

/// The project's Python schema checker, run when it and `jsonschema` are there.
enum SchemaTool {
    /// `tools/schema-check.py` of this package.
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("tools/schema-check.py")

    /// Whether the script exists and Python can import `jsonschema`.
    static let isAvailable: Bool = {
        guard FileManager.default.fileExists(atPath: script.path) else { return false }
        return (try? run(["-c", "import jsonschema"]).status) == 0
    }()

    /// Runs `python3` with `arguments`; returns its exit status and standard output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

/// Recording styles (experimental, off by default): what a style does not record is gone
/// without a trace: numbers stay consecutive, every controller is described at its first
/// mention, and nothing a style leaves out is there.
@Suite("Workload recording styles")
struct WorkloadRecordingStyleTests {
    @Test("a mix of styles: consecutive seq per session, controllers described first, no cause and no transitions outside full recording")
    func styles() throws {
        var configuration = WorkloadConfiguration.production(seed: 5)
        configuration.concurrentSessions = 60
        configuration.recordingMix = WorkloadConfiguration.productionRecordingMix
        var generator = WorkloadGenerator(configuration)
        let events = try parse(generator.lines(30_000))
        var lastSeq: [String: Int64] = [:]
        var described: [String: Set<String>] = [:]
        var sessionsWith: (will: Set<String>, transitions: Set<String>, causes: Set<String>, appearance: Set<String>) = ([], [], [], [])
        var all = Set<String>()
        for event in events {
            let session = event.session
            all.insert(session)
            #expect(event.seq == (lastSeq[session] ?? 0) + 1, "\(session): seq \(event.seq) after \(lastSeq[session] ?? 0)")
            lastSeq[session] = event.seq
            if event.type.hasPrefix("transition.") { sessionsWith.transitions.insert(session) }
            if event.object["cause"] != nil { sessionsWith.causes.insert(session) }
            if event.type == "vc.appear" || event.type == "vc.disappear" {
                sessionsWith.appearance.insert(session)
                if event.object["phase"] as? String == "will" { sessionsWith.will.insert(session) }
            }
            // A controller named by a bare id was described (an object with its id) before, here
            // or in an earlier event, anywhere in it (`vcs` arrays included).
            func collect(_ value: Any) {
                if let object = value as? [String: Any] {
                    if let id = object["id"] as? String, id.hasPrefix("0x") { described[session, default: []].insert(id) }
                    object.values.forEach(collect)
                } else if let array = value as? [Any] {
                    array.forEach(collect)
                }
            }
            collect(event.object)
            for key in ["vc", "from", "nav", "tab", "source", "parent", "split"] {
                if let id = event.object[key] as? String, id.hasPrefix("0x") {
                    #expect(described[session, default: []].contains(id), "\(session) seq \(event.seq): \(key) \(id) named before it was described")
                }
            }
        }
        // Some sessions record transitions (full); some record appearance without will (did-only),
        // some no appearance at all (navigation only).
        #expect(!sessionsWith.transitions.isEmpty && sessionsWith.transitions.count < all.count)
        #expect(sessionsWith.causes.isSubset(of: sessionsWith.transitions.union(all.subtracting(sessionsWith.appearance)).union(sessionsWith.will)))
        #expect(!sessionsWith.appearance.subtracting(sessionsWith.will).isEmpty, "did-only sessions")
        #expect(all.count > sessionsWith.appearance.count, "navigation-only sessions")
    }
}
