// swift-tools-version:6.2
// A Hummingbird 2 server whose domain layer is signal code and whose handlers are async code: how a
// server adopts SwiftSignalKit's async bridges gradually. A package of its own, so the library keeps
// zero dependencies.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "SignalServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "SignalServer", targets: ["SignalServer"]),
        .executable(name: "StreamLoad", targets: ["StreamLoad"]),
    ],
    dependencies: [
        .package(name: "SwiftSignalKit", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        // The legacy layer: signals, promises, pipes and queues, no web framework, no async.
        .target(
            name: "MarketDomain",
            dependencies: [.product(name: "SwiftSignalKit", package: "SwiftSignalKit")],
            swiftSettings: swiftSettings
        ),
        // The new layer: async route handlers that reach the domain through the bridges.
        .target(
            name: "SignalServerApp",
            dependencies: [
                "MarketDomain",
                .product(name: "SwiftSignalKit", package: "SwiftSignalKit"),
                .product(name: "SwiftSignalKitConcurrency", package: "SwiftSignalKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SignalServer",
            dependencies: [
                "SignalServerApp",
                "MarketDomain",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The load test's streaming client (Examples/LoadTest/run.sh and cluster.sh). Here rather than in a
        // package of its own, so that AsyncHTTPClient and NIO, which the tests use too, are built once.
        .executableTarget(
            name: "StreamLoad",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalServerTests",
            dependencies: [
                "SignalServerApp",
                "MarketDomain",
                .product(name: "SwiftSignalKit", package: "SwiftSignalKit"),
                .product(name: "SwiftSignalKitConcurrency", package: "SwiftSignalKit"),
                .product(name: "SwiftSignalKitTesting", package: "SwiftSignalKit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
