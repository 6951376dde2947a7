// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "SwiftSignalKit",
    products: [
        .library(name: "SwiftSignalKit", targets: ["SwiftSignalKit"]),
        .library(name: "SwiftSignalKitConcurrency", targets: ["SwiftSignalKitConcurrency"]),
        .executable(name: "SignalDemo", targets: ["SignalDemo"]),
    ],
    targets: [
        .target(name: "SwiftSignalKit"),
        .target(name: "SwiftSignalKitConcurrency", dependencies: ["SwiftSignalKit"]),
        .executableTarget(name: "SignalDemo", dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]),
        .testTarget(name: "SwiftSignalKitTests", dependencies: ["SwiftSignalKit"]),
        .testTarget(
            name: "SwiftSignalKitConcurrencyTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]
        ),
        // Typical async server code in Swift 6 mode with complete checking: no @preconcurrency import.
        .testTarget(
            name: "Swift6ClientTests",
            dependencies: ["SwiftSignalKit", "SwiftSignalKitConcurrency"]
        ),
        // Telegram-style call sites, compiled in Swift 5 mode: proves that legacy code builds unchanged.
        .testTarget(
            name: "LegacyClientTests",
            dependencies: ["SwiftSignalKit"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
