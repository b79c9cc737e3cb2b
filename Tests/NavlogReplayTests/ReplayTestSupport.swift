import Foundation
import NavlogEvents
import NavlogReplay
import NavlogStore
import NavlogTesting

/// Runs event lines through the real path (parser → log → reader) into replayers.
enum ReplayTestSupport {
    /// Stores `lines` in a temporary log, then replays every session, calling `visit` after each
    /// event with the session id, the event's 0-based position in the file, the replayer, what
    /// the event resolved into, and a function that applies the same event to another replayer.
    static func replay(
        _ lines: [String],
        _ visit: (_ session: String, _ line: Int, _ replayer: inout SessionReplayer, _ resolution: Resolution?, _ applySame: (inout SessionReplayer) -> Void) throws -> Void
    ) throws {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (index, line) in lines.enumerated() {
            _ = try parser.parse(line, lineNumber: index + 1, receivedAt: 1_000, into: &batch)
        }
        try TestEnvironment.withTemporaryDirectory { dir in
            let log = try EventLog(directory: dir.path)
            try log.append(batch)
            try log.close()
            var replayers: [String: SessionReplayer] = [:]
            var line = 0
            try LogReader(directory: dir.path).scan(LogQuery()) { block, index in
                let session = block.session(index)
                var replayer = replayers[session] ?? SessionReplayer()
                try block.withBody(index) { body in
                    let event = ReplayEvent(
                        type: block.types[index], sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body)
                    let resolution = replayer.apply(event)
                    try visit(session, line, &replayer, resolution) { other in other.apply(event) }
                }
                replayers[session] = replayer
                line += 1
                return true
            }
        }
    }

    /// The replay JSON of `replayer` as a Foundation object.
    static func json(_ replayer: SessionReplayer, session: String) throws -> [String: Any] {
        var bytes: [UInt8] = []
        replayer.appendJSON(session: session, to: &bytes)
        return try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    }

    /// A resolution as the fixture files write it.
    static func json(_ resolution: Resolution, _ replayer: SessionReplayer) -> [String: Any] {
        var result: [String: Any] = ["action": resolution.action]
        func id(_ handle: ControllerHandle) -> String { replayer.id(of: handle) }
        switch resolution {
        case .push(let container, let vc), .setSecondary(let container, let vc), .setRoot(let container, let vc), .appendTab(let container, let vc):
            result["container"] = id(container)
            result["vc"] = id(vc)
        case .present(let presenter, let vc, let style, let effective):
            result["presenter"] = id(presenter)
            result["vc"] = id(vc)
            result["style"] = style.name
            result["effectiveStyle"] = effective.name
        case .addChild(let container, let vc, let slot):
            result["container"] = id(container)
            result["vc"] = id(vc)
            if let slot { result["slot"] = slot }
        case .setColumn(let container, let column, let vc):
            result["container"] = id(container)
            result["vc"] = id(vc)
            result["column"] = "\(column)"
        case .unwind(let destination):
            result["destination"] = id(destination)
        case .custom, .cancelled, .none, .ignored:
            break
        }
        return result
    }

    /// Every node of a replay JSON's windows, by id.
    static func nodes(_ state: [String: Any]) -> [String: [String: Any]] {
        var result: [String: [String: Any]] = [:]
        func walk(_ node: [String: Any]) {
            if let id = node["id"] as? String { result[id] = node }
            for key in ["stack", "tabs", "children"] { (node[key] as? [[String: Any]])?.forEach(walk) }
            (node["columns"] as? [String: [String: Any]])?.values.forEach(walk)
            if let presented = node["presented"] as? [String: Any], let inner = presented["node"] as? [String: Any] { walk(inner) }
        }
        for window in state["windows"] as? [[String: Any]] ?? [] {
            if let root = window["root"] as? [String: Any] { walk(root) }
        }
        return result
    }
}
