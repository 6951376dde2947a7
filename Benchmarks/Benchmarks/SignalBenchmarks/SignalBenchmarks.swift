import Benchmark
import Workloads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Benchmark: MeasurementWindow {}

/// The suite's entry point, found by package-benchmark's plugin: one benchmark per workload and
/// implementation. Each run performs `operations` operations, given as the scaling factor, so every
/// figure the tool prints with a `*` is per operation. See `Benchmarks/README.md`.
/// Set by `Scripts/run.sh --ci`, which checks allocation counts only: a quarter of a second per
/// benchmark (tens of runs of 1,000 or 1,000,000 operations) gives their medians, and CI spends about a
/// minute less than with the windows that timings need.
let allocationsOnly = getenv("SSK_BENCHMARK_ALLOCATIONS_ONLY") != nil

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration.metrics = [.wallClock, .mallocCountTotal]
    Benchmark.defaultConfiguration.timeUnits = .nanoseconds
    for workload in allWorkloads {
        guard let operations = BenchmarkScalingFactor(rawValue: workload.operations) else {
            fatalError("\(workload.name): \(workload.operations) operations is not a scaling factor")
        }
        let configuration = Benchmark.Configuration(
            scalingFactor: operations,
            maxDuration: allocationsOnly ? .milliseconds(250) : .seconds(workload.maxSeconds)
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
