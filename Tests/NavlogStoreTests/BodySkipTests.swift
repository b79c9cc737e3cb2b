import NavlogEvents
import NavlogTesting
import NavlogWorkload
import Testing

@testable import NavlogStore

/// `StoredValue.skip` finds where each body of a payload-version-2 block starts (no lengths are
/// stored), so a wrong end shifts every later event of the block, and a wrong verdict on damage
/// either crashes a reader or refuses a good block. It is checked against the token grammar
/// written out here as a plain recursive reading (the oracle), on real bodies and on damaged ones.
@Suite("Skipping a stored body")
struct BodySkipTests {
    /// The token grammar, read recursively: where the value at `offset` ends, nil if malformed
    /// or nested deeper than 256 levels counting from `depth`.
    static func reference(_ tokens: [UInt8], _ offset: Int, depth: Int) -> Int? {
        guard depth < 256, offset < tokens.count else { return nil }
        var position = offset + 1
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while position < tokens.count {
                let byte = tokens[position]
                position += 1
                if shift == 63 && byte > 1 { return nil }
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
                if shift > 63 { return nil }
            }
            return nil
        }
        switch tokens[offset] {
        case 1, 2:
            guard let count = varint(), count <= UInt64(tokens.count) else { return nil }
            for _ in 0..<count {
                if tokens[offset] == 1 {
                    guard position < tokens.count else { return nil }
                    let key = tokens[position]
                    position += 1
                    if key == 0x80, varint() == nil { return nil }
                }
                guard let end = reference(tokens, position, depth: depth + 1) else { return nil }
                position = end
            }
            return position
        case 3, 4, 5: return varint() == nil ? nil : position
        case 6, 7, 8: return position
        default: return nil
        }
    }

    static func skip(_ tokens: [UInt8], _ offset: Int, depth: Int = 0) -> Int? {
        tokens.withUnsafeBytes { StoredValue.skip($0, offset, depth: depth) }
    }

    /// The bodies of realistic events, each as its own token bytes.
    static func bodies() throws -> [[UInt8]] {
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        try codec.roundTrip(StoreFixture.batch(StoreFixture.lines(3000, seed: 21)), into: &block)
        return (0..<block.count).map { index in block.withEvent(index) { _, _, body in Array(body) } }
    }

    @Test("on every body of a block, skip ends each body where the next begins, as the grammar says")
    func realBodies() throws {
        let bodies = try Self.bodies()
        #expect(bodies.count == 3000)
        let all = bodies.flatMap { $0 }
        var start = 0
        for body in bodies {
            #expect(Self.skip(all, start) == start + body.count)
            #expect(Self.reference(all, start, depth: 0) == start + body.count)
            start += body.count
        }
        #expect(bodies.contains { $0.first == BodyToken.object.rawValue && $0.count > 20 }, "the bodies include objects with members")
    }

    @Test("on cut and corrupted bodies, skip agrees with the grammar: the same end or the same refusal")
    func damagedBodies() throws {
        var random = SplitMix64(seed: 5)
        var refusals = 0
        for body in try Self.bodies().prefix(400) {
            for cut in 0..<body.count {
                let cutShort = Array(body[..<cut])
                #expect(Self.skip(cutShort, 0) == Self.reference(cutShort, 0, depth: 0), "cut at \(cut) of \(body)")
            }
            for _ in 0..<20 {
                var damaged = body
                damaged[Int(random.next() % UInt64(body.count))] = UInt8(truncatingIfNeeded: random.next())
                let expected = Self.reference(damaged, 0, depth: 0)
                if expected == nil { refusals += 1 }
                #expect(Self.skip(damaged, 0) == expected, "\(damaged)")
            }
        }
        #expect(refusals > 100, "corruption was refused some of the time (\(refusals))")
    }

    @Test("nesting: values 256 levels deep (counting the depth given) are refused, 255 are read")
    func nesting() {
        for levels in [1, 2, 254, 255, 256, 257] {
            // `levels` arrays of one element each, around a null; and objects with an unknown key.
            let arrays: [UInt8] = Array(repeating: [UInt8]([2, 1]), count: levels - 1).flatMap { $0 } + [8, 3, 0]
            let objects: [UInt8] = Array(repeating: [UInt8]([1, 1, 0x80, 0]), count: levels - 1).flatMap { $0 } + [7, 3, 0]
            for tokens in [arrays, objects] {
                for depth in [0, 1, 200, 255, 256] {
                    #expect(Self.skip(tokens, 0, depth: depth) == Self.reference(tokens, 0, depth: depth), "\(levels) levels from depth \(depth)")
                }
            }
            #expect((Self.skip(arrays, 0) != nil) == (levels <= 256))
        }
    }
}
