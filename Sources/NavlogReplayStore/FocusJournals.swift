/// The focus journals of every segment of a log, read and CRC-checked
/// (``ReplayIndex/focusJournals()``): their records decode from memory alone, so several
/// threads can read them at once, each the sessions of its own part.
public struct FocusJournals: Sendable {
    /// One journal frame and the segment whose index holds it.
    struct Frame: Sendable {
        var segment: Int
        var bytes: [UInt8]
    }

    /// The frames, in log order.
    let frames: [Frame]
    /// E4: a session replayed again after a late event has its true records where it was
    /// re-derived (that frame, from that record on); every record of it before is void.
    let rederived: [String: RederivedFrom]

    /// Where a re-derived session's true records start.
    struct RederivedFrom: Sendable {
        var frame: Int
        var record: Int
    }

    init(frames: [Frame]) {
        self.frames = frames
        var rederived: [String: RederivedFrom] = [:]
        for (number, frame) in frames.enumerated() {
            guard let sessions = frame.bytes.withUnsafeBytes({ FocusJournal.rederivedSessions($0) }) else { continue }
            for (session, record) in sessions { rederived[session] = RederivedFrom(frame: number, record: record) }
        }
        self.rederived = rederived
    }

    /// A journal whose CRC and version are right but that does not decode: a bug, not damage
    /// (``ReplayIndex/unreadableJournal(_:)`` says so and has the index rebuilt there).
    public struct Malformed: Error {
        /// The segment (index into the log's segments) whose index holds it.
        public var segment: Int
    }

    /// Calls `visit` with every record that is not void, of the sessions in part `part` of
    /// `parts` (split by the hash of their ids: every session is in exactly one), in log
    /// order, with its session's number in its journal's string table; `frameStarted` before
    /// each journal's records. `controllerIDs`: false leaves each visit's controller id empty.
    /// - Throws: ``Malformed`` at a journal that does not decode (the records before it were
    ///   given), or what `visit` throws.
    public func forEachRecord(
        controllerIDs: Bool = true, part: Int = 0, of parts: Int = 1, frameStarted: () -> Void, _ visit: (FocusJournal.Record, Int) throws -> Void
    ) throws {
        for (frameNumber, frame) in frames.enumerated() {
            frameStarted()
            // Per session number in this frame, the record number below which its records are
            // void (-1: not looked up yet), so that the dictionary of re-derived sessions is
            // asked once per session and frame, not hashed into once per record.
            var voidBelow: [Int] = []
            func isVoid(_ record: FocusJournal.Record, _ key: Int, _ recordNumber: Int) -> Bool {
                guard !rederived.isEmpty else { return false }
                if key >= voidBelow.count { voidBelow.append(contentsOf: repeatElement(-1, count: key + 1 - voidBelow.count)) }
                if voidBelow[key] < 0 {
                    let until = rederived[record.session]
                    voidBelow[key] = until.map { $0.frame > frameNumber ? Int.max : $0.frame == frameNumber ? $0.record : 0 } ?? 0
                }
                return recordNumber < voidBelow[key]
            }
            let decoded = try frame.bytes.withUnsafeBytes { raw in
                try FocusJournal.decode(raw, controllerIDs: controllerIDs, part: part, of: parts) { record, key, recordNumber in
                    if !isVoid(record, key, recordNumber) { try visit(record, key) }
                }
            }
            guard decoded else { throw Malformed(segment: frame.segment) }
        }
    }
}
