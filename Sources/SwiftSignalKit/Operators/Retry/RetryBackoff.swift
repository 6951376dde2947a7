import Foundation

/// How long ``retry(_:maxAttempts:scheduler:when:)`` waits before each new attempt.
///
/// ```swift
/// let backoff = RetryBackoff.exponential(initial: 0.1, multiplier: 2, maxDelay: 10)
/// // waits drawn from 0...0.1, 0...0.2, 0...0.4, … 0...10 (full jitter)
/// ```
///
/// With full jitter (the default), the wait before retry `n` (from 0) is drawn uniformly from
/// `0 ... min(maxDelay, initial * multiplier^n)`. Many clients that failed together then spread their
/// retries out instead of returning together. With `.none`, the wait is the upper bound itself.
public struct RetryBackoff: Sendable {
    /// How a wait is drawn below its upper bound.
    public enum Jitter: Sendable {
        /// The bound itself.
        case none
        /// Uniformly from 0 to the bound.
        case full
    }

    /// The bound of the first wait, in seconds.
    public let initial: Double
    /// What each bound is multiplied by for the next retry.
    public let multiplier: Double
    /// The largest bound, in seconds.
    public let maxDelay: Double
    /// How waits are drawn.
    public let jitter: Jitter
    /// A number from 0 to 1 for each jittered wait; `Double.random(in: 0...1)` by default. Tests pass
    /// their own to get known waits.
    public let random: @Sendable () -> Double

    /// Exponential backoff: the bound starts at `initial` and grows by `multiplier` up to `maxDelay`.
    ///
    /// Takes seconds as a `Double`, as the original SwiftSignalKit does; in new code, prefer
    /// `exponential(initial:multiplier:maxDelay:jitter:random:)` with `Duration`s.
    ///
    /// - Parameters:
    ///   - initial: The first bound, in seconds; finite and ≥ 0.
    ///   - multiplier: The growth of the bound; finite and ≥ 1.
    ///   - maxDelay: The largest bound, in seconds; ≥ 0, and `.infinity` for no cap.
    ///   - jitter: How waits are drawn below the bound.
    ///   - random: The source of numbers from 0 to 1 for the jitter.
    /// - Returns: The backoff.
    ///
    /// > Important: Values outside these ranges, and NaN, are precondition failures naming the argument.
    public static func exponential(
        initial: Double, multiplier: Double = 2, maxDelay: Double, jitter: Jitter = .full,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) -> RetryBackoff {
        let api = "RetryBackoff.exponential(initial:multiplier:maxDelay:jitter:random:)"
        if !(initial >= 0 && initial.isFinite) {
            misuse("\(api): initial must be a finite number of seconds ≥ 0, got \(initial)")
        }
        if !(multiplier >= 1 && multiplier.isFinite) {
            misuse("\(api): multiplier must be finite and ≥ 1, got \(multiplier)")
        }
        if !(maxDelay >= 0) {
            misuse("\(api): maxDelay must be a number of seconds ≥ 0 (.infinity for no cap), got \(maxDelay)")
        }
        return RetryBackoff(initial: initial, multiplier: multiplier, maxDelay: maxDelay, jitter: jitter, random: random)
    }

    /// The upper bound of the wait before retry `retry` (from 0).
    ///
    /// - Parameter retry: The retry's number, from 0.
    /// - Returns: `min(maxDelay, initial * multiplier^retry)`, at most 100 years.
    public func bound(forRetry retry: Int) -> Double {
        if self.initial == 0 {
            return 0
        }
        let grown = self.initial * pow(self.multiplier, Double(Swift.max(0, retry)))
        // `grown` is finite or +infinity (past every cap): `initial` is positive and finite here.
        let capped = Swift.min(self.maxDelay, grown)
        return Swift.min(capped, TimeIntervalValidation.maximumSeconds)
    }

    /// The wait before retry `retry` (from 0): the bound, with jitter drawn from ``random``.
    ///
    /// - Parameter retry: The retry's number, from 0.
    /// - Returns: A wait in seconds, from 0 to ``bound(forRetry:)``.
    public func delay(forRetry retry: Int) -> Double {
        let bound = self.bound(forRetry: retry)
        switch self.jitter {
        case .none:
            return bound
        case .full:
            let fraction = self.random()
            // A random source outside 0...1 (or NaN) cannot push the wait outside 0...bound.
            return fraction.isNaN ? bound : bound * Swift.min(1, Swift.max(0, fraction))
        }
    }
}

/// Resubscribes after failures that `shouldRetry` accepts, waiting as `backoff` says, for at most
/// `maxAttempts` subscriptions in all; other failures, and the failure of the last attempt, end the
/// result.
///
/// ```
/// source (each attempt):                 -#
/// retry(backoff (no jitter, 1, ×2),
///       maxAttempts: 3):                 -#-(1 s)-#-(2 s)-#  → the third error is sent
/// ```
///
/// The production pattern for calls to a remote service: transient failures are retried with spread
/// out waits, permanent ones fail at once.
///
/// ```swift
/// let profile = remoteProfile
///     |> retry(.exponential(initial: 0.2, maxDelay: 5), maxAttempts: 4, scheduler: Queue.concurrentDefaultQueue()) { error in
///         error == .offline
///     }
/// ```
///
/// Values sent by a failed attempt have been passed on; a retry starts from the source's beginning.
/// Disposing cancels a wait in progress.
///
/// - Parameters:
///   - backoff: The waits before retries.
///   - maxAttempts: The most subscriptions, the first included: 1 never retries. At least 1.
///   - scheduler: Where the waits are measured and retries start; a ``Queue`` by default, a virtual-time
///     scheduler in tests.
///   - shouldRetry: Whether an error is worth retrying; every error by default.
/// - Returns: An operator for `|>`.
public func retry<T, E, S: SignalScheduler>(
    _ backoff: RetryBackoff, maxAttempts: Int, scheduler: S = Queue.concurrentDefaultQueue(),
    when shouldRetry: @escaping @Sendable (E) -> Bool = { _ in true }
) -> (Signal<T, E>) -> Signal<T, E> {
    if maxAttempts < 1 {
        misuse("retry(_:maxAttempts:scheduler:when:): maxAttempts must be at least 1 (1 never retries), got \(maxAttempts)")
    }
    return { signal in
        return RestartLoop.signal { subscriber, loop in
            return signal.subscribe(
                Forwarding(to: subscriber),
                error: { error in
                    guard shouldRetry(error) else {
                        subscriber.putError(error)
                        return
                    }
                    // The backoff computes the waits (outside the lock: its random source is the
                    // caller's); the loop counts.
                    switch loop.failed(growingWaitBy: 0, upTo: 0, maxRetries: maxAttempts - 1) {
                    case .retry(let number, _):
                        loop.restart(after: backoff.delay(forRetry: number - 1), forRetry: number, on: scheduler)
                    case .giveUp:
                        subscriber.putError(error)
                    case .none:
                        break
                    }
                },
                completed: {
                    subscriber.putCompletion()
                })
        }
    }
}

// MARK: - Duration forms
//
// The `Duration` forms of the API above, the ones to prefer in new code (see `Duration.secondsForSignals`
// in `Threading/SignalScheduler.swift` for the rules they share with the `Double` forms).

extension RetryBackoff {
    /// Exponential backoff: the `Duration` form of
    /// `exponential(initial:multiplier:maxDelay:jitter:random:)`.
    ///
    /// ```swift
    /// let backoff = RetryBackoff.exponential(initial: .milliseconds(100), maxDelay: .seconds(10))
    /// ```
    ///
    /// - Parameters:
    ///   - initial: The first bound; not negative.
    ///   - multiplier: The growth of the bound; finite and ≥ 1.
    ///   - maxDelay: The largest bound; not negative. (For no cap, use the `Double` form with `.infinity`.)
    ///   - jitter: How waits are drawn below the bound.
    ///   - random: The source of numbers from 0 to 1 for the jitter.
    /// - Returns: The backoff.
    public static func exponential(
        initial: Duration, multiplier: Double = 2, maxDelay: Duration, jitter: Jitter = .full,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) -> RetryBackoff {
        let api = "RetryBackoff.exponential(initial:multiplier:maxDelay:jitter:random:)"
        return .exponential(
            initial: initial.secondsForSignals(notNegative: api, argument: "initial"), multiplier: multiplier,
            maxDelay: maxDelay.secondsForSignals(notNegative: api, argument: "maxDelay"), jitter: jitter, random: random)
    }
}
