// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "SwiftSignalKit",
    // The concurrency bridges' async sequences have typed failures (`AsyncIteratorProtocol.Failure`,
    // `next(isolation:)`), whose runtime support ships with these releases.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    // The three libraries only: the demo is an executable target, which `swift run SignalDemo` runs in
    // this package, and which packages that depend on this one have no use for.
    products: [
        .library(name: "SwiftSignalKit", targets: ["SwiftSignalKit"]),
        .library(name: "SwiftSignalKitConcurrency", targets: ["SwiftSignalKitConcurrency"]),
        .library(name: "SwiftSignalKitTesting", targets: ["SwiftSignalKitTesting"]),
    ],
    targets: [
        // The lock's ThreadSanitizer annotations, in C because only C can ask the compiler whether this
        // build is instrumented (Sources/SwiftSignalKit/Internal/Lock.swift says why it must). Not a product.
        .target(name: "CSwiftSignalKitLockTracing"),
        .target(name: "SwiftSignalKit", dependencies: ["CSwiftSignalKitLockTracing"]),
        .target(name: "SwiftSignalKitConcurrency", dependencies: ["SwiftSignalKit"]),
        // Virtual time for tests of timing code: no dependency beyond the core, no test framework.
        .target(name: "SwiftSignalKitTesting", dependencies: ["SwiftSignalKit"]),
        .executableTarget(name: "SignalDemo", dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]),
        .testTarget(name: "SwiftSignalKitTests", dependencies: ["SwiftSignalKit", "SwiftSignalKitTesting"]),
        .testTarget(name: "SwiftSignalKitTestingTests", dependencies: ["SwiftSignalKit", "SwiftSignalKitTesting"]),
        .testTarget(
            name: "SwiftSignalKitConcurrencyTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting"]
        ),
        // Typical async server code in Swift 6 mode with complete checking: no @preconcurrency import.
        .testTarget(
            name: "Swift6ClientTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]
        ),
        // A client module as Swift 6.2 creates new targets (approachable concurrency): the main actor by
        // default, nonisolated async functions on their caller's actor, isolated conformances inferred.
        .testTarget(
            name: "ApproachableClientTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting"],
            swiftSettings: [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
                .enableUpcomingFeature("InferIsolatedConformances"),
            ]
        ),
        // The library used the way its users use it: threads, locks, cancellation under load. Run under
        // ThreadSanitizer and in release mode by `.ci/run`.
        .testTarget(
            name: "RealUseTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]
        ),
        // Telegram-style call sites, compiled in Swift 5 mode: proves that legacy code builds unchanged.
        .testTarget(
            name: "LegacyClientTests",
            dependencies: ["SwiftSignalKit"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),

        // The migration guide (Migration/README.md and its DocC articles): a profile service moved from signals to async/await in three stages, each a
        // module with tests, and the guide's recipes and pitfalls, run by `swift test`. Not products.
        .target(name: "ProfileDirectory", dependencies: ["SwiftSignalKit"], path: "Migration/Examples/Sources/ProfileDirectory"),
        .target(
            name: "ProfilesLegacy",
            dependencies: ["SwiftSignalKit", "ProfileDirectory"],
            path: "Migration/Examples/Sources/ProfilesLegacy"
        ),
        .target(
            name: "ProfilesBridged",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "ProfileDirectory"],
            path: "Migration/Examples/Sources/ProfilesBridged"
        ),
        .target(
            name: "ProfilesAsyncFirst",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "ProfileDirectory"],
            path: "Migration/Examples/Sources/ProfilesAsyncFirst"
        ),
        .testTarget(
            name: "ProfilesLegacyTests",
            dependencies: ["SwiftSignalKit", "ProfileDirectory", "ProfilesLegacy"],
            path: "Migration/Examples/Tests/ProfilesLegacyTests"
        ),
        // Each later stage runs the legacy tests unchanged (a link to the same file), plus its own.
        .testTarget(
            name: "ProfilesBridgedTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "ProfileDirectory", "ProfilesBridged"],
            path: "Migration/Examples/Tests/ProfilesBridgedTests",
            swiftSettings: [.define("MIGRATION_STAGE_BRIDGED")]
        ),
        .testTarget(
            name: "ProfilesAsyncFirstTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "ProfileDirectory", "ProfilesAsyncFirst"],
            path: "Migration/Examples/Tests/ProfilesAsyncFirstTests",
            swiftSettings: [.define("MIGRATION_STAGE_ASYNC_FIRST")]
        ),
        // The guide's mixed language modes: a Swift 5-mode legacy module, Swift 6 code over it, a Swift 6
        // test target (main-actor callbacks) and a Swift 5-mode test target calling the Swift 6 code.
        .target(
            name: "LegacyQuotes",
            dependencies: ["SwiftSignalKit"],
            path: "Migration/Examples/Sources/LegacyQuotes",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .target(
            name: "QuoteDesk",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "LegacyQuotes"],
            path: "Migration/Examples/Sources/QuoteDesk"
        ),
        .testTarget(
            name: "MixedModeTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "LegacyQuotes", "QuoteDesk"],
            path: "Migration/Examples/Tests/MixedModeTests"
        ),
        .testTarget(
            name: "LegacyCallerTests",
            dependencies: ["SwiftSignalKit", "LegacyQuotes", "QuoteDesk"],
            path: "Migration/Examples/Tests/LegacyCallerTests",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "MigrationGuideTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency", "SwiftSignalKitTesting"],
            path: "Migration/Examples/Tests/MigrationGuideTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
