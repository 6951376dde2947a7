import SwiftSignalKit

/// A count of things alive right now: subscriptions, bridged tasks, open streams.
public final class Gauge: Sendable {
    private let count = Atomic(value: 0)

    /// Creates a gauge at zero.
    public init() {}

    /// How many are alive now.
    public var value: Int { self.count.with { $0 } }

    /// One more is alive.
    public func increment() {
        self.count.modify { $0 + 1 }
    }

    /// One fewer is alive.
    public func decrement() {
        self.count.modify { $0 - 1 }
    }
}

/// What the server counts, for `/metrics` and for the tests that check nothing is left behind.
public final class LiveCounters: Sendable {
    /// Subscriptions to domain signals that have started and not yet ended (completed, failed or
    /// disposed).
    public let subscriptions = Gauge()
    /// Async operations bridged into signals that have started and not yet returned.
    public let bridgedTasks = Gauge()
    /// Event streams (server-sent events) open now.
    public let streams = Gauge()
    /// Event streams ended so far because their client read slower than events came (a count that
    /// only grows).
    public let streamsBehind = Gauge()

    /// Creates counters at zero.
    public init() {}
}

/// Counts the subscriptions to the signal in `gauge`: one more when a subscriber starts it, one fewer
/// when that subscription ends, whichever way it ends.
///
/// ```swift
/// let quotes = loader.quote("ACME") |> tracked(counters.subscriptions)
/// ```
///
/// - Parameter gauge: The gauge to count in.
/// - Returns: An operator that passes every event through unchanged.
public func tracked<T, E>(_ gauge: Gauge) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        // The library's operators, not a generator of our own that starts the source with callbacks:
        // that would hide the subscriber from the operators above, and `then` in
        // `cached |> then(exchange)` could not see that a `take(1)` below had ended, so it asked the
        // exchange for a quote the cache had already given.
        return signal
            |> beforeStarted { gauge.increment() }
            |> afterDisposed { gauge.decrement() }
    }
}
