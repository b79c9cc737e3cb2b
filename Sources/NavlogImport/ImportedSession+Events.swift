import NavlogEvents
import NavlogJSON

extension ImportedSession {
    /// Writes the session as navlog event lines, `seq` 1, 2, … in order: `session.start`, a
    /// `mark` named `import` saying where it came from, then what the observations prove.
    ///
    /// Only what the source proves is written (docs/IMPORT.md): a screen in the window's own
    /// context becomes the window's root (`window.root`), a presented one is `present`ed over
    /// the screen shown, a screen shown again under a presentation dismisses what was above
    /// it; an embedded child's appearance is written without placing it (it is part of its
    /// parent's screen, F1); `vc.appear`/`vc.disappear` keep the phase the source records
    /// (`did`), so `navlog replay`'s `records` line shows what the source records.
    /// - Parameter sink: where the events go.
    /// - Returns: the number of events written.
    @discardableResult
    public func writeEvents<Sink: ImportedEventSink>(into sink: inout Sink) throws -> Int {
        let sorted = observations.sorted { ($0.timestamp, $0.order) < ($1.timestamp, $1.order) }
        var writer = ImportedEventWriter<Sink>(session: id)
        let first = sorted.first?.timestamp ?? earliest ?? 0
        try writeStart(at: min(first, earliest ?? first), into: &writer, &sink)
        for observation in sorted { try writer.write(observation, &sink) }
        return Int(writer.sequence)
    }

    /// ``writeEvents(into:)`` as JSON lines, each handed to `emit` without its newline.
    @discardableResult
    public func writeEvents(_ emit: @escaping ([UInt8]) throws -> Void) throws -> Int {
        var lines = ImportedJSONLines { _, line in try emit(line) }
        return try writeEvents(into: &lines)
    }

    /// `session.start` with what the source says of the app and the device, then the `mark`
    /// named `import` with the source and its own session id: an imported session can be told
    /// from a recorded one and traced back to the source, with nothing added to the contract.
    private func writeStart<Sink>(at start: Int64, into writer: inout ImportedEventWriter<Sink>, _ sink: inout Sink) throws {
        try writer.line("session.start", start, &sink) { line in
            line.field(.app, app)
            if let version { line.field(.version, ImportedController.cut(version)) }
            if let os { line.field(.os, ImportedController.cut(os)) }
            if let device { line.field(.device, ImportedController.cut(device)) }
        }
        try writer.line("mark", start, &sink) { line in
            line.field(.name, "import")
            line.importProps(source: source.rawValue, sourceSession: sourceSession)
        }
    }
}

/// Writes one imported session's lines, `seq` in order, keeping what the lines written so far
/// have shown (the screens in place, the controllers appeared, the foreground), so that each
/// observation writes only what it changes.
///
/// Its methods are inlined into ``ImportedSession/writeEvents(into:)``: called through, each
/// took the line's closure context (which holds the whole session) as a copy of the session
/// per line written, about 7% of a Datadog import's time.
private struct ImportedEventWriter<Sink: ImportedEventSink> {
    let session: String
    /// The `seq` of the last line written.
    private(set) var sequence: UInt64 = 0
    /// The window's own screen first, then each presented controller above it.
    private var chain: [ImportedController] = []
    /// Controllers whose appearance was written and that have not disappeared since.
    private var appeared = Set<String>()
    /// Embedded children whose appearance was written since the screen last changed.
    private var childrenShown = Set<String>()
    private var foreground = true

    init(session: String) {
        self.session = session
    }

    /// Writes the next line, `seq` one more than the last.
    /// - Parameter fill: writes the line's own fields.
    @inline(__always)
    mutating func line(_ type: StaticString, _ timestamp: Int64, _ sink: inout Sink, _ fill: (inout Sink.Fields) -> Void) throws {
        sequence += 1
        try sink.event(type, session: session, timestamp: timestamp, sequence: sequence, fill)
    }

    /// Writes what one observation changes: the foreground only when it changes, a
    /// disappearance only of a controller shown, an appearance as ``appear(_:_:at:_:)`` places it.
    @inline(__always)
    mutating func write(_ observation: ImportedObservation, _ sink: inout Sink) throws {
        let ts = observation.timestamp
        switch observation.kind {
        case .background:
            guard foreground else { return }
            foreground = false
            try line("app.background", ts, &sink) { _ in }
        case .foreground:
            guard !foreground else { return }
            foreground = true
            try line("app.foreground", ts, &sink) { _ in }
        case .disappear(let vc):
            childrenShown.remove(vc.id)
            guard appeared.remove(vc.id) != nil else { return }
            try line("vc.disappear", ts, &sink) { writer in
                writer.field(.vc, vc)
                writer.field(.phase, "did")
            }
        case .appear(let vc, let placement):
            try appear(vc, placement, at: ts, &sink)
        }
    }

    /// An appearance: an embedded child's is written once while the screen stays (it is part of
    /// its parent's screen, F1, and the source repeats it with the parent's); any other is
    /// placed first (``place(_:_:at:_:)``), and the screen already shown appearing again
    /// writes nothing.
    @inline(__always)
    private mutating func appear(_ vc: ImportedController, _ placement: ImportedObservation.Placement, at ts: Int64, _ sink: inout Sink) throws {
        if placement == .child {
            guard childrenShown.insert(vc.id).inserted else { return }
        } else {
            let before = chain
            guard try place(vc, placement, at: ts, &sink) else { return }
            if chain != before { childrenShown.removeAll() }
        }
        appeared.insert(vc.id)
        try line("vc.appear", ts, &sink) { writer in
            writer.field(.vc, vc)
            writer.field(.phase, "did")
        }
    }

    /// Puts a screen in place, writing the calls that prove it: a controller of the chain shown
    /// again dismisses what was presented above it; a new one is placed by ``placeNew(_:_:at:_:)``.
    /// - Returns: whether anything is new: `false` for the top of the chain appearing again
    ///   while it is shown.
    @inline(__always)
    private mutating func place(_ vc: ImportedController, _ placement: ImportedObservation.Placement, at ts: Int64, _ sink: inout Sink) throws -> Bool {
        guard let index = chain.firstIndex(where: { $0.id == vc.id }) else {
            try placeNew(vc, placement, at: ts, &sink)
            return true
        }
        guard index + 1 < chain.count else { return !appeared.contains(vc.id) }
        // Shown again: what was presented above it was dismissed. Called on the controller
        // shown again (it presents), R7 dismisses everything above it.
        let receiver = chain[index]
        try line("dismiss", ts, &sink) { writer in writer.field(.vc, receiver) }
        chain.removeSubrange((index + 1)...)
        return true
    }

    /// A screen not in the chain: presented over the top of it, put in place of the presented
    /// top (the presented context's content changed), or, in the window's own context, the
    /// window's new root, once everything presented is dismissed (R7).
    @inline(__always)
    private mutating func placeNew(_ vc: ImportedController, _ placement: ImportedObservation.Placement, at ts: Int64, _ sink: inout Sink) throws {
        switch placement {
        case .presented where !chain.isEmpty:
            try present(vc, from: chain[chain.count - 1], at: ts, &sink)
            chain.append(vc)
        case .insidePresentation where chain.count > 1:
            // Another screen of the presented context: the context's content changed.
            let replaced = chain[chain.count - 1]
            try line("dismiss", ts, &sink) { writer in writer.field(.vc, replaced) }
            try present(vc, from: chain[chain.count - 2], at: ts, &sink)
            chain[chain.count - 1] = vc
        case .insidePresentation where chain.count == 1:
            try present(vc, from: chain[0], at: ts, &sink)
            chain.append(vc)
        default:
            if chain.count > 1 {
                // On the window's screen, which presents: everything presented goes (R7).
                let receiver = chain[0]
                try line("dismiss", ts, &sink) { writer in writer.field(.vc, receiver) }
            }
            try line("window.root", ts, &sink) { writer in writer.field(.vc, vc) }
            chain = [vc]
        }
    }

    /// `present` of `vc` from `presenter`.
    @inline(__always)
    private mutating func present(_ vc: ImportedController, from presenter: ImportedController, at ts: Int64, _ sink: inout Sink) throws {
        try line("present", ts, &sink) { writer in
            writer.field(.from, presenter)
            writer.field(.vc, vc)
        }
    }
}
