/// A hot pipe that replays its latest value: a new subscriber gets the value put last, if any, at once,
/// then every value put afterwards (SSignalKit's `SPipe(replay: true)`, Rx's `ReplaySubject` of 1).
///
/// ```swift
/// let status = ReplayingValuePipe<String>()
/// status.putNext("connecting")
/// let disposable = status.signal().start(next: { print($0) })  // prints "connecting" at once
/// status.putNext("ready")                                       // prints "ready"
/// ```
///
/// Unlike ``ValuePromise``, it needs no `Equatable` values and never skips a repeated one; unlike
/// ``ValuePipe``, a subscriber that arrives late is not left without a value.
///
/// The signal does not keep the pipe alive. Once the pipe is released, it lets go of its subscribers,
/// without an event, after the values already put have reached them (as ``ValuePipe`` does), on the
/// thread that delivers the last of them: the one that releases the pipe, or one still delivering,
/// which may be the Dispatch thread handed the delivery. A subscription made afterwards gets the latest
/// value and nothing more.
///
/// Each subscriber sees values in the order they were put, once each: a subscriber that arrives while
/// another thread puts a value gets the replay and then every later value, with no gap and no
/// duplicate. The replay is delivered on the subscribing thread; ``putNext(_:)`` delivers on the calling
/// thread, outside any lock. A value put while another delivery is under way (from another thread, or
/// from a subscriber's callback) is queued and delivered by the delivering thread, which after 64 values
/// put by other threads hands the rest to a Dispatch thread (as ``Promise`` does); values a callback puts
/// back into the pipe on the delivering thread do not count.
public final class ReplayingValuePipe<T: Sendable>: Sendable {
    @usableFromInline let core: ReplayingFanOut<T>

    /// Creates a pipe with nothing to replay yet.
    public init() {
        self.core = ReplayingFanOut(value: nil)
    }

    /// Creates a pipe that replays `value` until another is put.
    ///
    /// - Parameter value: The first value to replay.
    public init(_ value: T) {
        self.core = ReplayingFanOut(value: value)
    }

    deinit {
        self.core.close()
    }

    /// A signal of the latest value, if any, followed by every value put afterwards. It never completes.
    ///
    /// - Returns: A hot signal that replays on subscription, synchronously.
    @inlinable public func signal() -> Signal<T, NoError> {
        // The signal holds the core, not the pipe, so it does not keep the pipe alive (as `ValuePipe`).
        let core = self.core
        return Signal { subscriber in
            guard let key = core.subscribeIfOpen(subscriber) else { return EmptyDisposable }
            return FanOutMembership(key: key) { [core] key in
                core.unsubscribe(key)
            }
        }
    }

    /// Stores `value` as the one to replay and sends it to every current subscriber.
    ///
    /// - Parameter value: The value.
    @inlinable public func putNext(_ value: T) {
        self.core.publish(value)
    }
}
