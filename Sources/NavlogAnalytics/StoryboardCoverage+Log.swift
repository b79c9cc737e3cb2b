import NavlogEvents
import NavlogReplay
public import NavlogStore

extension StoryboardCoverage {
    static let forwardTypes: Set<EventType> = [.windowRoot, .navPush, .present, .show, .showDetail]
    static let containerTypes: Set<EventType> = [.navSet, .tabSet, .splitSet, .childAdd]

    /// Replays every session of the log once and observes each event: which scenes came into
    /// focus, which segues were taken, which transitions no segue explains (what `navlog
    /// storyboard coverage` and the viewer's storyboard page report).
    /// - Throws: ``StoreError`` when reading the log fails.
    public mutating func read(_ reader: LogReader) throws {
        var states: [String: SessionReplayer] = [:]
        try reader.scan(LogQuery()) { block, index in
            let session = block.session(index)
            var state = states.removeValue(forKey: session) ?? SessionReplayer()
            let before = Self.before(state)
            let type = block.types[index]
            block.withBody(index) { body in
                state.apply(
                    ReplayEvent(type: type, sequence: block.sequence(index), timestamp: block.timestamps[index], lsn: block.lsn(index), body: body))
                var name = type.name
                var forward = Self.forwardTypes.contains(type)
                var unwindAction: String?
                if type == .segue, let kind = body.field(.kind)?.string {
                    name += " " + kind
                    let phase = body.field(.phase)?.string ?? "perform"
                    forward = phase == "perform" && kind != "unwind" && kind != "embed" && kind != "relationship"
                    if kind == "unwind" { unwindAction = body.field(.action)?.string }
                    if kind == "embed" || kind == "relationship" { containment(body, .source, [.destination], state) }
                } else if type == .unwind {
                    unwindAction = body.field(.action)?.string
                } else if Self.containerTypes.contains(type) {
                    switch type {
                    case .navSet: containment(body, .nav, [.vcs], state)
                    case .tabSet: containment(body, .tab, [.vcs], state)
                    case .splitSet: containment(body, .split, [.primary, .secondary, .supplementary], state)
                    default: containment(body, .parent, [.vc], state)
                    }
                }
                observe(
                    session: session, sequence: block.sequence(index), event: name, forward: forward, unwindAction: unwindAction, before: before,
                    after: state)
            }
            if type != .sessionEnd { states[session] = state }
            return true
        }
    }

    /// Reports the children an event put in a container (for relationship and embed segues).
    private mutating func containment(_ body: StoredBody, _ containerField: FieldName, _ childFields: [FieldName], _ state: SessionReplayer) {
        func controller(_ value: StoredValue) -> ControllerTable.Controller? {
            ControllerReference(value).flatMap { state.controllers.handle(forID: $0.id) }.map { state.controllers[$0] }
        }
        guard let container = body.field(containerField).flatMap(controller) else { return }
        for field in childFields {
            guard let value = body.field(field) else { continue }
            if value.kind == .array {
                value.forEachElement { element in
                    if let child = controller(element) { observeContainment(container: container, child: child) }
                }
            } else if let child = controller(value) {
                observeContainment(container: container, child: child)
            }
        }
    }
}
