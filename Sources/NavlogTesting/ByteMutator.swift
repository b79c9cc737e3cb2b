import NavlogWorkload

/// Deterministic mutations for the tests' small in-process fuzzers: bit flips, truncations,
/// byte insertions and chunk duplication, drawn from a seeded SplitMix64 so every run tests the
/// same inputs. The parameters tune it to an input kind (JSON bytes, segments, XML).
public struct ByteMutator {
    private var random: SplitMix64
    /// Bytes that are likely to matter to the parser under test; half the inserted bytes are these.
    private let interesting: [UInt8]
    /// A truncation keeps at least half of the input (a cut near the start tests little).
    private let truncationKeepsHalf: Bool
    /// The longest chunk copied elsewhere in the input.
    private let maximumCopy: Int

    /// A mutator that starts at `seed`.
    public init(
        seed: UInt64, interesting: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x3A, 0x2C, 0x0A], truncationKeepsHalf: Bool = false,
        maximumCopy: Int = 64
    ) {
        random = SplitMix64(seed: seed)
        self.interesting = interesting
        self.truncationKeepsHalf = truncationKeepsHalf
        self.maximumCopy = maximumCopy
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { random.next() }

    /// A random index below `count` (0 when `count` is 0).
    public mutating func index(_ count: Int) -> Int { Int(next() % UInt64(max(count, 1))) }

    /// One to four mutations of `input`, and what they were.
    public mutating func mutate(_ input: [UInt8]) -> (bytes: [UInt8], how: String) {
        var bytes = input
        var how: [String] = []
        for _ in 0...index(3) {
            switch index(4) {
            case 0 where !bytes.isEmpty:
                let bit = index(bytes.count * 8)
                bytes[bit / 8] ^= 1 << UInt8(bit % 8)
                how.append("bit \(bit) flipped")
            case 1 where !bytes.isEmpty:
                let keep = truncationKeepsHalf ? bytes.count / 2 + index(bytes.count / 2 + 1) : index(bytes.count)
                bytes.removeLast(bytes.count - keep)
                how.append("cut to \(keep)")
            case 2:
                let at = index(bytes.count + 1)
                let inserted = (0...index(4)).map { _ in index(2) == 0 ? interesting[index(interesting.count)] : UInt8(truncatingIfNeeded: next()) }
                bytes.insert(contentsOf: inserted, at: at)
                how.append("\(inserted.count) bytes inserted at \(at)")
            default:
                guard !bytes.isEmpty else { continue }
                let start = index(bytes.count)
                let length = 1 + index(min(maximumCopy, bytes.count - start))
                let at = index(bytes.count + 1)
                bytes.insert(contentsOf: bytes[start..<(start + length)], at: at)
                how.append("bytes \(start)..<\(start + length) copied to \(at)")
            }
        }
        return (bytes, how.joined(separator: ", "))
    }
}
