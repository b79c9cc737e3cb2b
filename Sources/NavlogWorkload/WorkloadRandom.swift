// Small, fast, portable pseudo-random numbers: the same seed gives the same stream on every
// platform, because nothing here calls the C library (not even `log`).

/// SplitMix64: expands one 64-bit seed into well-mixed words (used to seed ``Xoshiro256StarStar``
/// and to derive one independent seed per session). Also a reproducible
/// `RandomNumberGenerator` for tests and tools (damage at seeded random offsets, say).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The running state.
    var state: UInt64

    /// A generator that starts at `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Mixes two words into one seed (a stateless SplitMix64 step).
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: a ^ (b &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}

/// xoshiro256** (Blackman and Vigna): the generator every session draws from.
struct Xoshiro256StarStar {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator seeded through SplitMix64 (never all zero).
    init(seed: UInt64) {
        var seeder = SplitMix64(seed: seed)
        s0 = seeder.next()
        s1 = seeder.next()
        s2 = seeder.next()
        s3 = seeder.next()
    }

    @inline(__always)
    private static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 &- k)) }

    /// The next 64 random bits.
    @inline(__always)
    mutating func next() -> UInt64 {
        let result = Self.rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = Self.rotl(s3, 45)
        return result
    }

    /// A uniform integer in `0..<n` (`n` > 0); Lemire's multiply-shift, bias below 2⁻⁵⁰ for our sizes.
    @inline(__always)
    mutating func below(_ n: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(n).multipliedFullWidth(by: next()).high)
    }

    /// A uniform integer in `lower...upper`.
    @inline(__always)
    mutating func between(_ lower: Int, _ upper: Int) -> Int {
        lower + below(upper - lower + 1)
    }

    /// A uniform double in `[0, 1)`.
    @inline(__always)
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// True with probability `p`.
    @inline(__always)
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// An exponentially distributed double with the given mean.
    mutating func exponential(mean: Double) -> Double {
        -mean * naturalLog(1.0 - unit())
    }

    /// One element of a non-empty array, uniformly.
    @inline(__always)
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// ln(x) for finite x > 0, in plain arithmetic so every platform gets the same bits
/// (ln m = 2·atanh((m−1)/(m+1)) on the significand, plus the exponent times ln 2).
func naturalLog(_ x: Double) -> Double {
    let exponent = Double(x.exponent)
    let m = x.significand
    let z = (m - 1) / (m + 1)
    let z2 = z * z
    var term = z
    var sum = z
    var k = 3.0
    while k < 40 {
        term *= z2
        sum += term / k
        k += 2
    }
    return 2 * sum + exponent * 0.693_147_180_559_945_3
}
