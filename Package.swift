// swift-tools-version:6.1
//
// navlog: an event-sourced navigation recorder and replayer for UIKit-style apps.
//
// The module graph is one-way, bottom to top:
//
//   CZstd ─► NavlogZstd ─┐
//   NavlogEvents ────────┼─► NavlogStore ─► navlog (executable)
//   NavlogWorkload (synthetic sessions for tests, benchmarks and the demo)
//   NavlogTesting (helpers that run the built binaries in tests)
import PackageDescription

let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "navlog",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "navlog", targets: ["navlog"]),
        .library(name: "NavlogEvents", targets: ["NavlogEvents"]),
        .library(name: "NavlogStore", targets: ["NavlogStore"]),
        .library(name: "NavlogWorkload", targets: ["NavlogWorkload"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // libzstd from the system (Debian: libzstd-dev).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // A small Swift wrapper over libzstd: reusable contexts, errors as Swift errors.
        .target(
            name: "NavlogZstd",
            dependencies: ["CZstd"],
            swiftSettings: upcomingFeatures
        ),
        // The event vocabulary of events.md and its JSON Lines codec. No I/O.
        .target(
            name: "NavlogEvents",
            swiftSettings: upcomingFeatures
        ),
        // The segmented, zstd-compressed, append-only log: blocks, segments, indexes, recovery.
        .target(
            name: "NavlogStore",
            dependencies: [
                "NavlogEvents",
                "NavlogZstd",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Deterministic, UIKit-like synthetic sessions as JSON Lines.
        .target(
            name: "NavlogWorkload",
            swiftSettings: upcomingFeatures
        ),
        // Test support: temporary directories and running the built executables.
        .target(
            name: "NavlogTesting",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "navlog",
            dependencies: [
                "NavlogEvents",
                "NavlogStore",
                "NavlogWorkload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The benchmark driver behind tools/bench (run it in release: tools/bench/run).
        .executableTarget(
            name: "navlog-bench",
            dependencies: ["NavlogEvents", "NavlogStore", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogEventsTests",
            dependencies: ["NavlogEvents", "NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogStoreTests",
            dependencies: ["NavlogStore", "NavlogEvents", "NavlogZstd", "NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogWorkloadTests",
            dependencies: ["NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogCLITests",
            dependencies: ["NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
