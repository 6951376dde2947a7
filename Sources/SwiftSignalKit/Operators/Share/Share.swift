/// What a shared signal replays to a subscriber that arrives after values were sent.
public enum ShareReplay: Sendable, Equatable {
    /// Nothing: a subscriber sees only the values sent after it subscribed (Rx's `share()`,
    /// CwlSignal's multicast).
    case none
    /// The latest value (Rx's `share(replay: 1)`, CwlSignal's continuous, SSignalKit's
    /// `SPipe(replay: true)`).
    case latest
    /// Every value since the connection was made (CwlSignal's playback). The buffer grows without
    /// bound while the connection lasts.
    case all
    /// The last `count` values; 0 is the same as ``none``.
    case last(Int)
}

/// When a shared signal lets go of its upstream subscription.
public enum ShareConnection: Sendable, Equatable {
    /// When the last subscriber leaves, or the upstream ends: the next subscriber connects again, with
    /// an empty replay (Rx's `.whileConnected`).
    case whileSubscribed
    /// Never, once the first subscriber has connected; after the upstream ends, later subscribers get
    /// the replay and the terminal event (Rx's `.forever`).
    case stayConnected
}

/// Shares one subscription to the source among all subscribers, replaying what `replay` says to each
/// new one.
///
/// ```
/// source:                      -a-b-c-|
/// share(replay: .latest)
///   subscriber 1 (at 0):       -a-b-c-|
///   subscriber 2 (at 4):           bc-|
/// ```
///
/// The first subscriber connects: the source is started once, and its events go to every current
/// subscriber. With ``ShareConnection/whileSubscribed`` the source is disposed when the last
/// subscriber leaves, and the next subscriber starts it again; with ``ShareConnection/stayConnected``
/// it runs until it ends, whoever is subscribed.
///
/// ```swift
/// let prices = exchange.quotes(symbol) |> share(replay: .latest)
/// let header = prices.start(next: { print("header", $0) })
/// let chart = prices.start(next: { print("chart", $0) })  // gets the latest quote at once, then live
/// ```
///
/// Apply the operator once and keep the result: every subscriber of *that* signal shares its source.
///
/// When the last subscriber leaves while a synchronous source is still starting (a `take(1)` after the
/// share, say), the source's subscriber ends at once, so loops inside its generator (``restart(_:)``)
/// stop as they would without the share. Disposal never waits: if a new subscriber arrives as the last
/// one leaves, the new connection may start before another thread has finished disposing the old one,
/// so two upstream subscriptions can briefly overlap. A source that must never run twice at once (an
/// exclusive socket, say) should use ``ShareConnection/stayConnected``. With that policy a source runs
/// until it ends whoever listens, so a synchronous source that never ends keeps the first subscribing
/// thread for good.
///
/// > Note: A subscriber that arrives while values are being sent gets the replay and then every later
/// > value, with no gap and no duplicate, whatever threads the source sends from. Every subscriber
/// > gets the events in the same order, one at a time; the replay is delivered on the subscribing
/// > thread. A value costs no allocation however many subscribers there are, and a subscriber keeps no
/// > queue of its own: events sent while another thread delivers wait in the share's one queue for
/// > that thread.
///
/// - Parameters:
///   - replay: What a new subscriber gets first. `.last` with a negative count is a precondition
///     failure naming the value.
///   - connection: When the upstream subscription ends.
/// - Returns: An operator for `|>`.
@inlinable public func share<T: Sendable, E: Sendable>(
    replay: ShareReplay = .none, connection: ShareConnection = .whileSubscribed
) -> (
    Signal<T, E>
) -> Signal<T, E> {
    if case .last(let count) = replay, count < 0 {
        misuse("share(replay:connection:): replay: .last needs a count of at least 0, got \(count)")
    }
    return { signal in
        let storage = ShareStorage(upstream: signal, replay: replay, connection: connection)
        return Signal { subscriber in
            storage.subscribe(subscriber)
        }
    }
}
