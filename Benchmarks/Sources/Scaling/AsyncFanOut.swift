// The async fan-out: one producer thread, `consumers` `for await` loops each receiving every value.
// The library's form iterates `pipe.signal().values`; the hand-written one gives each consumer an
// `AsyncStream` fed by `HandBroadcaster`. Both run their loops as tasks on the cooperative pool.

import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Synchronization

/// Deliveries per second (values received, summed over the consumers) for `values` values sent to
/// `consumers` loops, from the first value sent to the last loop's end.
func asyncFanOut(_ form: Form, consumers: Int, values: Int) async -> Double {
    let received = SharedTally()
    let started = SharedTally()
    // Values below zero steer the run: -2 tells a library loop that it has subscribed (its subscription
    // starts with its first `next()`, so the producer sends -2 until every loop has seen one), -1 ends it.
    let pipe = ValuePipe<Int>()
    let broadcaster = HandBroadcaster<Int>()
    let streams = form != .library ? (0..<consumers).map { _ in broadcaster.makeStream() } : []
    return await withTaskGroup(of: Void.self, returning: Double.self) { group in
        for index in 0..<consumers {
            group.addTask {
                var seen = 0
                var first = true
                switch form {
                case .library:
                    for await value in pipe.signal().values {
                        if first {
                            first = false
                            started.add()
                        }
                        if value == -1 { break }
                        if value >= 0 { seen += 1 }
                    }
                case .tight, .closable:
                    started.add()
                    for await value in streams[index] {
                        if value == -1 { break }
                        if value >= 0 { seen += 1 }
                    }
                }
                received.add(seen)
            }
        }
        let start = await withCheckedContinuation { (continuation: CheckedContinuation<Double, Never>) in
            Thread {
                // Warm-up: until every loop runs (and, for the library, has subscribed).
                while started.value < consumers {
                    if form == .library { pipe.putNext(-2) }
                    sched_yield()
                }
                let start = DispatchTime.now().uptimeNanoseconds
                for value in 0..<values {
                    switch form {
                    case .library: pipe.putNext(value)
                    case .tight, .closable: broadcaster.send(value)
                    }
                }
                switch form {
                case .library: pipe.putNext(-1)
                case .tight, .closable: broadcaster.send(-1)
                }
                continuation.resume(returning: Double(start))
            }.start()
        }
        await group.waitForAll()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds) - start
        let total = received.value
        precondition(total == consumers * values, "the fan-out lost values: \(total) of \(consumers * values)")
        return Double(total) / (elapsed / 1e9)
    }
}
