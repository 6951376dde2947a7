// The scaling suite: throughput of the library and of a hand-written baseline (one pthread mutex per
// stage) in one binary, at 1, 2, 4, ... threads up to the cores present. See Benchmarks/README.md,
// "Threads".
//
//   swift run -c release --package-path Benchmarks scaling            # every scenario, a table each
//   swift run -c release --package-path Benchmarks scaling --ci       # two threads, independent pipelines
//                                                                     # (plain and stateful): fails below
//                                                                     # 0.7x the hand-written
// Options: --threads 1,2,4   --operations N (per thread, default 2,000,000)   --tries K (best of K, default 5)
//          --scenario TEXT (only scenarios whose name contains it)

import Foundation

let arguments = CommandLine.arguments.dropFirst()
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), arguments.index(after: index) < arguments.endIndex else { return nil }
    return arguments[arguments.index(after: index)]
}

let cores = ProcessInfo.processInfo.activeProcessorCount
let ci = arguments.contains("--ci")
var threadCounts = Array(sequence(first: 1, next: { $0 * 2 < cores ? $0 * 2 : nil })) + [cores]
threadCounts = Array(Set(threadCounts)).sorted()
if let list = option("--threads") { threadCounts = list.split(separator: ",").compactMap { Int($0) } }
if ci { threadCounts = [1, 2] }
let operations = Int(option("--operations") ?? "") ?? (ci ? 1_000_000 : 2_000_000)
let tries = Int(option("--tries") ?? "") ?? 5
let nameFilter = option("--scenario")
precondition(operations >= 64 && tries >= 1 && threadCounts.allSatisfy { $0 >= 1 }, "scaling: nonsense options")

/// The best of `tries` runs, in operations per second.
func best(_ scenario: Scenario, _ form: Form, threads: Int) -> Double {
    (0..<tries).map { _ in measure(scenario.prepare(form, threads, operations), threads: threads) }.max()!
}

func millions(_ rate: Double) -> String { String(format: "%.1f", rate / 1e6) }
func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

print("Scaling on \(cores) cores, \(operations) operations per thread, best of \(tries)\n")
var failure: String?
/// The scenarios the CI form runs and checks: independent pipelines built on their own threads.
let checkedScenarios: Set<String> = ["independent pipelines", "independent stateful pipelines"]
/// Whether to run `scenario`: in the CI form only the checked ones.
func selected(_ scenario: String) -> Bool {
    if ci { return checkedScenarios.contains(scenario) }
    return nameFilter.map { scenario.contains($0) } ?? true
}

for scenario in scenarios where selected(scenario.name) {
    print("### \(scenario.name) (millions of \(scenario.unit) per second)\n")
    print("| threads | library | hand-written | library ÷ hand-written | library efficiency | hand-written efficiency |")
    print("|---:|---:|---:|---:|---:|---:|")
    var single: [Form: Double] = [:]
    for threads in threadCounts {
        let library = best(scenario, .library, threads: threads)
        let hand = best(scenario, .handWritten, threads: threads)
        if threads == threadCounts.first {
            single = [.library: library / Double(threads), .handWritten: hand / Double(threads)]
        }
        let efficiency = { (form: Form, rate: Double) in ratio(rate / (Double(threads) * single[form]!)) }
        print(
            "| \(threads) | \(millions(library)) | \(millions(hand)) | \(ratio(library / hand)) | \(efficiency(.library, library)) | \(efficiency(.handWritten, hand)) |"
        )
        if ci && threads == 2 && library < 0.7 * hand {
            failure =
                "\(scenario.name) at two threads: the library reached \(ratio(library / hand)) of the hand-written version, below 0.70×"
        }
    }
    print("")
}

if selected("async fan-out") {
    print("### async fan-out: one producer thread, N `for await` consumers (millions of deliveries per second)\n")
    print("| consumers | `pipe.signal().values` | `AsyncStream` per consumer, hand-written broadcaster | library ÷ hand-written |")
    print("|---:|---:|---:|---:|")
    for consumers in [1, 16, 256, 1_024] {
        let values = max(1_000, operations / consumers)
        var library = 0.0
        var hand = 0.0
        for _ in 0..<tries {
            library = max(library, await asyncFanOut(.library, consumers: consumers, values: values))
            hand = max(hand, await asyncFanOut(.handWritten, consumers: consumers, values: values))
        }
        print("| \(consumers) | \(millions(library)) | \(millions(hand)) | \(ratio(library / hand)) |")
    }
    print("")
}

if let failure {
    print("FAILED: \(failure)")
    exit(1)
}
