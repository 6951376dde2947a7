// Flow control: one async producer, one `for await` consumer (fast or slow), elements per second and
// peak resident memory, for the library's bounded `values` against `MultiProducerSingleConsumerAsyncChannel`
// with watermarks and `AsyncStream`. See Benchmarks/README.md, "Flow control".
//
//   swift run -c release --package-path Benchmarks flow-control signalkit slow
//   python3 Benchmarks/Scripts/flow-control.py          # every implementation and consumer, 3 runs each
//
// Usage: flow-control IMPLEMENTATION fast|slow [--elements N] [--bound N] [--rounds N]
//        flow-control work [--rounds N]     # the slow consumer's work alone, in ns per element
// IMPLEMENTATION: signalkit, signalkit-sequence, mpsc-channel, asyncstream, signalkit-sync-bounded,
// signalkit-sync-unbounded. One run per process: the
// peak memory it prints is that run's. It prints one line of JSON.

import Dispatch
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let number = Int(arguments[index + 1].replacingOccurrences(of: "_", with: "")) else {
        usage("\(name) needs a number")
    }
    return number
}
func usage(_ problem: String) -> Never {
    fail(
        """
        \(problem)
        usage: flow-control IMPLEMENTATION fast|slow [--elements N] [--bound N] [--rounds N]
               flow-control work [--rounds N]
        implementations: \(Implementation.allCases.map(\.rawValue).joined(separator: ", "))
        """,
        status: 2
    )
}
func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("flow-control: \(message)\n".utf8))
    exit(status)
}

let elements = option("--elements", default: 10_000_000)
let bound = option("--bound", default: 1_024)
// About 0.66 µs per element on the two-core development machine (`flow-control work`): slower than the
// channel's and AsyncStream's producers, so that their buffers fill. A slower consumer would make the
// script's 18 runs of 10,000,000 elements take well over five minutes.
let rounds = option("--rounds", default: 500)
guard elements >= 1, bound >= 2, rounds >= 1 else { usage("--elements must be at least 1, --bound 2, --rounds 1") }

if arguments.first == "work" {
    // The slow consumer's ceiling: what its work costs with nothing else in the loop.
    let count = 2_000_000
    var folded: UInt64 = 0
    let start = DispatchTime.now().uptimeNanoseconds
    for element in 0..<count {
        folded ^= spin(element, rounds: rounds)
    }
    let nanoseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count)
    print("{\"rounds\": \(rounds), \"ns_per_element\": \(nanoseconds), \"folded\": \(folded)}")
    exit(0)
}

guard arguments.count >= 2, let implementation = Implementation(rawValue: arguments[0]) else {
    usage("name an implementation and a consumer")
}
let consumer: Consumer
switch arguments[1] {
case "fast": consumer = Consumer(rounds: 0, progress: Progress())
case "slow": consumer = Consumer(rounds: rounds, progress: Progress())
default: usage("the consumer is fast or slow, not \(arguments[1])")
}

let residentBefore = ResidentMemory.current() ?? 0
let start = DispatchTime.now().uptimeNanoseconds
// Detached, so that neither the producer nor the consumer runs on the main actor, whichever way the
// compiler isolates top-level code: both are tasks on the cooperative pool in every implementation.
let tally = await Task.detached {
    await run(implementation, elements: elements, consumer: consumer, bound: bound)
}.value
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
let peak = ResidentMemory.peak()

// A run that lost, repeated or invented an element measured something else: stop rather than report it.
// A loop meant to end early (a producer that cannot wait under `.bounded`) took the first elements,
// at most the bound and the one kept for its first `next()`.
let taken = implementation.endsEarly ? tally.count : elements
let expectedSum = taken * (taken - 1) / 2
guard tally.count == taken, tally.sum == expectedSum, !implementation.endsEarly || (1...bound + 1).contains(taken) else {
    fail(
        "\(implementation.rawValue) delivered \(tally.count) of \(elements) elements, sum \(tally.sum) (expected \(expectedSum))",
        status: 1
    )
}

print(
    "{\"implementation\": \"\(implementation.rawValue)\", \"consumer\": \"\(arguments[1])\", \"elements\": \(elements), "
        + "\"taken\": \(tally.count), "
        + "\"bound\": \(bound), \"rounds\": \(consumer.rounds), \"seconds\": \(seconds), "
        + "\"elements_per_second\": \(Double(tally.count) / seconds), \"peak_rss_bytes\": \(peak), "
        + "\"rss_before_bytes\": \(residentBefore), \"in_flight_mean\": \(Double(tally.inFlightTotal) / Double(max(tally.samples, 1))), "
        + "\"in_flight_max\": \(tally.inFlightMax), \"work\": \(tally.work)}"
)
