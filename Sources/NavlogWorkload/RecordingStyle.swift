/// What a session's app records (what real SDKs hook; ../shared/workload.md).
public enum RecordingStyle: String, Sendable, Hashable, CaseIterable {
    /// Everything: will and did appearance, transitions, containment, intents with `cause`.
    case full
    /// `viewDidAppear`/`viewDidDisappear` only, no `will`, no transitions, no `cause`
    /// (Datadog RUM's view tracking, many hand-written trackers).
    case didOnly
    /// Will and did appearance, no transition events, no `cause` (Sentry's UIViewController tracking).
    case willAndDid
    /// Navigation calls only (push, pop, present, dismiss, tabs, segues): no appearance, no
    /// transitions, no `cause` (a hand-instrumented app).
    case navigationOnly
}
