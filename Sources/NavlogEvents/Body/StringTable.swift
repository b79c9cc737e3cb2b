/// A read-only view of a block's interned strings: reference `r` names the bytes between the
/// end of string `r - 1` and the end of string `r`.
///
/// - Important: a view over memory owned by someone else; use it only inside the closure that
///   provided it.
public struct StringTable {
    /// Concatenated string bytes.
    public let bytes: UnsafeRawBufferPointer
    /// End offset of each string in ``bytes``.
    public let ends: UnsafeBufferPointer<UInt32>

    /// Creates a view.
    @inlinable
    public init(bytes: UnsafeRawBufferPointer, ends: UnsafeBufferPointer<UInt32>) {
        self.bytes = bytes
        self.ends = ends
    }

    /// The number of strings.
    @inlinable public var count: Int { ends.count }

    /// The bytes of string `ref`, or `nil` when `ref` is out of range.
    @inlinable
    public subscript(ref: Int) -> UnsafeRawBufferPointer? {
        guard ref >= 0, ref < ends.count else { return nil }
        let start = ref == 0 ? 0 : Int(ends[ref - 1])
        let end = Int(ends[ref])
        guard start <= end, end <= bytes.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}
