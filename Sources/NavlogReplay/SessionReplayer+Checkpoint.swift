import NavlogEvents

/// Serialized replay state (checkpoints): the whole state of a session after some event, so
/// that replay can resume there instead of from the session's first event.
///
/// The encoding is versioned; decoding checks every count and handle against the bytes and the
/// tables it read, so a damaged or foreign checkpoint is rejected (nil), never trusted and never
/// a crash. Files that hold checkpoints add their own checksum.
extension SessionReplayer {
    /// The version of the encoding; a checkpoint of another version is rebuilt from the events.
    /// 2: dwell (F4) added. 3: the focus visit and deepest depths (analytics). 4: recording
    /// evidence (E1–E5), transition ends in time (E2), views (E3). 5: events replayed late (E4).
    /// 6: a pending pop or dismissal and the last cancelled one (E6). 7: a pending dismissal keeps
    /// the presentations it ended instead of a copy of the hierarchy; navigation-only gestures (E7).
    /// 8: the gestures known cancelled in hindsight, and the gesture each removal stands for (E7).
    /// 9: whether each was chosen among removals that fitted its proof as well, and the pending
    /// removals found cancelled so (E7).
    public static let checkpointVersion: UInt8 = 9

    /// Appends the state to `output`.
    public func encodeCheckpoint(into output: inout [UInt8]) {
        var writer = CheckpointWriter(output: output)
        writer.byte(Self.checkpointVersion)
        writer.count(controllers.count)
        for controller in controllers.controllers {
            writer.string(controller.id)
            writer.optionalString(controller.className)
            writer.byte(kindCode(controller.kind) | (controller.kindDeclared ? 0x80 : 0) | (controller.definesContext ? 0x40 : 0))
            writer.optionalString(controller.storyboardID)
            writer.optionalString(controller.title)
            writer.count(controller.unwindActions.count)
            controller.unwindActions.forEach { writer.string($0) }
        }
        writer.hierarchy(hierarchy)
        writer.count(anomalies.count)
        for anomaly in anomalies {
            writer.byte(anomaly.code.rawValue)
            writer.optionalString(anomaly.rule)
            writer.position(anomaly.event)
            writer.count(anomaly.controllers.count)
            anomaly.controllers.forEach { writer.handle($0.index) }
            writer.string(anomaly.message)
        }
        writer.byte((horizontal.map { $0.rawValue + 1 } ?? 0) | (vertical.map { ($0.rawValue + 1) << 2 } ?? 0) | (foreground ? 0x10 : 0) | (info.ended ? 0x20 : 0))
        for text in [info.app, info.version, info.build, info.os, info.device] { writer.optionalString(text) }
        writer.byte(info.idiom.rawValue)
        writer.optionalSigned(info.firstTimestamp)
        writer.optionalSigned(info.lastTimestamp)
        writer.count(eventCount)
        writer.optionalUnsigned(lastSequence)
        writer.byte(position == nil ? 0 : 1)
        if let position { writer.position(position) }
        writer.count(appearance.count)
        appearance.forEach { writer.byte($0.rawValue) }
        appearedAtOperation.forEach { writer.unsigned(UInt64($0)) }
        writer.unsigned(UInt64(operations))
        writer.unsigned(UInt64(evidence.rawValue))
        writer.signed(cancelledTransitionAt)
        writer.handles(customSegueDestinations)
        writer.count(dwell.count)
        dwell.forEach { writer.signed($0) }
        writer.handle(focusedScreen)
        writer.signed(focusSince)
        writer.signed(visit.since)
        writer.signed(visit.dwellBaseline)
        writer.byte(visit.cause.rawValue)
        writer.optionalString(visit.detail)
        writer.count(visit.index)
        writer.optionalUnsigned(visit.sequence)
        writer.handle(visit.screen)
        writer.handle(visit.from)
        writer.byte(visit.started ? 1 : 0)
        writer.count(viewsClosed)
        writer.count(lateEvents)
        writer.count(deepest.stack)
        writer.count(deepest.presentations)
        writer.count(intents.count)
        for intent in intents {
            writer.unsigned(intent.sequence)
            writer.string(intent.rule)
            writer.resolution(intent.resolution)
        }
        writer.count(transitions.count)
        for transition in transitions {
            writer.string(transition.id)
            writer.signed(transition.began)
            writer.byte(transition.snapshot == nil ? 0 : 1)
            if let snapshot = transition.snapshot { writer.hierarchy(snapshot) }
        }
        writer.count(Int(slotNames.count))
        for reference in 0..<slotNames.count {
            slotNames.withString(UInt32(reference)) { writer.bytes($0) }
        }
        writer.byte(pendingRemoval == nil ? 0 : 1)
        if let pending = pendingRemoval { writer.removal(pending) }
        writer.count(unprovenRemovals.count)
        for removal in unprovenRemovals {
            // Only where the controllers were is read of an unproven removal (E7).
            writer.handle(removal.nav)
            writer.handle(removal.popped)
            writer.handles(removal.dismissed.handles)
            writer.handle(removal.revealed)
            writer.count(Int(removal.gesture) + 1)
            writer.popFacts(removal)
        }
        writer.count(gesturesCancelledInHindsight.count)
        gesturesCancelledInHindsight.forEach { writer.count($0.position << 1 | ($0.chosen ? 1 : 0)) }
        writer.count(rollbacksChosen.count)
        rollbacksChosen.forEach { writer.count($0) }
        writer.handles(cancelledRemoval)
        writer.count(removalsResolved)
        writer.count(removalsCancelled)
        writer.count(removalsPutBack)
        output = writer.output
    }

    /// Restores a state encoded by ``encodeCheckpoint(into:)``; nil when the bytes are not a
    /// complete, consistent checkpoint of this version.
    public init?(checkpoint bytes: UnsafeRawBufferPointer) {
        var reader = CheckpointReader(reader: ByteReader(bytes))
        guard let state = reader.replayer(), reader.reader.isAtEnd else { return nil }
        self = state
    }

    fileprivate func kindCode(_ kind: ControllerKind) -> UInt8 { UInt8(ControllerKind.allCases.firstIndex(of: kind)!) }
}

/// Writes checkpoint fields.
private struct CheckpointWriter {
    var output: [UInt8]

    mutating func byte(_ value: UInt8) { output.append(value) }
    mutating func unsigned(_ value: UInt64) { Varint.append(value, to: &output) }
    mutating func count(_ value: Int) { unsigned(UInt64(value)) }
    mutating func signed(_ value: Int64) { unsigned(Varint.zigzag(value)) }
    /// A handle or -1.
    mutating func handle(_ value: Int32) { unsigned(UInt64(Int64(value) + 1)) }

    mutating func bytes(_ value: UnsafeRawBufferPointer) {
        count(value.count)
        output.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        output.append(contentsOf: value.utf8)
    }

    mutating func optionalString(_ value: String?) {
        byte(value == nil ? 0 : 1)
        if let value { string(value) }
    }

    mutating func optionalSigned(_ value: Int64?) {
        byte(value == nil ? 0 : 1)
        if let value { signed(value) }
    }

    mutating func optionalUnsigned(_ value: UInt64?) {
        byte(value == nil ? 0 : 1)
        if let value { unsigned(value) }
    }

    /// A pending or unproven pop or dismissal (E6, E7).
    mutating func removal(_ removal: SessionReplayer.PendingRemoval) {
        handle(removal.nav)
        handle(removal.popped)
        handles(removal.dismissed.handles)
        byte(removal.navigationOnly ? 1 : 0)
        signed(removal.began)
        optionalUnsigned(removal.sequence)
        byte(removal.cause.rawValue)
        handle(removal.revealed)
        signed(removal.foregroundTime)
        count(Int(removal.gesture) + 1)
        popFacts(removal)
    }

    /// What a pop's removal knows of the pops around it (E7: whether rolling it back is a choice).
    mutating func popFacts(_ removal: SessionReplayer.PendingRemoval) {
        count(Int(max(0, removal.lowestDepth)))
        byte((removal.named ? 1 : 0) | (removal.earlierFitsAsWell ? 2 : 0))
    }

    mutating func handles(_ values: [Int32]) {
        count(values.count)
        values.forEach { handle($0) }
    }

    mutating func position(_ position: EventPosition) {
        optionalUnsigned(position.sequence)
        signed(position.timestamp)
        optionalUnsigned(position.lsn)
        count(position.index)
    }

    mutating func hierarchy(_ hierarchy: Hierarchy) {
        count(hierarchy.nodes.count)
        for node in hierarchy.nodes {
            byte(node.placement.rawValue)
            handle(node.parent)
            handle(node.presenter)
            handle(node.window)
            handle(node.presented)
            byte(node.requestedStyle.rawValue)
            handles(node.items)
            count(Int(node.selected))
            handle(node.primary)
            handle(node.secondary)
            handle(node.supplementary)
            byte((node.collapsed ? 1 : 0) | (node.willMoveToNil ? 2 : 0) | (node.transitionEnd != Hierarchy.Node.noTransition ? 4 : 0) | (node.everPlaced ? 8 : 0))
            if node.transitionEnd != Hierarchy.Node.noTransition { signed(node.transitionEnd) }
            handles(node.movedFromSecondary)
            handles(node.children)
            handle(node.slot)
        }
        count(hierarchy.windows.count)
        for window in hierarchy.windows {
            string(window.name)
            handle(window.root)
        }
    }

    mutating func resolution(_ resolution: Resolution) {
        switch resolution {
        case .push(let container, let vc): (byte(1), handle(container.index), handle(vc.index))
        case .present(let presenter, let vc, let style, let effective):
            (byte(2), handle(presenter.index), handle(vc.index), byte(style.rawValue), byte(effective.rawValue))
        case .setSecondary(let container, let vc): (byte(3), handle(container.index), handle(vc.index))
        case .addChild(let container, let vc, let slot): (byte(4), handle(container.index), handle(vc.index), optionalString(slot))
        case .setRoot(let container, let vc): (byte(5), handle(container.index), handle(vc.index))
        case .appendTab(let container, let vc): (byte(6), handle(container.index), handle(vc.index))
        case .setColumn(let container, let column, let vc): (byte(7), handle(container.index), byte(column.rawValue), handle(vc.index))
        case .unwind(let destination): (byte(8), handle(destination.index))
        case .custom: byte(9)
        case .cancelled: byte(10)
        case .none: byte(11)
        case .ignored: byte(12)
        }
    }
}

/// Reads checkpoint fields; every read fails (nil) on short or malformed input.
private struct CheckpointReader {
    var reader: ByteReader
    /// Handles must be below this (the number of controllers) once the table is read.
    var handleLimit = 0

    mutating func byte() -> UInt8? { reader.readByte() }
    mutating func unsigned() -> UInt64? { reader.readVarint() }
    /// A length or element count (never more than the bytes left).
    mutating func count() -> Int? { reader.readCount(limit: reader.remaining) }
    /// A non-negative number that is not a length (an index, an event count).
    mutating func number() -> Int? {
        guard let value = unsigned(), value <= UInt64(Int.max) else { return nil }
        return Int(value)
    }
    mutating func signed() -> Int64? { unsigned().map(Varint.unzigzag) }

    mutating func handle() -> Int32? {
        guard let raw = unsigned(), raw <= UInt64(handleLimit) else { return nil }
        return Int32(Int64(raw) - 1)
    }

    mutating func validHandle() -> Int32? {
        guard let value = handle(), value >= 0 else { return nil }
        return value
    }

    mutating func string() -> String? {
        guard let length = count(), let bytes = reader.readBytes(length) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func optional<T>(_ read: (inout Self) -> T?) -> T?? {
        guard let flag = byte() else { return nil }
        switch flag {
        case 0: return .some(nil)
        case 1: return read(&self).map { .some($0) }
        default: return nil
        }
    }

    mutating func handles() -> [Int32]? {
        guard let count = count() else { return nil }
        var result: [Int32] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            guard let value = validHandle() else { return nil }
            result.append(value)
        }
        return result
    }

    /// A pending or unproven pop or dismissal (E6, E7).
    mutating func removal() -> SessionReplayer.PendingRemoval? {
        guard let nav = handle(), let popped = handle(), (nav >= 0) == (popped >= 0),
            let dismissed = handles(), dismissed.count % 2 == 0, dismissed.count <= 2 * SessionReplayer.PresentationLinks.capacity, dismissed.isEmpty == (popped >= 0),
            let navigationOnly = byte(), navigationOnly <= 1,
            let began = signed(), let sequence = optional({ $0.unsigned() }), let cause = byte().flatMap(EventType.init(rawValue:)),
            let revealed = handle(), let foregroundTime = signed(), foregroundTime >= 0, let gesture = number().flatMap({ Int32(exactly: $0 - 1) })
        else { return nil }
        var removal = SessionReplayer.PendingRemoval(
            nav: nav, popped: popped, dismissed: SessionReplayer.PresentationLinks(dismissed), began: began, sequence: sequence, cause: cause, revealed: revealed,
            foregroundTime: foregroundTime, navigationOnly: navigationOnly == 1, gesture: gesture)
        guard popFacts(into: &removal) else { return nil }
        return removal
    }

    /// Reads ``CheckpointWriter/popFacts(_:)`` into `removal`.
    mutating func popFacts(into removal: inout SessionReplayer.PendingRemoval) -> Bool {
        guard let depth = number(), let lowest = Int32(exactly: depth), let flags = byte(), flags <= 3 else { return false }
        removal.lowestDepth = lowest
        removal.named = flags & 1 != 0
        removal.earlierFitsAsWell = flags & 2 != 0
        return true
    }

    mutating func position() -> EventPosition? {
        guard let sequence = optional({ $0.unsigned() }), let timestamp = signed(), let lsn = optional({ $0.unsigned() }), let index = number() else {
            return nil
        }
        return EventPosition(sequence: sequence, timestamp: timestamp, lsn: lsn, index: index)
    }

    /// A hierarchy: the current one has a node per controller; a snapshot taken earlier may have fewer.
    mutating func hierarchy(isSnapshot: Bool = false) -> Hierarchy? {
        guard let count = count(), isSnapshot ? count <= handleLimit : count == handleLimit else { return nil }
        var hierarchy = Hierarchy()
        hierarchy.nodes.reserveCapacity(count)
        for _ in 0..<count {
            var node = Hierarchy.Node()
            guard let placement = byte().flatMap(Hierarchy.Placement.init(rawValue:)), let parent = handle(), let presenter = handle(),
                let window = handle(), let presented = handle(), let style = byte().flatMap(PresentationStyle.init(rawValue:)),
                let items = handles(), let selected = number(), selected <= Int32.max, let primary = handle(), let secondary = handle(),
                let supplementary = handle(), let flags = byte()
            else { return nil }
            if flags & 4 != 0 {
                guard let end = signed() else { return nil }
                node.transitionEnd = end
            }
            guard let moved = handles(), let children = handles(), let slot = unsigned(), slot <= UInt64(Int32.max) else { return nil }
            node.placement = placement
            node.parent = parent
            node.presenter = presenter
            node.window = window
            node.presented = presented
            node.requestedStyle = style
            node.items = items
            node.selected = Int32(selected)
            node.primary = primary
            node.secondary = secondary
            node.supplementary = supplementary
            node.collapsed = flags & 1 != 0
            node.willMoveToNil = flags & 2 != 0
            node.everPlaced = flags & 8 != 0
            node.movedFromSecondary = moved
            node.children = children
            node.slot = Int32(Int64(slot) - 1)
            hierarchy.nodes.append(node)
        }
        guard let windowCount = self.count() else { return nil }
        for _ in 0..<windowCount {
            guard let name = string(), let root = handle() else { return nil }
            hierarchy.windows.append(Hierarchy.Window(name: name, root: root))
        }
        // Windows named by nodes must exist.
        guard hierarchy.nodes.allSatisfy({ $0.window < Int32(hierarchy.windows.count) }) else { return nil }
        return hierarchy
    }

    mutating func resolution() -> Resolution? {
        guard let tag = byte() else { return nil }
        func pair(_ make: (ControllerHandle, ControllerHandle) -> Resolution) -> Resolution? {
            guard let a = validHandle(), let b = validHandle() else { return nil }
            return make(ControllerHandle(index: a), ControllerHandle(index: b))
        }
        switch tag {
        case 1: return pair { .push(container: $0, vc: $1) }
        case 2:
            guard let presenter = validHandle(), let vc = validHandle(), let style = byte().flatMap(PresentationStyle.init(rawValue:)),
                let effective = byte().flatMap(PresentationStyle.init(rawValue:))
            else { return nil }
            return .present(presenter: ControllerHandle(index: presenter), vc: ControllerHandle(index: vc), style: style, effectiveStyle: effective)
        case 3: return pair { .setSecondary(container: $0, vc: $1) }
        case 4:
            guard let container = validHandle(), let vc = validHandle(), let slot = optional({ $0.string() }) else { return nil }
            return .addChild(container: ControllerHandle(index: container), vc: ControllerHandle(index: vc), slot: slot)
        case 5: return pair { .setRoot(container: $0, vc: $1) }
        case 6: return pair { .appendTab(container: $0, vc: $1) }
        case 7:
            guard let container = validHandle(), let column = byte().flatMap(Hierarchy.Placement.init(rawValue:)), let vc = validHandle() else {
                return nil
            }
            return .setColumn(container: ControllerHandle(index: container), column: column, vc: ControllerHandle(index: vc))
        case 8: return validHandle().map { .unwind(destination: ControllerHandle(index: $0)) }
        case 9: return .custom
        case 10: return .cancelled
        case 11: return Resolution.none
        case 12: return .ignored
        default: return nil
        }
    }

    /// Reads a whole checkpoint, section by section in the order ``CheckpointWriter`` writes
    /// them; nil when any is damaged or the state they make is not consistent.
    mutating func replayer() -> SessionReplayer? {
        guard byte() == SessionReplayer.checkpointVersion, let controllerCount = count() else { return nil }
        var state = SessionReplayer()
        guard readControllers(controllerCount, into: &state) else { return nil }
        handleLimit = controllerCount
        guard let hierarchy = self.hierarchy() else { return nil }
        state.hierarchy = hierarchy
        guard readAnomalies(into: &state), readSessionInfo(into: &state), readAppearance(controllerCount, into: &state),
            readFocus(controllerCount, into: &state), readIntentsAndTransitions(into: &state)
        else { return nil }
        guard let slotCount = readSlotNames(into: &state), readRemovals(controllerCount, into: &state) else { return nil }
        return Self.isConsistent(state, controllerCount: controllerCount, slotCount: slotCount) ? state : nil
    }

    /// The controller table: each controller's id, class, kind and flags, storyboard id,
    /// title and unwind actions.
    private mutating func readControllers(_ controllerCount: Int, into state: inout SessionReplayer) -> Bool {
        for _ in 0..<controllerCount {
            guard let id = string(), !id.isEmpty, let className = optional({ $0.string() }), let flags = byte(),
                Int(flags & 0x3F) < ControllerKind.allCases.count, let storyboardID = optional({ $0.string() }),
                let title = optional({ $0.string() }), let actionCount = count()
            else { return false }
            var actions: [String] = []
            for _ in 0..<actionCount {
                guard let action = string() else { return false }
                actions.append(action)
            }
            var controller = ControllerTable.Controller(id: id)
            controller.className = className
            controller.kind = ControllerKind.allCases[Int(flags & 0x3F)]
            controller.kindDeclared = flags & 0x80 != 0
            controller.definesContext = flags & 0x40 != 0
            controller.storyboardID = storyboardID
            controller.title = title
            controller.unwindActions = actions
            guard state.controllers.restore(controller) else { return false }
        }
        return true
    }

    /// The anomalies found so far.
    private mutating func readAnomalies(into state: inout SessionReplayer) -> Bool {
        guard let anomalyCount = count() else { return false }
        for _ in 0..<anomalyCount {
            guard let code = byte().flatMap(AnomalyCode.init(rawValue:)), let rule = optional({ $0.string() }), let event = position(),
                let handles = handles(), let message = string()
            else { return false }
            state.anomalies.append(Anomaly(code: code, rule: rule, event: event, controllers: handles.map { ControllerHandle(index: $0) }, message: message))
        }
        return true
    }

    /// The size classes, foreground, the session's description, counts and position.
    private mutating func readSessionInfo(into state: inout SessionReplayer) -> Bool {
        guard let flags = byte() else { return false }
        state.horizontal = flags & 3 == 0 ? nil : SizeClass(rawValue: (flags & 3) - 1)
        state.vertical = (flags >> 2) & 3 == 0 ? nil : SizeClass(rawValue: ((flags >> 2) & 3) - 1)
        state.foreground = flags & 0x10 != 0
        state.info.ended = flags & 0x20 != 0
        guard let app = optional({ $0.string() }), let version = optional({ $0.string() }), let build = optional({ $0.string() }),
            let os = optional({ $0.string() }), let device = optional({ $0.string() }), let idiom = byte().flatMap(Idiom.init(rawValue:)),
            let first = optional({ $0.signed() }), let last = optional({ $0.signed() }), let eventCount = number(),
            let lastSequence = optional({ $0.unsigned() }), let hasPosition = byte(), hasPosition <= 1
        else { return false }
        (state.info.app, state.info.version, state.info.build, state.info.os, state.info.device) = (app, version, build, os, device)
        state.info.idiom = idiom
        state.info.firstTimestamp = first
        state.info.lastTimestamp = last
        state.eventCount = eventCount
        state.lastSequence = lastSequence
        if hasPosition == 1 {
            guard let position = position() else { return false }
            state.position = position
        }
        return true
    }

    /// Each controller's appearance state and when it appeared, the operation and evidence
    /// counts, a cancelled transition, custom segues' destinations, each controller's dwell.
    private mutating func readAppearance(_ controllerCount: Int, into state: inout SessionReplayer) -> Bool {
        guard let appearanceCount = count(), appearanceCount == controllerCount else { return false }
        for _ in 0..<appearanceCount {
            guard let value = byte().flatMap(AppearanceState.init(rawValue:)) else { return false }
            state.appearance.append(value)
        }
        for _ in 0..<appearanceCount {
            guard let value = unsigned(), value <= UInt64(UInt32.max) else { return false }
            state.appearedAtOperation.append(UInt32(value))
        }
        guard let operations = unsigned(), operations <= UInt64(UInt32.max), let evidence = unsigned(), evidence <= UInt64(UInt16.max),
            let cancelledAt = signed(), let destinations = handles(), destinations.allSatisfy({ $0 >= 0 && $0 < Int32(controllerCount) })
        else { return false }
        state.operations = UInt32(operations)
        state.evidence = RecordingEvidence(rawValue: UInt16(evidence))
        state.cancelledTransitionAt = cancelledAt
        state.customSegueDestinations = destinations
        guard let dwellCount = count(), dwellCount == controllerCount else { return false }
        for _ in 0..<dwellCount {
            guard let value = signed() else { return false }
            state.dwell.append(value)
        }
        return true
    }

    /// The focus (F1) and the view it is in (E3).
    private mutating func readFocus(_ controllerCount: Int, into state: inout SessionReplayer) -> Bool {
        guard let focusedScreen = handle(), let focusSince = signed() else { return false }
        state.focusedScreen = focusedScreen
        state.focusSince = focusSince
        guard let since = signed(), let baseline = signed(), let cause = byte().flatMap(EventType.init(rawValue:)),
            let detail = optional({ $0.string() }), let index = number(), let sequence = optional({ $0.unsigned() }), let screen = handle(),
            screen < Int32(controllerCount), let from = handle(), from < Int32(controllerCount), let started = byte(), started <= 1,
            let viewsClosed = number(), let lateEvents = number(), let stack = number(), let presentations = number()
        else { return false }
        state.visit = SessionReplayer.FocusVisit(
            since: since, dwellBaseline: baseline, cause: cause, detail: detail, index: index, sequence: sequence, screen: screen, from: from, started: started == 1)
        state.viewsClosed = viewsClosed
        state.lateEvents = lateEvents
        state.deepest = SessionReplayer.Depths(stack: stack, presentations: presentations)
        return true
    }

    /// The intents resolved, and the transitions still open with their snapshots (R19).
    private mutating func readIntentsAndTransitions(into state: inout SessionReplayer) -> Bool {
        guard let intentCount = count() else { return false }
        for _ in 0..<intentCount {
            guard let sequence = unsigned(), let rule = string(), let resolution = resolution() else { return false }
            state.intents.append(IntentRecord(sequence: sequence, resolution: resolution, rule: rule))
        }
        guard let transitionCount = count() else { return false }
        for _ in 0..<transitionCount {
            guard let id = string(), let began = signed(), let hasSnapshot = byte(), hasSnapshot <= 1 else { return false }
            var snapshot: Hierarchy?
            if hasSnapshot == 1 {
                guard let restored = self.hierarchy(isSnapshot: true) else { return false }
                snapshot = restored
            }
            state.transitions.append(OpenTransition(id: id, snapshot: snapshot, began: began))
        }
        return true
    }

    /// The container slots' names; returns how many.
    private mutating func readSlotNames(into state: inout SessionReplayer) -> Int? {
        guard let slotCount = count() else { return nil }
        for _ in 0..<slotCount {
            guard let length = count(), let bytes = reader.readBytes(length) else { return nil }
            _ = state.slotNames.intern(bytes)
        }
        return slotCount
    }

    /// The removals pending or unproven (E6, E7), the gestures cancelled in hindsight and the
    /// rollbacks chosen, and the resolution counts.
    private mutating func readRemovals(_ controllerCount: Int, into state: inout SessionReplayer) -> Bool {
        guard let hasPending = byte(), hasPending <= 1 else { return false }
        if hasPending == 1 {
            guard let pending = removal() else { return false }
            state.pendingRemoval = pending
        }
        guard let unproven = count(), unproven <= SessionReplayer.unprovenRemovalLimit else { return false }
        for _ in 0..<unproven {
            guard let nav = handle(), let popped = handle(), (nav >= 0) == (popped >= 0), let dismissed = handles(), dismissed.count % 2 == 0,
                dismissed.count <= 2 * SessionReplayer.PresentationLinks.capacity,
                dismissed.isEmpty == (popped >= 0), let revealed = handle(), let gesture = number().flatMap({ Int32(exactly: $0 - 1) })
            else { return false }
            var removal = SessionReplayer.PendingRemoval(
                nav: nav, popped: popped, dismissed: SessionReplayer.PresentationLinks(dismissed), began: 0, sequence: nil, cause: popped >= 0 ? .navPop : .dismiss,
                revealed: revealed,
                navigationOnly: true, gesture: gesture)
            guard popFacts(into: &removal) else { return false }
            state.unprovenRemovals.append(removal)
        }
        guard let hindsightCount = count() else { return false }
        for _ in 0..<hindsightCount {
            guard let entry = number(), entry >> 1 > (state.gesturesCancelledInHindsight.last?.position ?? -1) else { return false }
            state.gesturesCancelledInHindsight.append(SessionReplayer.CancelledGesture(position: entry >> 1, chosen: entry & 1 == 1))
        }
        guard let chosenCount = count() else { return false }
        for _ in 0..<chosenCount {
            guard let position = number(), position > (state.rollbacksChosen.last ?? -1) else { return false }
            state.rollbacksChosen.append(position)
        }
        guard let cancelled = handles(), cancelled.allSatisfy({ $0 >= 0 && $0 < Int32(controllerCount) }) else { return false }
        state.cancelledRemoval = cancelled
        guard let resolved = number(), let cancelledCount = number(), cancelledCount <= resolved, let putBack = number() else { return false }
        state.removalsResolved = resolved
        state.removalsCancelled = cancelledCount
        state.removalsPutBack = putBack
        return true
    }

    /// Whether a restored state is one the replayer could have made: a consistent hierarchy
    /// and snapshots, handles and slots in range, every placement complete.
    private static func isConsistent(_ state: SessionReplayer, controllerCount: Int, slotCount: Int) -> Bool {
        guard state.hierarchy.isConsistent(),
            state.transitions.allSatisfy({ $0.snapshot?.isConsistent() ?? true }),
            state.focusedScreen < Int32(controllerCount), state.dwell.allSatisfy({ $0 >= 0 })
        else { return false }
        guard state.slotNames.count == slotCount, state.hierarchy.nodes.allSatisfy({ $0.slot < Int32(slotCount) && $0.isPlacementComplete }),
            state.transitions.allSatisfy({ $0.snapshot?.nodes.allSatisfy({ $0.slot < Int32(slotCount) && $0.isPlacementComplete }) ?? true })
        else { return false }
        return true
    }
}

extension Hierarchy.Node {
    /// Whether the node names the container, presenter or window its placement needs (a
    /// checkpoint that does not is damaged).
    fileprivate var isPlacementComplete: Bool {
        switch placement {
        case .none: true
        case .windowRoot: window >= 0
        case .presented: presenter >= 0
        default: parent >= 0
        }
    }
}
