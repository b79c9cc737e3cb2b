import Foundation
import NavlogTesting
import Testing

@testable import NavlogStore

/// `verify` checks every field of a sealed segment's seek table (issue: "verify misses
/// seek-table errors: a wrong decompressed size in an entry, or the footer's checksum flag set,
/// still gives ok").
@Suite("verify and the seek table's fields")
struct VerifierSeekTableTests {
    /// A sealed segment, `patch` applied to its bytes (given the offset where the table starts), verified.
    static func verify(_ patch: (inout [UInt8], Int) -> Void) throws -> [String] {
        try TestEnvironment.withTemporaryDirectory { dir in
            try StoreFixture.write(StoreFixture.lines(700), to: dir.path, options: LogOptions(), seal: true)
            let segment = dir.appendingPathComponent(try StoreFixture.segmentFiles(dir.path)[0])
            var bytes = try [UInt8](Data(contentsOf: segment))
            let count = bytes.withUnsafeBytes { SeekTable.frameCount(footer: UnsafeRawBufferPointer(rebasing: $0[($0.count - 9)...]))! }
            patch(&bytes, bytes.count - (8 + count * 8 + 9))
            try Data(bytes).write(to: segment)
            return try LogVerifier.verify(directory: dir.path).problems.map(\.description)
        }
    }

    @Test("an intact table verifies")
    func intact() throws {
        #expect(try Self.verify { _, _ in } == [])
    }

    @Test("a wrong decompressed size in an entry is reported")
    func decompressedSize() throws {
        let problems = try Self.verify { bytes, table in
            // Entry 0: compressed size at table+8, decompressed size at table+12 (little-endian u32).
            bytes[table + 12] &+= 1
        }
        #expect(problems.contains { $0.contains("seek table entry 0 says block 0 decompresses to") }, "\(problems)")
    }

    @Test("the footer's checksum flag, or a reserved bit, is reported")
    func descriptor() throws {
        let flag = try Self.verify { bytes, _ in bytes[bytes.count - 5] = 0x80 }
        #expect(flag.contains { $0.contains("checksum flag is set") }, "\(flag)")
        let reserved = try Self.verify { bytes, _ in bytes[bytes.count - 5] = 0x01 }
        #expect(reserved.contains { $0.contains("descriptor is 0x1") }, "\(reserved)")
    }
}
