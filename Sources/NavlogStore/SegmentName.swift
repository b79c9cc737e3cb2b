/// File names of a data directory, Kafka-style: a segment is named after the LSN of its first
/// event, zero-padded to 20 digits, so names sort in log order.
///
/// - `00000000000000000001.zst`: a segment (zstd frames; sealed ones end with a seek table).
/// - `00000000000000000001.idx`: the sparse index of a sealed segment (derived, rebuildable).
/// - `00000000000000000001.zst.damaged`: a segment recovery set aside; never read or appended to.
/// - `navlog.lock`: held (flock) by the one writer.
enum SegmentName {
    static let segmentSuffix = ".zst"
    static let indexSuffix = ".idx"
    static let damagedSuffix = ".damaged"
    /// Bytes taken out of a segment by recovery: `<segment>.quarantine-<byte offset>`.
    static let quarantineInfix = ".quarantine-"
    static let lockFile = "navlog.lock"

    static func segment(_ base: UInt64) -> String { padded(base) + segmentSuffix }
    static func index(_ base: UInt64) -> String { padded(base) + indexSuffix }

    static func padded(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    /// The base LSN of a segment file name, or `nil` for any other name.
    static func baseLSN(ofSegment name: String) -> UInt64? {
        guard name.count == 20 + segmentSuffix.count, name.hasSuffix(segmentSuffix) else { return nil }
        return UInt64(name.prefix(20))
    }
}
