// swift-tools-version:6.1
//
// navlog: an event-sourced navigation recorder and replayer for UIKit-style apps.
//
// The module graph, one way, bottom to top: a target depends only on targets above it. Each
// target line names a target and, after ◄, the package's own targets it depends on, in layers
// (codec → store → replay → replay store → analytics and viewer → the programs at the edges).
// tools/package-graph.py --check (run by tools/test) fails when these lines and the targets
// below disagree; test and fuzz targets are left out.
//
//   C libraries
//     CZstd
//     CZlib
//     CNavlogCRC
//   JSON text: the one writer every module that writes JSON uses (no navigation in it)
//     NavlogJSON
//   The event contract and the log
//     NavlogZstd ◄ CZstd
//     NavlogEvents ◄ NavlogJSON
//     NavlogStore ◄ CNavlogCRC, NavlogEvents, NavlogZstd
//   Replay: the pure replayer, then its checkpoints and focus journals beside the log
//     NavlogReplay ◄ NavlogEvents, NavlogJSON
//     NavlogReplayStore ◄ NavlogEvents, NavlogReplay, NavlogStore, NavlogZstd
//   Synthetic input, storyboards and recordings of other tools (NavlogWorkload keeps its own model
//   of UIKit, the oracle the replayer is checked against: it never depends on NavlogReplay)
//     NavlogWorkload ◄ NavlogJSON
//     NavlogStoryboard
//     NavlogSimulation ◄ NavlogEvents, NavlogJSON, NavlogReplay, NavlogStore, NavlogStoryboard
//     NavlogImport ◄ NavlogEvents, NavlogJSON
//   Readers of the log: analytics and the web viewer
//     NavlogAnalytics ◄ CZlib, NavlogEvents, NavlogJSON, NavlogReplay, NavlogReplayStore, NavlogStore, NavlogStoryboard
//     NavlogServe ◄ NavlogAnalytics, NavlogEvents, NavlogJSON, NavlogReplay, NavlogReplayStore, NavlogStore, NavlogStoryboard
//   The roads in: the daemon, the client and the HTTPS intake
//     NavlogDaemon ◄ NavlogEvents, NavlogJSON, NavlogStore
//     NavlogClient
//     NavlogClientHTTP ◄ CZlib, NavlogClient
//     NavlogIntake ◄ CZlib, CZstd, NavlogEvents, NavlogJSON
//   Test support (runs the built binaries, each through navlog-test-launch, so that it dies with the test process)
//     NavlogTesting ◄ NavlogClient, NavlogEvents, NavlogImport, NavlogReplay, NavlogWorkload
//     navlog-test-launch
//   Programs (navlog runs navlog-send and navlog-intake for `navlog send` and `navlog intake`)
//     navlogd ◄ NavlogDaemon
//     navlog ◄ NavlogAnalytics, NavlogClient, NavlogEvents, NavlogImport, NavlogJSON, NavlogReplay, NavlogReplayStore, NavlogServe, NavlogSimulation, NavlogStore, NavlogStoryboard, NavlogWorkload
//     navlog-send ◄ NavlogClient, NavlogClientHTTP, NavlogEvents
//     navlog-intake ◄ NavlogIntake
//     navlog-bench ◄ NavlogClient, NavlogEvents, NavlogReplay, NavlogReplayStore, NavlogStore, NavlogTesting, NavlogWorkload
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
        .executable(name: "navlogd", targets: ["navlogd"]),
        .library(name: "NavlogClient", targets: ["NavlogClient", "NavlogClientHTTP"]),
        .library(name: "NavlogEvents", targets: ["NavlogEvents"]),
        .library(name: "NavlogStore", targets: ["NavlogStore"]),
        .library(name: "NavlogWorkload", targets: ["NavlogWorkload"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        // libzstd from the system (Debian: libzstd-dev).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // zlib from the system (Debian: zlib1g-dev), for gzip exports.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // CRC-32C with the CPU's instructions (SSE4.2, AArch64 CRC); Swift falls back to software.
        .target(name: "CNavlogCRC"),
        // A small Swift wrapper over libzstd: reusable contexts, errors as Swift errors.
        .target(
            name: "NavlogZstd",
            dependencies: ["CZstd"],
            swiftSettings: upcomingFeatures
        ),
        // JSON text written into bytes: the one writer (escaping, numbers) of events, replay
        // output, the viewer's API and generated, simulated and imported lines. No dependencies,
        // so that NavlogWorkload can use it and stay independent of navlog's navigation modules.
        .target(
            name: "NavlogJSON",
            swiftSettings: upcomingFeatures
        ),
        // The event contract of events.md, no I/O, in three folders: Vocabulary (event types,
        // fields, value shapes, rejections), Line (the JSON Lines form apps send: framing,
        // tokenizer, validating parser, and writing a stored event back as JSON) and Body (the
        // binary form the parser makes, the log stores and the replayer reads in place: tokens,
        // string tables, StringHash). The binary body belongs here, not in NavlogStore, because
        // the parser writes it and the pure replayer, which does no I/O and knows no log, reads it.
        .target(
            name: "NavlogEvents",
            dependencies: ["NavlogJSON"],
            swiftSettings: upcomingFeatures
        ),
        // The segmented, zstd-compressed, append-only log: blocks, segments, indexes, recovery.
        .target(
            name: "NavlogStore",
            dependencies: [
                "CNavlogCRC",
                "NavlogEvents",
                "NavlogZstd",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The daemon: the Unix-socket server, the group-committing log writer, dedupe,
        // access control, rate limits, systemd integration.
        .target(
            name: "NavlogDaemon",
            dependencies: [
                "NavlogEvents",
                "NavlogJSON",
                "NavlogStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "navlogd",
            dependencies: [
                "NavlogDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The client apps and tools use to send events to navlogd (Linux and Apple platforms),
        // over its Unix socket.
        .target(
            name: "NavlogClient",
            swiftSettings: upcomingFeatures
        ),
        // NavlogClient's HTTP(S) transport to navlog intake (URLSession, a queue directory, gzip
        // by zlib): a module of its own, so that programs using only the socket do not load
        // FoundationNetworking (libcurl and about thirty more shared libraries on Linux).
        .target(
            name: "NavlogClientHTTP",
            dependencies: ["NavlogClient", "CZlib"],
            swiftSettings: upcomingFeatures
        ),
        // The replayer: UIKit's navigation rules applied to a session's events (pure, no I/O).
        .target(
            name: "NavlogReplay",
            dependencies: ["NavlogEvents", "NavlogJSON"],
            swiftSettings: upcomingFeatures
        ),
        // Replay checkpoints beside the log (derived, rebuilt when missing) and seeking a
        // session to any point: the I/O side of NavlogReplay.
        .target(
            name: "NavlogReplayStore",
            dependencies: ["NavlogEvents", "NavlogStore", "NavlogReplay", "NavlogZstd"],
            swiftSettings: upcomingFeatures
        ),
        // Storyboards as navigation graphs: scenes, segues, references (XML via FoundationXML).
        .target(
            name: "NavlogStoryboard",
            swiftSettings: upcomingFeatures
        ),
        // Sessions simulated from storyboards, driven by the replay engine's own state; random
        // numbers from a generator the caller chooses (navlog passes NavlogWorkload's SplitMix64).
        .target(
            name: "NavlogSimulation",
            dependencies: ["NavlogEvents", "NavlogJSON", "NavlogReplay", "NavlogStore", "NavlogStoryboard"],
            swiftSettings: upcomingFeatures
        ),
        // Analytics: derived tables (screen visits, transitions, sessions, anomalies, exits)
        // from one replay of the log, the reports over them, and storyboard coverage (which
        // scenes and segues the recorded sessions used).
        .target(
            name: "NavlogAnalytics",
            dependencies: [
                "CZlib", "NavlogEvents", "NavlogJSON", "NavlogStore", "NavlogReplay", "NavlogReplayStore", "NavlogStoryboard", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // navlog serve: the read-only web viewer (HTTP with Hummingbird, pages shipped as resources).
        .target(
            name: "NavlogServe",
            dependencies: [
                "NavlogAnalytics",
                "NavlogEvents",
                "NavlogJSON",
                "NavlogReplay",
                "NavlogReplayStore",
                "NavlogStore",
                "NavlogStoryboard",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Web")],
            swiftSettings: upcomingFeatures
        ),
        // navlog intake: the authenticated HTTP(S) road from devices into navlogd (Hummingbird 2,
        // TLS through swift-nio-ssl); relays each body over navlogd's socket and answers once
        // navlogd has acknowledged it durably.
        .target(
            name: "NavlogIntake",
            dependencies: [
                "CZlib",
                "CZstd",
                "NavlogEvents",
                "NavlogJSON",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // Recordings of other tools (Sentry breadcrumbs, Datadog RUM views, Firebase's BigQuery
        // export) converted into navlog event lines: `navlog import`. No I/O.
        .target(
            name: "NavlogImport",
            dependencies: ["NavlogEvents", "NavlogJSON"],
            swiftSettings: upcomingFeatures
        ),
        // Deterministic, UIKit-like synthetic sessions as JSON Lines. Its model of UIKit is its own,
        // deliberately independent of the replayer: the oracle the replayer is checked against
        // (WorkloadModelAgreementTests). It must never depend on NavlogReplay; only the JSON writer.
        .target(
            name: "NavlogWorkload",
            dependencies: ["NavlogJSON"],
            swiftSettings: upcomingFeatures
        ),
        // Test support: temporary directories, the shared input (../shared), and running the
        // built executables (through navlog-test-launch: they die with the test process).
        .target(
            name: "NavlogTesting",
            dependencies: ["NavlogClient", "NavlogEvents", "NavlogImport", "NavlogWorkload", "NavlogReplay"],
            swiftSettings: upcomingFeatures
        ),
        // Put by the test harnesses (NavlogTesting, Tests/support) in front of every program a
        // test starts: it asks Linux to SIGKILL it when the test process dies (PR_SET_PDEATHSIG),
        // then executes the program in its place. A program of its own because that must run in
        // the child, where Foundation's Process runs no code of ours; C because it needs no more.
        .executableTarget(name: "navlog-test-launch"),
        .executableTarget(
            name: "navlog",
            dependencies: [
                "NavlogAnalytics",
                "NavlogClient",
                "NavlogEvents",
                "NavlogImport",
                "NavlogJSON",
                "NavlogReplay",
                "NavlogReplayStore",
                "NavlogServe",
                "NavlogSimulation",
                "NavlogStore",
                "NavlogStoryboard",
                "NavlogWorkload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // navlog intake's program: `navlog intake` runs it, so that navlog's other commands do not
        // load the HTTP server and TLS libraries (a process starts 5-8 ms sooner without them).
        .executableTarget(
            name: "navlog-intake",
            dependencies: [
                "NavlogIntake",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // navlog send's program: `navlog send` runs it, so that navlog's other commands do not
        // load FoundationNetworking for the HTTP transport.
        .executableTarget(
            name: "navlog-send",
            dependencies: [
                "NavlogClient",
                "NavlogClientHTTP",
                "NavlogEvents",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // The benchmark driver behind tools/bench (run it in release: tools/bench/run).
        .executableTarget(
            name: "navlog-bench",
            dependencies: [
                "NavlogClient",
                "NavlogEvents",
                "NavlogReplay",
                "NavlogReplayStore",
                "NavlogStore",
                "NavlogTesting",
                "NavlogWorkload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // libFuzzer targets (tools/fuzz builds them with --sanitize=fuzzer; a plain build links
        // them as programs that do nothing). One file each: no top-level code, no globals. Each
        // defines its own entry points, `LLVMFuzzerTestOneInput` (and `LLVMFuzzerInitialize` where
        // it writes seeds), which libFuzzer's main finds by their C names in each program: those
        // few lines have the same shape in every target by necessity. A check that several
        // targets make lives in a package target (NavlogTesting's ImportFuzzCheck for the imports).
        .executableTarget(
            name: "NavlogFuzzEventLine",
            dependencies: ["NavlogEvents", "NavlogStore"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzSegment",
            dependencies: ["NavlogEvents", "NavlogReplay", "NavlogStore", "NavlogWorkload", "NavlogZstd"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzCheckpoint",
            dependencies: ["NavlogEvents", "NavlogReplay", "NavlogStore", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzStoryboard",
            dependencies: ["NavlogStoryboard"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzImportSentry",
            dependencies: ["NavlogImport", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzImportDatadog",
            dependencies: ["NavlogImport", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "NavlogFuzzImportFirebase",
            dependencies: ["NavlogImport", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogImportTests",
            dependencies: ["NavlogImport", "NavlogEvents", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogJSONTests",
            dependencies: ["NavlogJSON"],
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
            name: "NavlogReplayTests",
            dependencies: ["NavlogReplay", "NavlogReplayStore", "NavlogEvents", "NavlogStore", "NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogStoryboardTests",
            dependencies: ["NavlogStoryboard", "NavlogTesting"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogSimulationTests",
            dependencies: ["NavlogSimulation", "NavlogStoryboard", "NavlogReplay", "NavlogStore", "NavlogEvents", "NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogAnalyticsTests",
            dependencies: ["NavlogAnalytics", "NavlogReplay", "NavlogReplayStore", "NavlogStore", "NavlogEvents", "NavlogTesting", "NavlogWorkload"],
            swiftSettings: upcomingFeatures
        ),
        // ConnectionHandler runs in process on NIOEmbedded's EmbeddedChannel.
        .testTarget(
            name: "NavlogDaemonTests",
            dependencies: [
                "NavlogDaemon",
                "NavlogEvents",
                "NavlogStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogIntakeTests",
            dependencies: [
                "NavlogIntake",
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingFeatures
        ),
        // navlog serve's routes in process (HummingbirdTesting) over a small log written by the
        // test; Tests/browser drives the same pages in Chromium.
        .testTarget(
            name: "NavlogServeTests",
            dependencies: [
                "NavlogServe",
                "NavlogEvents",
                "NavlogStore",
                "NavlogTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogWorkloadTests",
            dependencies: ["NavlogWorkload", "NavlogReplay", "NavlogStore", "NavlogEvents"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "NavlogCLITests",
            dependencies: [
                "NavlogTesting", "NavlogWorkload", "NavlogClient", "NavlogClientHTTP", "NavlogStore", "NavlogEvents", .target(name: "navlogd"), .target(name: "navlog"),
                .target(name: "navlog-intake"), .target(name: "navlog-send"),
            ],
            swiftSettings: upcomingFeatures
        ),
    ],
    swiftLanguageModes: [.v6]
)
