import Benchmark
import Workloads

extension Benchmark: MeasurementWindow {}

/// The suite's entry point, found by package-benchmark's plugin: one benchmark per workload and
/// implementation. Each run performs `operations` operations, given as the scaling factor, so every
/// figure the tool prints with a `*` is per operation. See `Benchmarks/README.md`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.metrics = [.wallClock, .mallocCountTotal]
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    for workload in allWorkloads {
        guard let operations = BenchmarkScalingFactor(rawValue: workload.operations) else {
            fatalError("\(workload.name): \(workload.operations) operations is not a scaling factor")
        }
        let configuration = Benchmark.Configuration(
            scalingFactor: operations,
            maxDuration: .seconds(workload.maxSeconds)
        )
        for (variant, body) in workload.variants {
            switch body {
            case .sync(let run):
                Benchmark(workload.name(of: variant), configuration: configuration) { benchmark in
                    run(benchmark)
                }
            case .async(let run):
                Benchmark(workload.name(of: variant), configuration: configuration) { benchmark async in
                    await run(benchmark)
                }
            }
        }
    }
}
