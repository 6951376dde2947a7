import SwiftSignalKit

extension VirtualTimeScheduler {
    /// A cold signal that plays a marble diagram on virtual time, from each subscription.
    ///
    /// ```swift
    /// import SwiftSignalKit
    /// import SwiftSignalKitTesting
    ///
    /// struct TestError: Error {}
    ///
    /// let scheduler = VirtualTimeScheduler()
    /// let requests: Signal<Int, TestError> = scheduler.signal(marbles: "a--#", values: ["a": 1], error: TestError())
    /// ```
    ///
    /// Each subscription schedules the diagram's events relative to the time it subscribed: frame 0 is
    /// delivered at the next call that moves time. Disposing cancels the events not yet sent.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Seconds per character.
    /// - Returns: A cold signal.
    public func signal<T: Sendable, E: Error>(
        marbles: String, values: [Character: T] = [:], error: E? = nil, frame: Double = 1
    )
        -> Signal<T, E>
    {
        let events: [Recorded<T, E>] = Marbles.events(marbles, values: values, error: error, frame: frame)
        return Signal { subscriber in
            let scheduled = DisposableSet()
            for recorded in events {
                scheduled.add(
                    self.schedule(after: recorded.time) {
                        switch recorded.event {
                        case .next(let value):
                            subscriber.putNext(value)
                        case .error(let error):
                            subscriber.putError(error)
                        case .completed:
                            subscriber.putCompletion()
                        }
                    })
            }
            return scheduled
        }
    }

    /// A cold signal that cannot fail and plays a marble diagram on virtual time, from each subscription.
    ///
    /// ```swift
    /// let scheduler = VirtualTimeScheduler()
    /// let typing = scheduler.signal(marbles: "ab--c|", values: ["a": "h", "b": "he", "c": "hel"])
    /// ```
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-|"`; see ``Marbles``. `#` is a precondition failure.
    ///   - values: The value of each value character.
    ///   - frame: Seconds per character.
    /// - Returns: A cold signal.
    public func signal<T: Sendable>(marbles: String, values: [Character: T] = [:], frame: Double = 1) -> Signal<T, NoError> {
        return self.signal(marbles: marbles, values: values, error: nil, frame: frame)
    }
}
