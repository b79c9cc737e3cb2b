import Prometheus

/// What the intake did, in Prometheus's text format (`--metrics-listen`, loopback only):
/// requests by answer, events stored, resent and rejected, bytes as sent and decoded, relay
/// failures by cause, and how long answers took.
final class IntakeMetrics: Sendable {
    /// The registry `/metrics` renders.
    let registry = PrometheusCollectorRegistry()
    private let stored: Counter
    private let duplicates: Counter
    private let rejectedLines: Counter
    private let encodedBytes: Counter
    private let decodedBytes: Counter
    private let duration: DurationHistogram
    private let statuses: [Int: Counter]
    private let otherStatus: Counter
    private let relayFailures: [RelayFailure.Code: Counter]

    init() {
        stored = registry.makeCounter(name: "navlog_intake_events_stored_total", help: "Events navlogd stored durably for the intake.")
        duplicates = registry.makeCounter(name: "navlog_intake_events_duplicate_total", help: "Events navlogd already had (resends).")
        rejectedLines = registry.makeCounter(name: "navlog_intake_lines_rejected_total", help: "Lines rejected one by one in answers of 200.")
        encodedBytes = registry.makeCounter(name: "navlog_intake_body_bytes_total", labels: [("form", "sent")], help: "Request body bytes.")
        decodedBytes = registry.makeCounter(name: "navlog_intake_body_bytes_total", labels: [("form", "decoded")], help: "Request body bytes.")
        duration = registry.makeDurationHistogram(
            name: "navlog_intake_request_duration_seconds",
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
                .seconds(5),
            ],
            help: "Time from a POST's head to its answer.")
        var statuses: [Int: Counter] = [:]
        for status in [200, 400, 401, 403, 413, 415, 429, 503] {
            statuses[status] = registry.makeCounter(name: "navlog_intake_requests_total", labels: [("status", String(status))], help: "POST /v1/events by answer.")
        }
        self.statuses = statuses
        otherStatus = registry.makeCounter(name: "navlog_intake_requests_total", labels: [("status", "other")], help: "POST /v1/events by answer.")
        let causes: [(RelayFailure.Code, String)] = [(.unreachable, "unreachable"), (.notTrusted, "not-trusted"), (.storeRefused, "store"), (.connectionLost, "connection-lost")]
        var relayFailures: [RelayFailure.Code: Counter] = [:]
        for (code, cause) in causes {
            relayFailures[code] = registry.makeCounter(name: "navlog_intake_relay_failures_total", labels: [("cause", cause)], help: "Bodies navlogd did not take, by cause.")
        }
        self.relayFailures = relayFailures
    }

    /// Counts one answered POST.
    func answered(status: Int, duration elapsed: Duration) {
        (statuses[status] ?? otherStatus).increment()
        duration.record(elapsed)
    }

    /// Counts a body's bytes.
    func body(sent: Int, decoded: Int) {
        encodedBytes.increment(by: Int64(sent))
        decodedBytes.increment(by: Int64(decoded))
    }

    /// Counts what navlogd answered for a body.
    func relayed(_ outcome: RelayOutcome) {
        stored.increment(by: Int64(outcome.stored))
        duplicates.increment(by: Int64(outcome.duplicates))
        rejectedLines.increment(by: Int64(outcome.rejected.count))
    }

    /// Counts a body navlogd did not take.
    func failed(_ failure: RelayFailure) {
        relayFailures[failure.code]?.increment()
    }
}
