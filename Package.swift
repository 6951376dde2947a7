// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "SwiftSignalKit",
    products: [
        .library(name: "SwiftSignalKit", targets: ["SwiftSignalKit"]),
        .executable(name: "SignalDemo", targets: ["SignalDemo"]),
    ],
    targets: [
        .target(name: "SwiftSignalKit"),
        .executableTarget(name: "SignalDemo", dependencies: ["SwiftSignalKit"]),
        .testTarget(name: "SwiftSignalKitTests", dependencies: ["SwiftSignalKit"]),
        // Telegram-style call sites, compiled in Swift 5 mode: proves that legacy code builds unchanged.
        .testTarget(
            name: "LegacyClientTests",
            dependencies: ["SwiftSignalKit"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
