/// The sending process of an event as the kernel reports it (`SO_PEERCRED`) or, for an
/// offline import, the importing process. A trusted field: never taken from a client.
public struct PeerCredentials: Hashable, Sendable {
    /// The sender's user id.
    public var uid: UInt32
    /// The sender's group id.
    public var gid: UInt32
    /// The sender's process id.
    public var pid: Int32

    /// Creates credentials.
    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }
}
