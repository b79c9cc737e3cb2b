/// A recording style and its weight in a ``WorkloadConfiguration/recordingMix``.
public struct RecordingShare: Sendable, Hashable {
    /// The style.
    public var style: RecordingStyle
    /// Its weight (the weights of a mix need not sum to 1).
    public var weight: Double

    /// A share.
    public init(_ style: RecordingStyle, _ weight: Double) {
        self.style = style
        self.weight = weight
    }
}
