public import Foundation
public import NavlogClient

extension NavlogClient {
    /// Where and how the HTTP transport sends events: `navlog intake`'s `POST /v1/events`.
    ///
    /// Events go from ``NavlogClient/send(_:)`` to memory, from there (on the client's thread,
    /// within milliseconds) to a queue directory, and from the queue to the intake in gzip
    /// batches. A batch is deleted only once the intake answered it: `200` (stored, already
    /// stored, or rejected line by line), or an answer that says resending cannot help (`400`,
    /// `401`, `403`, `413`, `415`: counted as rejected and reported). Anything else (no network,
    /// a timeout, a cut connection, `429`, `5xx`, a redirect, a `200` that is not the intake's
    /// answer, as a captive portal sends) is retried after an exponential, jittered delay, or
    /// after the server's `Retry-After`. Each event has a `session` and a `seq` (the client
    /// numbers the events of a session that come without one), so a batch sent twice is stored
    /// once.
    public struct HTTPConfiguration: Sendable {
        /// The intake's events endpoint, such as `https://intake.example.com/v1/events`.
        public var url: URL
        /// The bearer secret of the app's key.
        public var key: String
        /// The queue's directory (created if missing). Give each client its own: two clients
        /// on one directory would send each other's events.
        public var queueDirectory: URL
        /// A batch is closed at this many events…
        public var maximumBatchEvents = 500
        /// …or this many bytes of event lines (before gzip)…
        public var maximumBatchBytes = 512 << 10
        /// …or when its first event is this many seconds old.
        public var maximumBatchAge: Double = 5
        /// Events kept (in memory and on disk); beyond this the oldest batch is dropped and counted.
        public var maximumQueuedEvents = 100_000
        /// Bytes kept on disk (gzip batches and the open batch); beyond this the oldest batch
        /// is dropped and counted.
        public var maximumQueuedBytes = 16 << 20
        /// First and largest delay between attempts (doubling, with jitter, in between).
        public var retryDelay: ClosedRange<Double> = 1...300
        /// The longest `Retry-After` honoured; a longer one waits this long.
        public var maximumRetryAfter: Double = 3600
        /// Seconds one request may take.
        public var requestTimeout: Double = 60
        /// Longer event lines are rejected by the client (the intake's `--max-line-bytes`):
        /// one would make the intake refuse the whole batch.
        public var maximumLineBytes = 64 << 10
        /// gzip level of batches (1–9).
        public var compressionLevel: Int32 = 6
        /// The time source and wait; tests give their own.
        public var clock: TransportClock = .system

        /// A configuration for `url`, `key` and `queueDirectory` with defaults for the rest.
        public init(url: URL, key: String, queueDirectory: URL) {
            self.url = url
            self.key = key
            self.queueDirectory = queueDirectory
        }
    }

    /// Why the HTTP transport could not do something.
    public struct HTTPTransportError: Error, CustomStringConvertible, Sendable {
        /// What kind of failure.
        public struct Code: Hashable, Sendable {
            let name: String
            /// The queue directory could not be read or written.
            public static let queue = Code(name: "queue")
            /// zlib failed.
            public static let compression = Code(name: "compression")
        }
        /// What kind of failure.
        public var code: Code
        /// What happened, as a sentence.
        public var description: String

        init(code: Code, _ description: String) {
            self.code = code
            self.description = description
        }
    }

    /// How many events a queue directory has taken so far over all its clients' lives (the
    /// next event's index in it). `navlog send` uses it to resume a file where the queue ends.
    /// - Throws: ``HTTPTransportError`` when the directory cannot be read.
    public static func queuedEventCount(queueDirectory: URL) throws -> UInt64 {
        try DiskQueue.appendedCount(directory: queueDirectory.path)
    }
}

extension NavlogClient.Configuration {
    /// A configuration that sends over HTTP(S) to `navlog intake`, with defaults for the rest
    /// (`whenFull` and `clientName` apply; `maximumQueuedEvents` is `http`'s).
    public init(http: NavlogClient.HTTPConfiguration) {
        self.init(socketPath: "")
        transport = { configuration, onRejection in
            HTTPTransport(configuration: http, whenFull: configuration.whenFull, clientName: configuration.clientName, onRejection: onRejection)
        }
    }
}
