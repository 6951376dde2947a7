// What the consumer loop does with each element, the same in every implementation: the fast consumer
// only counts and sums; the slow one also runs a fixed, deterministic computation, so that a producer
// that does not wait gets ahead of it, and one that waits spends the run waiting.

import Synchronization

/// How far the producer has got: the number of elements its `send` (or `yield`) has returned for.
/// The consumer compares it with what it has taken to see how many elements wait between the two.
final class Progress: Sendable {
    let sent = Atomic<Int>(0)
}

/// How much work the consumer does per element, and what it has seen.
struct Consumer: Sendable {
    /// Rounds of `spin` per element: 0 for the fast consumer.
    let rounds: Int
    let progress: Progress

    /// The consumer samples the elements in flight once per this many elements: often enough for a
    /// mean over thousands of samples, rarely enough that reading the producer's counter (a cache line
    /// the producer writes) costs nothing measurable.
    static let sampleEvery = 1_024

    /// What the loop has taken: enough to check that every element arrived once, and how many waited.
    struct Tally: Sendable {
        var count = 0
        var sum = 0
        /// The slow consumer's results, folded together so that the optimiser cannot drop the work.
        var work: UInt64 = 0
        /// Elements sent and not yet taken, at each sample: those in the buffer, plus the one the
        /// producer may be handing over.
        var samples = 0
        var inFlightTotal = 0
        var inFlightMax = 0
    }

    /// Takes one element. Inlined into the loop, which is the same for every implementation.
    @inline(__always) func take(_ element: Int, into tally: inout Tally) {
        tally.count += 1
        tally.sum &+= element
        if self.rounds > 0 {
            tally.work ^= spin(element, rounds: self.rounds)
        }
        if tally.count % Self.sampleEvery == 0 {
            let inFlight = self.progress.sent.load(ordering: .relaxed) - tally.count
            tally.samples += 1
            tally.inFlightTotal += inFlight
            tally.inFlightMax = max(tally.inFlightMax, inFlight)
        }
    }
}

/// A chain of dependent shift, exclusive-or and multiply steps: each step needs the one before, so
/// the time grows with `rounds`, and the steps cannot be vectorised or folded into a closed form as a
/// plain sum could. A busy loop that watched the clock would cost what the clock costs; this is the
/// same work on every run.
///
/// Not inlined, so that it is the same code in every implementation's loop.
@inline(never) func spin(_ element: Int, rounds: Int) -> UInt64 {
    var state = UInt64(bitPattern: Int64(element))
    for _ in 0..<rounds {
        state ^= state >> 31
        state &*= 0x9E37_79B9_7F4A_7C15
    }
    return state
}
