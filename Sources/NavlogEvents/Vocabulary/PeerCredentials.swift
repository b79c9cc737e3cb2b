/// The sending process of an event as the kernel reports it (`SO_PEERCRED`) or, for an
/// offline import, the importing process; and, for an event a trusted relay passed on, the
/// relay's key id (``RelayKey``). Trusted fields: never taken from a client's event.
public struct PeerCredentials: Hashable, Sendable {
    /// The sender's user id.
    public var uid: UInt32
    /// The sender's group id.
    public var gid: UInt32
    /// The sender's process id.
    public var pid: Int32
    /// Which key the event came in with, said by a relay navlogd trusts (`{"relay":"KEY-ID"}`);
    /// ``RelayKey/none`` for everything else.
    public var relayKey: RelayKey

    /// Creates credentials.
    public init(uid: UInt32, gid: UInt32, pid: Int32, relayKey: RelayKey = .none) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.relayKey = relayKey
    }
}
