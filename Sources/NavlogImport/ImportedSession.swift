/// One session to write: its identity, what `session.start` says, and what was observed.
public struct ImportedSession: Sendable {
    /// The navlog session id (deterministic: the same input gives the same id).
    public var id: String
    /// The source it came from.
    public var source: ImportSource
    /// `session.start`'s `app` (required by the contract).
    public var app: String
    /// `session.start`'s `version`, `os` and `device`, when the source has them.
    public var version: String?
    public var os: String?
    public var device: String?
    /// What the source calls the session (its own id), for the import mark.
    public var sourceSession: String
    /// The observations, in the order they happened.
    public var observations: [ImportedObservation] = []
    /// The earliest time the source has for the session when it is before every observation
    /// (Firebase's `session_start` row): `session.start`'s time.
    public var earliest: Int64?

    /// A session with no observations yet.
    public init(id: String, source: ImportSource, app: String, sourceSession: String) {
        self.id = ImportedSession.sessionID(id)
        self.source = source
        self.app = app.isEmpty ? source.rawValue : ImportedController.cut(app)
        self.sourceSession = ImportedController.cut(sourceSession)
    }

    /// `id` if it fits events.md's 128 bytes, else its first 100 bytes and a hash of the whole.
    static func sessionID(_ id: String) -> String {
        guard id.utf8.count > 128 else { return id }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        var prefix = ""
        var count = 0
        for character in id {
            if count + character.utf8.count > 100 { break }
            prefix.append(character)
            count += character.utf8.count
        }
        return prefix + "~" + String(hash, radix: 16)
    }
}
