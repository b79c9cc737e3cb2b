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
    /// - Parameter emit: called once per line, without its newline.
    /// - Returns: the number of lines written.
    @discardableResult
    public func writeEvents(_ emit: ([UInt8]) throws -> Void) rethrows -> Int {
        let sorted = observations.sorted { ($0.timestamp, $0.order) < ($1.timestamp, $1.order) }
        var sequence: UInt64 = 0
        // One buffer for every line (taken back after each; a new one only if `emit` kept it).
        var buffer: [UInt8] = []
        func line(_ type: StaticString, _ timestamp: Int64, _ fill: (inout EventLineWriter) -> Void) throws {
            sequence += 1
            var writer = EventLineWriter(reusing: &buffer, type: type, session: id, timestamp: timestamp, sequence: sequence)
            fill(&writer)
            buffer = writer.finished()
            try emit(buffer)
        }
        let first = sorted.first?.timestamp ?? earliest ?? 0
        let start = min(first, earliest ?? first)
        try line("session.start", start) { writer in
            writer.string("app", app)
            if let version { writer.string("version", ImportedController.cut(version)) }
            if let os { writer.string("os", ImportedController.cut(os)) }
            if let device { writer.string("device", ImportedController.cut(device)) }
        }
        try line("mark", start) { writer in
            writer.string("name", "import")
            writer.stringObject("props", ["source": source.rawValue, "sourceSession": sourceSession])
        }
        // The window's own screen first, then each presented controller above it.
        var chain: [ImportedController] = []
        var appeared = Set<String>()
        // Embedded children whose appearance was written since the screen last changed.
        var childrenShown = Set<String>()
        var foreground = true
        for observation in sorted {
            let ts = observation.timestamp
            switch observation.kind {
            case .background:
                guard foreground else { continue }
                foreground = false
                try line("app.background", ts) { _ in }
            case .foreground:
                guard !foreground else { continue }
                foreground = true
                try line("app.foreground", ts) { _ in }
            case .disappear(let vc):
                childrenShown.remove(vc.id)
                guard appeared.remove(vc.id) != nil else { continue }
                try line("vc.disappear", ts) { writer in
                    writer.controller("vc", vc)
                    writer.string("phase", "did")
                }
            case .appear(let vc, let placement):
                if placement == .child {
                    guard childrenShown.insert(vc.id).inserted else { continue }
                } else {
                    let before = chain
                    if let index = chain.firstIndex(where: { $0.id == vc.id }) {
                        // Shown again: what was presented above it was dismissed. Called on the
                        // controller shown again (it presents), R7 dismisses everything above it.
                        if index + 1 < chain.count {
                            let receiver = chain[index]
                            try line("dismiss", ts) { writer in writer.controller("vc", receiver) }
                            chain.removeSubrange((index + 1)...)
                        } else if appeared.contains(vc.id) {
                            continue  // the screen already shown, appearing again: nothing new
                        }
                    } else {
                        switch placement {
                        case .presented where !chain.isEmpty:
                            let presenter = chain[chain.count - 1]
                            try line("present", ts) { writer in
                                writer.controller("from", presenter)
                                writer.controller("vc", vc)
                            }
                            chain.append(vc)
                        case .insidePresentation where chain.count > 1:
                            // Another screen of the presented context: the context's content changed.
                            let replaced = chain[chain.count - 1]
                            let presenter = chain[chain.count - 2]
                            try line("dismiss", ts) { writer in writer.controller("vc", replaced) }
                            try line("present", ts) { writer in
                                writer.controller("from", presenter)
                                writer.controller("vc", vc)
                            }
                            chain[chain.count - 1] = vc
                        case .insidePresentation where chain.count == 1:
                            let presenter = chain[0]
                            try line("present", ts) { writer in
                                writer.controller("from", presenter)
                                writer.controller("vc", vc)
                            }
                            chain.append(vc)
                        default:
                            if chain.count > 1 {
                                // On the window's screen, which presents: everything presented goes (R7).
                                let receiver = chain[0]
                                try line("dismiss", ts) { writer in writer.controller("vc", receiver) }
                            }
                            try line("window.root", ts) { writer in writer.controller("vc", vc) }
                            chain = [vc]
                        }
                    }
                    if chain != before { childrenShown.removeAll() }
                }
                appeared.insert(vc.id)
                try line("vc.appear", ts) { writer in
                    writer.controller("vc", vc)
                    writer.string("phase", "did")
                }
            }
        }
        return Int(sequence)
    }
}
