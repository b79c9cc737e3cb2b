import Foundation
import NavlogEvents
import NavlogTesting
import NavlogWorkload

@testable import NavlogStore

/// Shared helpers for the store tests.
enum StoreFixture {
    static let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 4242)

    /// `count` realistic event lines.
    static func lines(_ count: Int, seed: UInt64 = 7) -> [[UInt8]] {
        var generator = WorkloadGenerator(WorkloadConfiguration(seed: seed))
        return generator.lines(count)
    }

    /// Parses lines into a batch (every line must be valid).
    static func batch(_ lines: [[UInt8]], receivedAt: Int64 = 1_763_720_000_000_000) -> EventBatch {
        var parser = EventLineParser()
        var batch = EventBatch()
        for (index, line) in lines.enumerated() {
            _ = line.withUnsafeBytes { raw in
                try! parser.parse(raw, lineNumber: index + 1, receivedAt: receivedAt + Int64(index), peer: peer, into: &batch)
            }
        }
        return batch
    }

    /// Small blocks and segments so tests get many of each from few events.
    static var smallOptions: LogOptions {
        var options = LogOptions()
        options.maximumEventsPerBlock = 64
        options.maximumSegmentBytes = 16 << 10
        return options
    }

    /// Every event of the log as `cat` prints it (JSON Lines).
    static func catLines(_ directory: String, _ query: LogQuery = LogQuery()) throws -> (lines: [String], damage: [SegmentDamage]) {
        let reader = try LogReader(directory: directory)
        var out: [String] = []
        var bytes: [UInt8] = []
        try reader.scan(query) { block, index in
            bytes.removeAll(keepingCapacity: true)
            try block.appendJSONLine(index, to: &bytes)
            out.append(String(decoding: bytes.dropLast(), as: UTF8.self))
            return true
        }
        return (out, reader.damage)
    }

    /// Writes `lines` into a new log at `directory` and closes it.
    static func write(_ lines: [[UInt8]], to directory: String, options: LogOptions = smallOptions, seal: Bool = false) throws {
        let log = try EventLog(directory: directory, options: options)
        try log.append(batch(lines))
        if seal { try log.seal() }
        try log.close()
    }

    static func segmentFiles(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".zst") }.sorted()
    }
}
