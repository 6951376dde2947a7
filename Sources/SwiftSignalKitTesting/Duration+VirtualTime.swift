import SwiftSignalKit

// The `Duration` forms of the testing module's seconds, as in the core (see `Duration+Signals.swift`
// there): each converts and calls its `Double` form, so both share every rule and message. Recorded times
// (`Recorded.time`, `now`) stay seconds as `Double`, the unit a recording is compared in.

extension VirtualTimeScheduler {
    /// Moves virtual time forward by `duration`, running every action due until then, in order: the
    /// `Duration` form of ``advance(by:)-(Double)``.
    ///
    /// ```swift
    /// import SwiftSignalKitTesting
    ///
    /// let scheduler = VirtualTimeScheduler()
    /// scheduler.advance(by: .milliseconds(300))
    /// ```
    ///
    /// - Parameter duration: How far to move; zero runs what is due now. Negative durations, and moves
    ///   past ``maximumTime``, are precondition failures.
    public func advance(by duration: Duration) {
        self.advance(by: duration.secondsForSignals)
    }

    /// Moves virtual time forward to `time` after the start of virtual time: the `Duration` form of
    /// ``advance(to:)-(Double)``.
    ///
    /// - Parameter time: The new time, measured from virtual time zero: not earlier than ``now``.
    public func advance(to time: Duration) {
        self.advance(to: time.secondsForSignals)
    }

    /// A cold signal that plays a marble diagram on virtual time, with `frame` per character: the
    /// `Duration` form of ``signal(marbles:values:error:frame:)-(_,_,_,Double)``.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-#"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Time per character; positive.
    /// - Returns: A cold signal.
    public func signal<T: Sendable, E: Error>(
        marbles: String, values: [Character: T] = [:], error: E?, frame: Duration
    ) -> Signal<T, E> {
        return self.signal(marbles: marbles, values: values, error: error, frame: frame.secondsForSignals)
    }

    /// A cold signal that cannot fail and plays a marble diagram on virtual time, with `frame` per
    /// character: the `Duration` form of ``signal(marbles:values:frame:)-(_,_,Double)``.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - frame: Time per character; positive.
    /// - Returns: A cold signal.
    public func signal<T: Sendable>(marbles: String, values: [Character: T] = [:], frame: Duration) -> Signal<T, NoError> {
        return self.signal(marbles: marbles, values: values, frame: frame.secondsForSignals)
    }
}

extension SignalRecorder where T: Equatable, E: Equatable {
    /// Compares the recording with a marble diagram of `frame` per character: the `Duration` form of
    /// ``mismatch(marbles:values:error:frame:)-(_,_,_,Double)``.
    ///
    /// - Parameters:
    ///   - marbles: The expected events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Time per character; positive.
    /// - Returns: nil, or the difference.
    public func mismatch(marbles: String, values: [Character: T] = [:], error: E? = nil, frame: Duration) -> RecordingMismatch? {
        return self.mismatch(marbles: marbles, values: values, error: error, frame: frame.secondsForSignals)
    }
}
