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

    /// `SO_PEERGROUPS` on Linux (4.13 and later): the peer's supplementary groups at connect time.
    static let peerGroupsOption: Int32 = 59

    /// The peer's credentials, and its supplementary groups when the kernel can tell them.
    static func read(_ channel: any Channel) -> EventLoopFuture<(PeerCredentials, supplementaryGroups: [UInt32])> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(NotASocket())
        }
        let future: EventLoopFuture<KernelPeerCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerCredentialsOption))
        return future.flatMap { kernel in
            let credentials = PeerCredentials(uid: kernel.uid, gid: kernel.gid, pid: kernel.pid)
            let groups: EventLoopFuture<SIMD64<UInt32>> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(peerGroupsOption))
            // A peer in more than 64 groups (ERANGE) or an old kernel: its primary gid only.
            return groups.map { (credentials, supplementaryGroups(in: $0)) }.recover { _ in (credentials, []) }
        }
    }

    /// The groups in a zero-padded `SO_PEERGROUPS` answer. The kernel keeps a process's groups
    /// sorted ascending, so they are the strictly increasing run from the start; the padding
    /// (zeros) ends it. A lone group 0 cannot be told from padding and is left out: it never
    /// grants access it should not.
    static func supplementaryGroups(in answer: SIMD64<UInt32>) -> [UInt32] {
        var groups: [UInt32] = []
        for index in 0..<answer.scalarCount {
            let gid = answer[index]
            if let last = groups.last {
                guard gid > last else { break }
            } else if gid == 0 {
                // A first 0 is a real group only if a larger one follows.
                guard index + 1 < answer.scalarCount, answer[index + 1] > 0 else { break }
            }
            groups.append(gid)
        }
        return groups
    }
}

/// Finds out who is on the other end of a connection (trusted: never what the client says).
/// navlogd asks the kernel (``PeerCredentialsReader/read(_:)``); an `EmbeddedChannel` has no
/// socket, so its tests give the credentials.
typealias PeerIdentifier = (any Channel) -> EventLoopFuture<(PeerCredentials, supplementaryGroups: [UInt32])>
