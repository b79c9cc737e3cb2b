import NIOCore

/// navlogd connections shared by the intake's requests: each request borrows one for its body
/// (a connection carries one body at a time, so navlogd's acks and line numbers are that
/// body's), at most ``maximumConnections`` at once; the others wait their turn.
///
/// Nothing is kept open while navlogd is away: a request that finds no usable connection
/// connects anew, so the intake reconnects by itself as soon as navlogd is back.
actor RelayPool {
    private let socketPath: String
    private let group: any EventLoopGroup
    private let maximumConnections: Int
    private let maximumWaiters: Int
    private let timeout: TimeAmount
    private var idle: [RelayConnection] = []
    /// Connections lent out or being opened.
    private var busy = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// A pool of at most `maximumConnections` connections to `socketPath`.
    init(socketPath: String, group: any EventLoopGroup, maximumConnections: Int, maximumWaiters: Int, timeout: TimeAmount) {
        self.socketPath = socketPath
        self.group = group
        self.maximumConnections = max(1, maximumConnections)
        self.maximumWaiters = maximumWaiters
        self.timeout = timeout
    }

    /// Relays one body over a borrowed connection.
    func relay(keyID: String, body: ByteBuffer, lines: Int) async throws(RelayFailure) -> RelayOutcome {
        let connection = try await borrow()
        do {
            let outcome = try await connection.relay(keyID: keyID, body: body, lines: lines)
            giveBack(connection)
            return outcome
        } catch {
            connection.close()
            giveBack(nil)
            throw error
        }
    }

    /// Whether navlogd takes a connection now (for `/healthz`).
    func probe() async -> RelayFailure? {
        do {
            let connection = try await borrow()
            giveBack(connection)
            return nil
        } catch {
            return error
        }
    }

    /// Closes the idle connections (at shutdown).
    func closeAll() {
        for connection in idle { connection.close() }
        idle.removeAll()
    }

    private func borrow() async throws(RelayFailure) -> RelayConnection {
        while busy + idle.count >= maximumConnections && idle.isEmpty {
            guard waiters.count < maximumWaiters else {
                throw RelayFailure(
                    code: .unreachable, message: "the intake already has \(waiters.count) requests waiting for one of its \(maximumConnections) navlogd connections",
                    storedBeforeFailure: 0)
            }
            await withCheckedContinuation { waiters.append($0) }
        }
        while let connection = idle.popLast() {
            if connection.isUsable {
                busy += 1
                return connection
            }
        }
        busy += 1
        do {
            return try await RelayConnection.connect(socketPath: socketPath, group: group, timeout: timeout)
        } catch {
            busy -= 1
            wakeOne()
            throw error
        }
    }

    private func giveBack(_ connection: RelayConnection?) {
        busy -= 1
        if let connection, connection.isUsable { idle.append(connection) }
        wakeOne()
    }

    private func wakeOne() {
        if !waiters.isEmpty { waiters.removeFirst().resume() }
    }
}
