import Foundation
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogTesting
import NavlogWorkload
import Testing

@Suite("The per-session controller table")
struct ControllerTableTests {
    @Test(
        "kinds come from the app, else from UIKit class names, else from use",
        arguments: [
            ("UINavigationController", ControllerKind.navigation), ("UITabBarController", .tab), ("UISplitViewController", .split),
            ("UIPageViewController", .page), ("UIAlertController", .alert), ("RecipeListViewController", .plain),
        ])
    func kindFromClass(className: String, kind: ControllerKind) {
        #expect(Array(className.utf8).withUnsafeBytes { ControllerKind(inferredFromClass: $0) } == kind)
    }

    /// Stores `lines` in a temporary log and calls `body` for every event's body, in order.
    static func withStoredEvents(_ lines: [String], _ body: (String, EventType, StoredBody) throws -> Void) throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (index, line) in lines.enumerated() {
            _ = try parser.parse(line, lineNumber: index + 1, into: &batch)
        }
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path)
            try log.append(batch)
            try log.close()
            try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                let session = block.session(index)
                try block.withBody(index) { try body(session, block.types[index], $0) }
                return true
            }
        }
    }

    @Test("declared kinds win over class names and use; use makes a plain controller a navigation controller")
    func declaredAndUse() throws {
        try Self.withStoredEvents([
            #"{"type":"window.root","session":"s","vc":{"id":"n","class":"MyNav"}}"#,
            #"{"type":"nav.push","session":"s","nav":"n","vc":{"id":"t","class":"UITabBarController","kind":"plain"}}"#,
        ]) { _, type, body in
            var table = ControllerTable()
            let handle = table.resolve(try #require(body.controller(.vc)))
            if type == .windowRoot {
                #expect(table[handle].kind == .plain)
                table.noteUse(handle, as: .navigation)
                #expect(table[handle].kind == .navigation, "receiving nav.push as nav makes it a navigation controller")
            } else {
                #expect(table[handle].kind == .plain && table[handle].kindDeclared, "the app's kind wins over the class name")
                table.noteUse(handle, as: .navigation)
                #expect(table[handle].kind == .plain, "and over use")
            }
        }
    }

    @Test("over a realistic workload, bare ids resolve to the controller their first mention described")
    func workload() throws {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: 99))
        let lines = generator.lines(20_000).map { String(decoding: $0, as: UTF8.self) }
        var tables: [String: ControllerTable] = [:]
        var firstClass: [String: String] = [:]  // "session/id" → class of its first (object) mention
        var references = 0
        let fields: [FieldName] = [.vc, .nav, .from, .tab, .split, .source, .destination, .target, .parent, .primary, .secondary, .supplementary]
        try Self.withStoredEvents(lines) { session, _, body in
            var table = tables[session, default: ControllerTable()]
            for field in fields {
                guard let reference = body.controller(field) else { continue }
                references += 1
                let before = table.count
                let handle = table.resolve(reference)
                let id = table[handle].id
                if table.count > before {
                    #expect(reference.object != nil, "\(session): controller \(id) is first mentioned as an object")
                    firstClass["\(session)/\(id)"] = table[handle].className
                } else {
                    #expect(table[handle].className == firstClass["\(session)/\(id)"], "\(id) keeps its class")
                    #expect(reference.id.elementsEqual(Array(id.utf8)))
                }
            }
            if let list = body.field(.vcs) {
                list.forEachElement { element in
                    if let reference = ControllerReference(element) {
                        references += 1
                        let before = table.count
                        let handle = table.resolve(reference)
                        if table.count > before { firstClass["\(session)/\(table[handle].id)"] = table[handle].className }
                    }
                }
            }
            tables[session] = table
        }
        #expect(references > 10_000)
        #expect(tables.count > 50)
        let kinds = Set(tables.values.flatMap { $0.controllers.map(\.kind) })
        #expect(kinds.isSuperset(of: [.navigation, .tab, .plain]), "\(kinds)")
    }
}
