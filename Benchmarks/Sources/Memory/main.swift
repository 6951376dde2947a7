// The memory suite: the bytes one live subscription holds, for one shape and one implementation per
// process, so that memory one measurement frees cannot hide the next one's growth.
//
//     swift build -c release --product memory
//     .build/release/memory "hot source through map" SignalKit [count]
//
// Prints one JSON object: resident and heap growth per subscription while `count` (100,000 by default)
// are held, and what is still held per subscription after they all ended. Scripts/memory.py runs every
// pair and makes the table.

import Foundation
import MemoryMeasurement

let arguments = Array(CommandLine.arguments.dropFirst())
guard (2...3).contains(arguments.count),
    let shape = allShapes.first(where: { $0.name == arguments[0] }),
    let make = shape.implementations[arguments[1]],
    let count = Int(arguments.count == 3 ? arguments[2] : "100000"), count > 0
else {
    print("usage: memory <shape> <implementation> [count]")
    for shape in allShapes {
        print("  \(shape.name): \(shape.implementations.keys.sorted().joined(separator: ", "))")
    }
    exit(2)
}

/// Runs one round; returns the readings before, while held and after the end.
@MainActor func measure(count: Int) async -> (before: MemoryReading, held: MemoryReading, after: MemoryReading) {
    let subscriptions = make(count)
    let before = MemoryReading.now()
    await subscriptions.subscribe()
    let held = MemoryReading.now()
    if let failure = await subscriptions.check() {
        FileHandle.standardError.write(Data("\(shape.name) · \(arguments[1]): \(failure)\n".utf8))
        exit(1)
    }
    await subscriptions.end()
    let after = MemoryReading.now()
    return (before, held, after)
}

// A warm-up round of the same size loads the code, the type metadata and the runtime's caches, lets
// the cooperative pool start its threads, and brings the caches that grow with the work (Dispatch's
// continuations, after 100,000 blocks) to their size before the first reading; so what is still handed
// out after the measured round ends is what that round left behind.
_ = await measure(count: count)
let (before, held, after) = await measure(count: count)

func perSubscription(_ bytes: Int) -> Double {
    return (Double(bytes) / Double(count) * 10).rounded() / 10
}

let result: [String: Any] = [
    "shape": shape.name,
    "implementation": arguments[1],
    "count": count,
    "resident": perSubscription(held.resident - before.resident),
    "heap": perSubscription(held.heap - before.heap),
    "heapAfterEnd": perSubscription(after.heap - before.heap),
]
let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
print(String(decoding: json, as: UTF8.self))
