// swift-tools-version: 6.1
// The benchmark suite is its own package so that the library keeps zero
// dependencies. Run it from this directory with `swift package benchmark`.
import PackageDescription

// A path dependency is identified by its folder's name, and a clone may live
// in a folder of any name, so the identity is read off the parent folder.
let library = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main")

// CI (`.ci/run`, `.ci/quick`) builds the profile, look-up, scaling, memory and soak executables, none
// of which uses package-benchmark. With SSK_BENCHMARKS_WITHOUT_PACKAGE_BENCHMARK set, as CI sets it, the
// package leaves package-benchmark and its suite out, so that SwiftPM neither resolves it nor builds
// its plugin's tools for every build (about 30 s of a CI run). `Scripts/run.sh` needs it unset.
let withPackageBenchmark = Context.environment["SSK_BENCHMARKS_WITHOUT_PACKAGE_BENCHMARK"] == nil

/// The suite that `swift package benchmark` runs: every workload and implementation, timed.
let packageBenchmarkSuite: [Target] = [
    .executableTarget(
        name: "SignalBenchmarks",
        dependencies: [
            "Workloads",
            .product(name: "Benchmark", package: "benchmark"),
        ],
        path: "Benchmarks/SignalBenchmarks",
        swiftSettings: [.swiftLanguageMode(.v6)],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
]

let package = Package(
    name: "SwiftSignalKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
    ]
        + (withPackageBenchmark
            ? [.package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"])]
            : []),
    targets: (withPackageBenchmark ? packageBenchmarkSuite : []) + [
        // The hand-written baselines' lock, shared by the workloads' limit and the scaling suite.
        .target(name: "BaselineMutex", path: "Sources/BaselineMutex", swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "Workloads",
            dependencies: [
                "BaselineMutex",
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(name: "MemoryShims", path: "Sources/MemoryShims"),
        .target(
            name: "MemoryMeasurement",
            dependencies: ["MemoryShims"],
            path: "Sources/MemoryMeasurement",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "memory",
            dependencies: [
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
                .product(name: "OpenCombine", package: "OpenCombine"),
                "MemoryMeasurement",
            ],
            path: "Sources/Memory",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "soak",
            dependencies: [
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
                "MemoryMeasurement",
            ],
            path: "Sources/Soak",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Throughput at 1, 2, 4, ... threads against a hand-written baseline: `swift run -c release scaling`.
        .executableTarget(
            name: "scaling",
            dependencies: [
                "BaselineMutex",
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
            ],
            path: "Sources/Scaling",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Runtime type look-ups per value, operator by operator: `bash Scripts/lookups.sh`.
        .executableTarget(
            name: "lookups",
            dependencies: [
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
            ],
            path: "Sources/Lookups",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // One async producer, one fast or slow `for await` consumer, against the channel and AsyncStream:
        // `python3 Scripts/flow-control.py`.
        .executableTarget(
            name: "flow-control",
            dependencies: [
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            path: "Sources/FlowControl",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The virtual timeline's negative control: the same scenarios on real queues give different event
        // logs between runs: `swift run -c release --package-path Benchmarks timeline-control`.
        .executableTarget(
            name: "timeline-control",
            dependencies: [
                .product(name: "SwiftSignalKit", package: library),
                .product(name: "SwiftSignalKitConcurrency", package: library),
                .product(name: "SwiftSignalKitTesting", package: library),
            ],
            path: "Sources/TimelineControl",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "profile",
            dependencies: ["Workloads"],
            path: "Sources/Profile",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
