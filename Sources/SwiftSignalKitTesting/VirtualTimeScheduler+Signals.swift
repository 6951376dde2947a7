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
    /// An event more than 100 years after the subscription (the longest delay a scheduler waits) is a
    /// precondition failure, as is every malformed diagram (see ``Marbles``), and so is a subscription
    /// whose last event would come after ``maximumTime``.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Seconds per character.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: A cold signal.
    public func signal<T: Sendable, E: Error>(
        marbles: String, values: [Character: T] = [:], error: E? = nil, frame: Double = 1,
        file: StaticString = #fileID, line: UInt = #line
    )
        -> Signal<T, E>
    {
        let events: [Recorded<T, E>] = Marbles.events(marbles, values: values, error: error, frame: frame, file: file, line: line)
        if let late = events.first(where: { $0.time > Self.maximumDelay }) {
            // A later one would be scheduled at 100 years, silently, and the signal would not play its own
            // diagram.
            misuse(
                "VirtualTimeScheduler.signal(marbles:): \(late.event) is \(late.time) s after the subscription in \"\(marbles)\", "
                    + "later than the longest delay a scheduler waits (100 years, \(Self.maximumDelay) s): frame \(frame) is too long",
                file: file, line: line)
        }
        let lastTime = events.last?.time ?? 0
        return Signal { subscriber in
            // In nanoseconds, as the scheduler keeps time: near the end a `Double` step is about 2 µs.
            let (_, overflow) = self.nanosecondsNow.addingReportingOverflow(Self.nanoseconds(lastTime))
            if overflow {
                // Its later events would all be scheduled at the end of virtual time, at one instant.
                misuse(
                    "VirtualTimeScheduler.signal(marbles:): \"\(marbles)\" subscribed at \(self.now) s ends \(lastTime) s later, "
                        + "after the end of virtual time (VirtualTimeScheduler.maximumTime, \(Self.maximumTime) s)")
            }
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
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: A cold signal.
    public func signal<T: Sendable>(
        marbles: String, values: [Character: T] = [:], frame: Double = 1, file: StaticString = #fileID, line: UInt = #line
    ) -> Signal<T, NoError> {
        return self.signal(marbles: marbles, values: values, error: nil, frame: frame, file: file, line: line)
    }
}
