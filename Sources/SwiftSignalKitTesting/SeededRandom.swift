import SwiftSignalKit

/// A random number generator whose sequence is fixed by its seed, for randomness a test asks for on a
/// timeline (the jitter of `retry`'s backoff) that must give the same numbers on every run.
///
/// ```swift
/// let backoff = RetryBackoff.exponential(initial: 1, maxDelay: 30, random: SeededRandom(seed: 7).unitSource())
/// ```
///
/// The numbers are SplitMix64's (Steele, Lea and Flood, 2014): fast, well spread, and not for
/// cryptography.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers are fixed by `seed`.
    ///
    /// - Parameter seed: Any number; equal seeds give equal sequences.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A source of numbers from 0 to 1 drawn from this generator's sequence, for
    /// `RetryBackoff.exponential(initial:multiplier:maxDelay:jitter:random:)`: each call takes the
    /// next number, from any thread.
    ///
    /// - Returns: The source; it keeps its own copy of the generator.
    public func unitSource() -> @Sendable () -> Double {
        let generator = LockedState(self)
        return {
            generator.withLock { Double.random(in: 0...1, using: &$0) }
        }
    }
}
