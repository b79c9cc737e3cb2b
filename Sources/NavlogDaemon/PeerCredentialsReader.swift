import NIOCore
import NavlogEvents

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a Unix-socket peer's credentials from the kernel (`SO_PEERCRED`): the trusted uid,
/// gid and pid stored with every event of the connection. A client cannot choose them.
enum PeerCredentialsReader {
    /// Linux's `struct ucred` (`pid_t pid; uid_t uid; gid_t gid;`); Glibc only exposes it to C
    /// with `_GNU_SOURCE`, so it is declared here with the same layout.
    struct KernelPeerCredentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// `SO_PEERCRED` on Linux.
    static let peerCredentialsOption: Int32 = 17

    struct NotASocket: Error, CustomStringConvertible {
        var description: String { "the channel does not expose socket options" }
    }

    static func read(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(NotASocket())
        }
        let future: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerCredentialsOption))
        return future.map { PeerCredentials(uid: $0.uid, gid: $0.gid, pid: $0.pid) }
    }
}
