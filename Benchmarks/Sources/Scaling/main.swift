// The scaling suite: throughput of the library and of two hand-written baselines (the tight floor, an
// atomic flag per stage, and closable stages, a mutex per stage) in one binary, at 1, 2, 4, ... threads up to the cores
// present. See Benchmarks/README.md, "Threads".
//
//   swift run -c release --package-path Benchmarks scaling            # every scenario, a table each
//   swift run -c release --package-path Benchmarks scaling --ci       # two threads, the checked scenarios:
//                                                                     # fails below each one's minimum
//                                                                     # ratio and efficiency (`Check`);
//                                                                     # one shared lock: eight threads
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
/// In the CI form, a contended scenario runs a fifth of the operations per thread: eight threads share
/// the work of one lock, and a lock that collapses would otherwise take minutes to show it.
func best(_ scenario: Scenario, _ form: Form, threads: Int) -> Double {
    let perThread = ci && contendedScenarios[scenario.name] != nil ? operations / 5 : operations
    return (0..<tries).map { _ in measure(scenario.prepare(form, threads, perThread), threads: threads) }.max()!
}

func millions(_ rate: Double) -> String { String(format: "%.1f", rate / 1e6) }
func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

print("Scaling on \(cores) cores, \(operations) operations per thread, best of \(tries)\n")
var failure: String?
/// What the CI form asks of a scenario at the checked thread count: the library's rate at least `ratio`
/// times the baseline's, and, where given, the library's efficiency (its rate ÷ threads × its own rate
/// at one thread) at least `efficiency` times the baseline's. The second is the library's ratio to the
/// baseline at the checked thread count over its ratio at one thread: a library that slows down when
/// a second thread joins, where the baseline does not, fails it, while a machine that lends the run
/// only one core slows both alike. The minimums sit below what two cores measured on 2026-11-30
/// against the atomic-flag floor (Benchmarks/README.md, "Threads"), to catch a regression rather than
/// to state a target: the library does not reach the tight floor, whose stages never release their
/// callbacks (see HandWritten.swift).
///
/// `oneThreadRatio`, where given, is a minimum ratio to the tight floor at one thread: where two threads
/// swing with the host (the shared feeds, below), one thread does not, and a dearer delivery shows there.
struct Check {
    let baseline: Form
    let ratio: Double
    let efficiency: Double?
    var oneThreadRatio: Double? = nil
}

/// The scenarios the CI form runs, and what each must reach at two threads. Independent pipelines
/// measured 0.48–0.50× the tight floor at the floor's efficiency (within 0.03), and the stateful ones
/// 1.07–1.09× the closable stages, whose hand-written state sits behind mutexes as the library's does.
///
/// The shared feeds are checked against the closable stages at two threads, not the tight floor: every
/// delivery of the library writes the subscriber's word (see Benchmarks/README.md, "Threads"), as the
/// closable stages write their locks, and on two virtual CPUs what such writes cost from two threads
/// depends on where the host runs the two (in some runs of the whole suite the 64-subscriber feed fell
/// to an efficiency of 0.16–0.20, the closable stages' to 0.42–0.53, for a minute at a time), while the
/// tight floor, whose stages only read (its pipe writes once per value, not per delivery), moved less.
/// Against it the feed read 0.04–0.29× at two threads; against the closable stages 0.70–4.7×, and eight
/// threads into one pipe 2.14–2.41× (2026-11-30). The feed's low readings are the library's own: in
/// four of nine runs of the whole suite its efficiency fell to 0.13–0.20 (in the `--ci` form, eight
/// runs, to 0.41 at worst) while the closable stages' held at 0.85 once (Benchmarks/README.md,
/// "Threads"), a finding the minimum of 0.5× does not fail on. So the feed is also held to its ratio to the tight floor at one
/// thread, which does not swing from run to run: 0.13–0.16× (a delivery that took a lock and copied its
/// callback again would about halve it).
let checkedScenarios: [String: Check] = [
    "independent pipelines": Check(baseline: .tight, ratio: 0.4, efficiency: 0.8),
    "independent pipelines, callback capturing a shared object": Check(baseline: .tight, ratio: 0.4, efficiency: 0.8),
    "one shared pipe, 64 subscribers": Check(baseline: .closable, ratio: 0.5, efficiency: nil, oneThreadRatio: 0.1),
    "independent stateful pipelines": Check(baseline: .closable, ratio: 0.7, efficiency: 0.8),
]
/// The scenarios the CI form checks at eight threads instead of two: more threads than the CI machine
/// has cores, all taking one lock. A lock that hands itself to a sleeping waiter instead of letting a
/// running thread take it (the standard library's `Mutex` on Linux, taken directly) collapses there:
/// 0.00× the floor on two cores, as on sixteen (see Benchmarks/README.md). Checked against the closable
/// stages, whose pipe and stages lock too (the tight floor swung from 0.36× to 1.26× of the library
/// there); the minimum is there to catch a collapse.
let contendedScenarios: [String: Check] = [
    "one shared pipe, one subscriber": Check(baseline: .closable, ratio: 1.0, efficiency: nil)
]
/// Whether to run `scenario`: in the CI form only the checked ones.
func selected(_ scenario: String) -> Bool {
    if ci { return checkedScenarios[scenario] != nil || contendedScenarios[scenario] != nil }
    return nameFilter.map { scenario.contains($0) } ?? true
}

extension Form {
    /// The form's name in messages.
    var title: String {
        switch self {
        case .library: return "library"
        case .tight: return "tight floor"
        case .closable: return "closable stages"
        }
    }
}

/// One row of a scenario's table: the rate of each form at `threads` threads.
func rates(_ scenario: Scenario, threads: Int) -> [Form: Double] {
    var rate: [Form: Double] = [:]
    for form in Form.allCases { rate[form] = best(scenario, form, threads: threads) }
    return rate
}

for scenario in scenarios where selected(scenario.name) {
    print("### \(scenario.name) (millions of \(scenario.unit) per second)\n")
    print(
        "| threads | library | tight floor | closable stages | library ÷ floor | library efficiency | floor efficiency |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    var single: [Form: Double] = [:]
    let contended = contendedScenarios[scenario.name] != nil
    let check = checkedScenarios[scenario.name] ?? contendedScenarios[scenario.name]
    // The thread count the CI form checks.
    let checked = contended ? 8 : 2
    for threads in ci && contended ? [1, 8] : threadCounts {
        var rate = rates(scenario, threads: threads)
        if threads == threadCounts.first {
            for form in Form.allCases { single[form] = rate[form]! / Double(threads) }
        }
        let efficiency = { (form: Form) in rate[form]! / (Double(threads) * single[form]!) }
        /// What the CI form finds short in this row, if anything.
        func shortfall() -> String? {
            guard ci, let check else { return nil }
            if threads == threadCounts.first, let minimum = check.oneThreadRatio {
                let reached = rate[.library]! / rate[.tight]!
                if reached < minimum {
                    return "the library reached \(ratio(reached)) of the tight floor, below \(ratio(minimum))"
                }
                return nil
            }
            guard threads == checked else { return nil }
            let reached = rate[.library]! / rate[check.baseline]!
            if reached < check.ratio {
                return "the library reached \(ratio(reached)) of the \(check.baseline.title), below \(ratio(check.ratio))"
            }
            if let minimum = check.efficiency, efficiency(.library) < minimum * efficiency(check.baseline) {
                let theirs = efficiency(check.baseline)
                return
                    "the library's efficiency was \(ratio(efficiency(.library))), below \(ratio(minimum)) the \(check.baseline.title)'s \(ratio(theirs))"
            }
            return nil
        }
        // A run that falls short is measured again, up to twice, since one busy moment on a shared
        // machine can cost either form a whole try. The one-thread rates that efficiency divides by are
        // measured again too: an unlucky one would otherwise decide every attempt.
        var attempts = 1
        while let short = shortfall(), attempts < 3 {
            print("(\(short); measuring again)")
            if let first = threadCounts.first, first != threads {
                let again = rates(scenario, threads: first)
                for form in Form.allCases { single[form] = again[form]! / Double(first) }
            }
            rate = rates(scenario, threads: threads)
            if threads == threadCounts.first {
                for form in Form.allCases { single[form] = rate[form]! / Double(threads) }
            }
            attempts += 1
        }
        let library = rate[.library]!
        let floor = rate[.tight]!
        print(
            "| \(threads) | \(millions(library)) | \(millions(floor)) | \(millions(rate[.closable]!)) | \(ratio(library / floor)) | \(ratio(efficiency(.library))) | \(ratio(efficiency(.tight))) |"
        )
        if let short = shortfall() {
            failure = "\(scenario.name) at \(threads) thread(s): \(short), in each of \(attempts) attempts"
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
            hand = max(hand, await asyncFanOut(.tight, consumers: consumers, values: values))
        }
        print("| \(consumers) | \(millions(library)) | \(millions(hand)) | \(ratio(library / hand)) |")
    }
    print("")
}

if let failure {
    print("FAILED: \(failure)")
    exit(1)
}
