/// The settings of a chaos run (``ChaosLoadCommand`` reads them from the command line;
/// `navlog-bench chaos-load --help` lists them).
struct ChaosLoadOptions {
    /// navlogd's socket.
    var socket = ""
    /// Misbehaving connections opened at once.
    var connections = 1000
    /// How long the chaos lasts; good clients stop sending then and wait for their last acks.
    var seconds = 20.0
    /// Well-behaved durable clients.
    var good = 8
    /// Events per second each good client sends (0: as fast as its window of unacknowledged
    /// lines allows).
    var goodRate = 500.0
    /// Events per second each `stream` and `silentStream` connection sends (0: as fast as
    /// navlogd takes them).
    var streamRate = 0.0
    /// Unacknowledged lines a good client may have in flight.
    var goodWindow = 512
    /// The longest a good client may wait for an ack before it counts as stalled.
    var maximumWait = 5.0
    /// Seeds every choice and every session; a fresh one per run by default, because navlogd
    /// drops a resent `(session, seq)` as a duplicate across runs against the same data.
    var seed = UInt64(UInt64(monotonic() * 1_000_000) & 0xFFFF_FFFF)
    /// When set, the log is checked after the run (`navlog cat`, `navlog verify`, `navlog stats`).
    var dataDirectory: String?
    /// The `navlog` executable for those checks (default: beside this program).
    var navlog: String?
    /// When set, the good clients' sessions and the seqs sent in each are written here as JSON
    /// Lines (`{"session":…,"seqs":[…]}`), so a test can check the log independently.
    var goodEventsFile: String?
    /// Shares of the behaviours (`--mix neverRead=30,controlFlood=0`; unnamed ones keep their
    /// default weight).
    var weights = Dictionary(uniqueKeysWithValues: ChaosBehaviour.allCases.map { ($0, $0.weight) })
}
