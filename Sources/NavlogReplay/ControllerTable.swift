public import NavlogEvents

/// A dense handle for a controller within one session's replay.
public struct ControllerHandle: Hashable, Sendable, Comparable {
    /// The position in the table.
    public let index: Int32

    /// The handle at position `index` of a session's controller table.
    public init(index: Int32) { self.index = index }

    public static func < (a: ControllerHandle, b: ControllerHandle) -> Bool { a.index < b.index }
}

/// The controllers of one session: their ids mapped to dense handles, and what the events said
/// about them (class, kind, storyboard id, title, `definesContext`, unwind actions).
///
/// Looking a controller up by its id bytes does not allocate; only a controller's first
/// mention (and later changes to what is known of it) does. The replayer keeps its hierarchy
/// in terms of handles.
public struct ControllerTable: Sendable {
    /// What is known of one controller.
    public struct Controller: Sendable, Equatable {
        /// The id the app gave it.
        public var id: String
        /// Its class, once an event named it.
        public var className: String?
        /// Its kind: given by the app, else inferred from the class name, else from use.
        public var kind: ControllerKind = .plain
        /// Whether the app said what kind it is (then use never changes it).
        public var kindDeclared = false
        /// Its storyboard identifier, if given.
        public var storyboardID: String?
        /// Its title, if given.
        public var title: String?
        /// `definesPresentationContext` (R3b).
        public var definesContext = false
        /// The unwind actions it implements (R17).
        public var unwindActions: [String] = []
    }

    /// Controller ids → handles (a handle is the id's reference in this table).
    private var ids = ByteStringTable()
    /// Every controller, indexed by handle.
    public private(set) var controllers: [Controller] = []

    /// An empty table.
    public init() {}

    /// The number of controllers.
    public var count: Int { controllers.count }

    /// What is known of the controller `handle` names.
    public subscript(handle: ControllerHandle) -> Controller {
        // Yielded in place: reading one field then retains none of the controller's strings.
        _read { yield controllers[Int(handle.index)] }
    }

    /// The kind of controller `handle`, read in place (no copy of the controller's strings).
    func kind(of handle: Int32) -> ControllerKind { controllers[Int(handle)].kind }

    /// The handle of the controller with this id, if it was mentioned before.
    public func handle(forID id: UnsafeRawBufferPointer) -> ControllerHandle? {
        ids.reference(of: id).map { ControllerHandle(index: Int32($0)) }
    }

    /// The handle of the controller `reference` names, registering it (and what its object
    /// form says) on first mention. A bare id never seen before is registered too, with no
    /// class: the replayer reports that (A16) where it matters.
    public mutating func resolve(_ reference: ControllerReference) -> ControllerHandle {
        let handle = handle(forID: reference.id) ?? insert(reference.id)
        if reference.object != nil { update(handle, from: reference) }
        return handle
    }

    /// Marks a controller as used as `kind` (a VC that receives `nav.push` as `nav` is a
    /// navigation controller), unless the app declared its kind.
    public mutating func noteUse(_ handle: ControllerHandle, as kind: ControllerKind) {
        let index = Int(handle.index)
        guard !controllers[index].kindDeclared, controllers[index].kind == .plain else { return }
        controllers[index].kind = kind
    }

    private mutating func update(_ handle: ControllerHandle, from reference: ControllerReference) {
        // Field by field, in place, writing only what changed: most events that give a
        // controller's object form repeat what is known, and a copy of the controller (to
        // compare) retained every one of its strings, per event.
        let index = Int(handle.index)
        func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }
        func same(_ known: String?, _ bytes: UnsafeRawBufferPointer) -> Bool { known.map { $0.utf8.elementsEqual(bytes) } ?? false }
        if let className = reference.className, !same(controllers[index].className, className) {
            controllers[index].className = text(className)
            if !controllers[index].kindDeclared {
                let inferred = ControllerKind(inferredFromClass: className)
                if inferred != .plain { controllers[index].kind = inferred }
            }
        }
        if let kind = reference.kind, let declared = ControllerKind(rawValue: text(kind)) {
            if controllers[index].kind != declared { controllers[index].kind = declared }
            if !controllers[index].kindDeclared { controllers[index].kindDeclared = true }
        }
        if let storyboardID = reference.storyboardID, !same(controllers[index].storyboardID, storyboardID) {
            controllers[index].storyboardID = text(storyboardID)
        }
        if let title = reference.title, !same(controllers[index].title, title) { controllers[index].title = text(title) }
        if let definesContext = reference.definesContext, controllers[index].definesContext != definesContext {
            controllers[index].definesContext = definesContext
        }
        if let actions = reference.unwindActions {
            let names = actions.elements.compactMap(\.string)
            if controllers[index].unwindActions != names { controllers[index].unwindActions = names }
        }
    }

    /// Appends a controller restored from a checkpoint; false when its id is already in the table.
    mutating func restore(_ controller: Controller) -> Bool {
        var id = controller.id
        let inserted = id.withUTF8 { ids.insert(UnsafeRawBufferPointer($0)).inserted }
        guard inserted else { return false }
        controllers.append(controller)
        return true
    }

    private mutating func insert(_ id: UnsafeRawBufferPointer) -> ControllerHandle {
        let reference = ids.intern(id)
        controllers.append(Controller(id: String(decoding: id, as: UTF8.self)))
        return ControllerHandle(index: Int32(reference))
    }
}
