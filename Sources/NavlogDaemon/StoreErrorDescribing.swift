public import NavlogStore

/// Errors navlogd can explain to an operator in one sentence.
public protocol StoreErrorDescribing: Error {
    /// What happened and what to do.
    var describedForOperators: String { get }
}

extension StoreError: StoreErrorDescribing {
    public var describedForOperators: String { message }
}
