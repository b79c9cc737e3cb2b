// Everything sessions share and never change: the vocabulary, the apps' pre-escaped names, the knobs.

import NavlogJSON

/// One app, ready to write: its name and releases as JSON string literals.
struct AppEntry: Sendable {
    /// `"Cookbook"`, quotes included.
    var name: [UInt8]
    /// Each release's version and build, quotes included.
    var releases: [(version: [UInt8], build: [UInt8])]
    /// Its screens.
    var catalog: Catalog
}

/// The immutable tables one generator's sessions read.
final class WorkloadTables: Sendable {
    let vocabulary: Vocabulary
    let apps: [AppEntry]
    let padFraction: Double
    let meanEvents: Double
    let meanThinkTime: Double
    /// Recording styles with their cumulative weights (summing to 1); one style: no draw at all.
    let recordingStyles: [(style: RecordingStyle, upTo: Double)]

    init(_ configuration: WorkloadConfiguration) {
        precondition(configuration.concurrentSessions >= 1, "concurrentSessions must be at least 1")
        precondition(configuration.meanEventsPerSession >= 1, "meanEventsPerSession must be at least 1")
        precondition(!configuration.apps.isEmpty, "apps must not be empty")
        precondition(configuration.apps.allSatisfy { !$0.releases.isEmpty }, "every app needs a release")
        precondition(configuration.startTime >= 0, "startTime must not be negative")
        let vocabulary = Vocabulary.shared
        self.vocabulary = vocabulary
        apps = configuration.apps.map { app in
            AppEntry(
                name: Self.literal(app.name),
                releases: app.releases.map { (Self.literal($0.version), Self.literal($0.build)) },
                catalog: vocabulary.catalog(app.catalog))
        }
        padFraction = min(1, max(0, configuration.padFraction))
        meanEvents = Double(configuration.meanEventsPerSession)
        meanThinkTime = Double(max(1_000, configuration.meanThinkTime))
        let mix = configuration.recordingMix.filter { $0.weight > 0 }
        precondition(!mix.isEmpty, "recordingMix needs a style with a positive weight")
        let total = mix.reduce(0) { $0 + $1.weight }
        var sum = 0.0
        recordingStyles = mix.map { entry in
            sum += entry.weight / total
            return (entry.style, sum)
        }
    }

    /// `text` as an escaped JSON string literal.
    static func literal(_ text: String) -> [UInt8] {
        var json = JSONWriter(controlEscapes: .shortForms)
        json.string(text)
        return json.bytes
    }
}
