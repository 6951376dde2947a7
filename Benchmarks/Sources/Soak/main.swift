// The soak check: subscribes and disposes continuously across the operators and the bridges while it
// samples the process's memory, and fails if memory keeps growing once warmed up.
//
//     swift build -c release --product soak
//     .build/release/soak [--seconds N] [--leak]
//
// It runs for N seconds (180 by default). The first fifth is warm-up: caches, the task pool's threads,
// Dispatch's continuation caches and malloc's arenas reach their size. Then it compares the memory of the
// last third of the samples with the first third after warm-up, and exits 1 if the heap (bytes malloc has
// handed out) grew by more than 1 MiB or the resident set by more than 8 MiB. `--leak` keeps one
// subscription per round for good, to show that the check catches a leak.

import Foundation
import MemoryMeasurement
import SwiftSignalKit
import SwiftSignalKitConcurrency

var seconds = 180.0
var leak = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--seconds":
        guard let value = arguments.popFirst().flatMap(Double.init), value >= 5 else {
            print("--seconds needs a number of at least 5")
            exit(2)
        }
        seconds = value
    case "--leak":
        leak = true
    default:
        print("usage: soak [--seconds N] [--leak]")
        exit(2)
    }
}

struct Sample {
    let elapsed: Double
    let rounds: Int
    let heap: Int
    let resident: Int
}

func median(_ values: [Int]) -> Int {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func mebibytes(_ bytes: Int) -> String {
    return String(format: "%.2f MiB", Double(bytes) / 1_048_576)
}

let context = SoakContext(leak: leak)
let actor = QueueLocalActor(queue: context.queue, value: 0)
let clock = ContinuousClock()
let start = clock.now
let sampleEvery = Duration.milliseconds(500)
var nextSample = start + sampleEvery
var samples: [Sample] = []
var rounds = 0

print("soak: \(Int(seconds)) s of subscribing and disposing\(leak ? ", leaking one subscription per round" : "")")
while clock.now - start < .seconds(seconds) {
    for _ in 0..<50 {
        coreRound(context, rounds)
        longLivedRound(context, rounds)
        rounds += 1
    }
    await bridgeRound(context, rounds, actor: actor)
    if clock.now >= nextSample {
        // Let the queue finish what the rounds scheduled on it before reading.
        await withCheckedContinuation { continuation in
            context.queue.async { continuation.resume() }
        }
        let reading = MemoryReading.now()
        let elapsed = Double((clock.now - start).components.seconds)
        samples.append(Sample(elapsed: elapsed, rounds: rounds, heap: reading.heap, resident: reading.resident))
        nextSample = clock.now + sampleEvery
    }
}

let afterWarmUp = samples.filter { $0.elapsed >= seconds / 5 }
guard afterWarmUp.count >= 6 else {
    print("soak: too few samples after warm-up (\(afterWarmUp.count))")
    exit(1)
}
let third = afterWarmUp.count / 3
let early = Array(afterWarmUp.prefix(third))
let late = Array(afterWarmUp.suffix(third))
let heapGrowth = median(late.map(\.heap)) - median(early.map(\.heap))
let residentGrowth = median(late.map(\.resident)) - median(early.map(\.resident))
let delivered = context.deliveries.count.load(ordering: .relaxed)

print("soak: \(rounds) rounds, \(delivered) deliveries, \(samples.count) samples")
for (name, values) in [("heap", samples.map(\.heap)), ("resident", samples.map(\.resident))] {
    let afterWarmUpValues = Array(values.suffix(afterWarmUp.count))
    let early = median(Array(afterWarmUpValues.prefix(third)))
    let late = median(Array(afterWarmUpValues.suffix(third)))
    print("soak: \(name) \(mebibytes(values[0])) at the first sample, \(mebibytes(early)) after warm-up, \(mebibytes(late)) at the end")
}
var failed = false
if delivered < rounds * 10 {
    print("soak: FAIL only \(delivered) deliveries in \(rounds) rounds: the rounds did not run their subscriptions")
    failed = true
}
if heapGrowth > 1 << 20 {
    print("soak: FAIL the heap grew by \(mebibytes(heapGrowth)) after warm-up (limit 1 MiB)")
    failed = true
}
if residentGrowth > 8 << 20 {
    print("soak: FAIL the resident set grew by \(mebibytes(residentGrowth)) after warm-up (limit 8 MiB)")
    failed = true
}
if !failed {
    print("soak: memory is flat after warm-up (heap \(mebibytes(heapGrowth)), resident \(mebibytes(residentGrowth)))")
}
exit(failed ? 1 : 0)
