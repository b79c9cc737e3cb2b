/// How a log writes: block and segment sizes, compression, retention.
public struct LogOptions: Sendable, Hashable {
    /// A block is written once it holds this many events.
    ///
    /// Large blocks amortize each block's string table (its "dictionary": session ids,
    /// controller ids, class names) over more events and give each session longer runs in its
    /// group (grouped blocks are session-major). 131072, by measurement on 2M production-shaped
    /// events (docs/BENCHMARKS.md, issue 14, sixth part): 0.427× `zstd -3` of the NDJSON as
    /// stored and 0.482× with receive times stamped as navlogd stamps them, against 0.459× and
    /// 0.513× with 32768 (65536: 0.439×, 0.495×); seeks read the same group size (8,192
    /// events) and took as long.
    public var maximumEventsPerBlock = 131_072
    /// ... or once its payload reaches about this many bytes.
    public var maximumBlockBytes = 4 << 20
    /// A block of at least twice this many events is written *grouped*: its sessions split
    /// into one group per this many events (at most 64), each compressed as its own frame, so
    /// a reader of one session (a seek, `navlog replay`) decompresses one group, not the block.
    ///
    /// 8192 (16 groups in a full 131,072-event block), by measurement on 2M production-shaped
    /// events in 32,768-event blocks (docs/BENCHMARKS.md, fifth part): log 21.4 MB and a median
    /// seek of 4.3 ms, against 23.0 MB and 12.3 ms ungrouped; 16384 (2 groups) 20.8 MB and
    /// 6.5 ms; 4096 (8) 22.1 MB and 3.5 ms. A group's frame is what a seek decompresses per block.
    /// (Grouped parts are session-major, which compresses better than log order.) `Int.max`
    /// writes every block as one frame.
    public var eventsPerSessionGroup = 8192
    /// A segment is sealed (seek table and index written) once it reaches this size.
    public var maximumSegmentBytes = 64 << 20
    /// zstd level of data frames.
    ///
    /// 6: on 2M production-shaped events (`navlog-bench generate 2000000 42`) the log takes
    /// 0.495× what `zstd -3` makes of the same NDJSON (level 3: 0.513×, 5: 0.506×, 7: 0.493×),
    /// for about 0.5 µs more CPU per event than level 3 (ingest 2.7 → 3.6–4.9 s): a
    /// single writer still stores ~400k events/s, thousands of times production's rate.
    public var compressionLevel: Int32 = 6
    /// zstd level sealed segments are written again at, in the background (log compaction,
    /// ``SegmentCompaction``); nil keeps every segment at the level it was written at.
    ///
    /// 19: a sealed segment never changes and is read far more often than written, so it is
    /// worth the CPU once. On 2M production-shaped events in 131,072-event blocks the log
    /// takes 18.3 MB with groups at 19 and spines at 6 (``spineCompressionLevel``), against
    /// 19.9 MB at 6, for seeks ~8% slower (docs/BENCHMARKS.md, issue 14, seventh part);
    /// compressing at 19 ran at ~89k events/s on one core (10M events), hundreds of times production's
    /// rate, while the writer stays at 6 to keep up with bursts.
    public var sealedCompressionLevel: Int32? = 19
    /// zstd level of a grouped block's spine (nil: ``compressionLevel``). Compaction writes a
    /// sealed segment's group frames at ``sealedCompressionLevel`` and its spines at the
    /// writer's level: every read for one session (a seek) decompresses its block's whole
    /// spine, and at level 19 spines took 70% longer to decompress for 15% fewer bytes, 2% of
    /// the log (docs/BENCHMARKS.md, issue 14, seventh part).
    public var spineCompressionLevel: Int32?
    /// Delete the oldest sealed segments while the log is larger than this (bytes).
    public var retentionBytes: Int?
    /// Delete sealed segments whose newest event was received longer ago than this (µs).
    public var retentionAge: Int64?

    /// The defaults.
    public init() {}
}

/// What opening a log had to repair.
public struct RecoveryReport: Sendable, Hashable {
    /// Bytes cut from the end of segments (an incomplete or corrupt last block).
    public var truncatedBytes = 0
    /// Segments whose torn tail was cut.
    public var truncatedSegments: [String] = []
    /// Segments renamed aside (`*.damaged`) because data in them is damaged.
    public var setAside: [String] = []
    /// Segments whose damaged or missing seek table was rewritten.
    public var resealed: [String] = []
    /// Every problem found.
    public var damage: [SegmentDamage] = []
    /// Flipped bits corrected from their block's checksum (header or data).
    public var repaired: [SegmentDamage] = []
    /// Files holding bytes recovery took out of segments (`<segment>.quarantine-<offset>`).
    public var quarantined: [String] = []
    /// Segments rewritten with their valid blocks only (the damage between them quarantined).
    public var rewritten: [String] = []

    /// What recovery did, one sentence per kind of repair (for logs and the command line).
    public var sentences: [String] {
        var sentences: [String] = []
        if truncatedBytes > 0 {
            sentences.append(
                "Cut \(truncatedBytes) bytes of incomplete or damaged data from the end of \(truncatedSegments.joined(separator: ", ")); they are kept in \(quarantined.filter { name in truncatedSegments.contains { name.hasPrefix($0) } }.joined(separator: ", "))."
            )
        }
        for repair in repaired { sentences.append("Repaired \(repair.description).") }
        for name in rewritten {
            let kept = quarantined.filter { $0.hasPrefix(name) && !truncatedSegments.contains(name) }
            sentences.append(
                "Segment \(name) had damaged data between valid blocks: it was rewritten with every valid block, the damaged bytes kept in \(kept.joined(separator: ", ")) (events in them are missing: navlog verify lists the LSN gaps)."
            )
        }
        for name in setAside { sentences.append("Segment \(name) is damaged; it was renamed to \(name).damaged and new events go to a new segment.") }
        for name in resealed { sentences.append("Segment \(name) had a damaged or missing seek table; it was rewritten.") }
        return sentences
    }

    /// Whether anything had to be repaired.
    public var isClean: Bool { truncatedBytes == 0 && setAside.isEmpty && resealed.isEmpty && damage.isEmpty && repaired.isEmpty && rewritten.isEmpty }
}

/// An append that stopped part way: the first `accepted` events of the batch have LSNs and will
/// be written; the rest were not taken.
public struct AppendError: Error, Sendable, CustomStringConvertible {
    /// How many events of the batch were accepted.
    public var accepted: Int
    /// Why the rest were refused.
    public var cause: StoreError
    public var description: String { "\(cause.message) (\(accepted) events of the batch were accepted before the failure.)" }
}
