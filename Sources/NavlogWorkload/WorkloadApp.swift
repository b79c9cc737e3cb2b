/// One simulated app: its name as sent in `session.start`, its releases, and the kind of app it
/// is, which decides its screens, presentations, alerts and analytics marks.
public struct WorkloadApp: Sendable, Hashable {
    /// The screen vocabulary an app uses.
    public enum Catalog: Sendable, Hashable, CaseIterable {
        /// A recipe app: recipe lists and details, search, favorites, a profile.
        case recipes
        /// A shopping app: feed, categories, product pages, cart and checkout.
        case shopping
        /// A mail client: mailboxes, message lists, messages, compose.
        case mail
        /// A hiking and workout app: trails, maps, workouts, leaderboards.
        case fitness
    }

    /// One released version of the app.
    public struct Release: Sendable, Hashable {
        /// The marketing version, such as `4.12.1`.
        public var version: String
        /// The build number, such as `41201`.
        public var build: String

        /// A release.
        /// - Parameters:
        ///   - version: the marketing version.
        ///   - build: the build number.
        public init(version: String, build: String) {
            self.version = version
            self.build = build
        }

        /// A release, as the table of ``WorkloadApp/defaults`` writes it.
        init(_ version: String, _ build: String) {
            self.init(version: version, build: build)
        }
    }

    /// The app name sent as `app` in `session.start`.
    public var name: String
    /// The kind of app.
    public var catalog: Catalog
    /// Its releases, newest first (sessions favour the newest). Must not be empty.
    public var releases: [Release]

    /// An app.
    /// - Parameters:
    ///   - name: the name sent in `session.start`.
    ///   - catalog: the screen vocabulary.
    ///   - releases: the versions in use, newest first.
    public init(name: String, catalog: Catalog, releases: [Release]) {
        self.name = name
        self.catalog = catalog
        self.releases = releases
    }

    /// Four apps, one per catalog, each with three releases in use.
    public static let defaults: [WorkloadApp] = [
        WorkloadApp(name: "Cookbook", catalog: .recipes, releases: [.init("4.12.1", "41201"), .init("4.12.0", "41187"), .init("4.11.3", "41142")]),
        WorkloadApp(
            name: "ShopKart", catalog: .shopping, releases: [.init("7.3.0", "2025.11.18.1"), .init("7.2.2", "2025.11.04.3"), .init("7.1.0", "2025.10.09.1")]),
        WorkloadApp(name: "Mailroom", catalog: .mail, releases: [.init("2.8", "880"), .init("2.7.1", "871"), .init("2.7", "866")]),
        WorkloadApp(name: "Trailhead", catalog: .fitness, releases: [.init("1.19.0", "1904"), .init("1.18.2", "1877"), .init("1.18.0", "1850")]),
    ]
}
