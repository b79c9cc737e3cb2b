/// The tools navlog imports recordings from.
public enum ImportSource: String, Sendable, CaseIterable {
    /// sentry-cocoa's breadcrumbs in Sentry event JSON.
    case sentry
    /// Datadog RUM view events (dd-sdk-ios).
    case datadog
    /// Firebase Analytics events as exported to BigQuery.
    case firebase
}
