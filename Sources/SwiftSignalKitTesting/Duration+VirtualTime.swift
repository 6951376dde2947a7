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
    /// The time is taken in whole nanoseconds, rounded to the nearest, as a sleep on ``clock`` takes its
    /// deadline, so `advance(to: deadline.offset)` reaches a sleeper's deadline exactly however late it
    /// is (the `Double` form cannot hold every nanosecond past about 104 days).
    ///
    /// - Parameter time: The new time, measured from virtual time zero: not earlier than ``now``, and at
    ///   most ``maximumTime``.
    public func advance(to time: Duration) {
        let nanoseconds = VirtualClock.nanoseconds(time)
        let inRange = time >= .zero && time <= .nanoseconds(Int64.max)
        self.advance(toNanoseconds: inRange ? nanoseconds : -1, describedAs: "\(time.secondsForSignals)")
    }

    /// A cold signal that plays a marble diagram on virtual time, with `frame` per character: the
    /// `Duration` form of ``signal(marbles:values:error:frame:file:line:)-(_,_,_,Double,_,_)``.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-#"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Time per character; positive.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: A cold signal.
    public func signal<T: Sendable, E: Error>(
        marbles: String, values: [Character: T] = [:], error: E?, frame: Duration, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Signal<T, E> {
        return self.signal(marbles: marbles, values: values, error: error, frame: frame.secondsForSignals, file: file, line: line)
    }

    /// A cold signal that cannot fail and plays a marble diagram on virtual time, with `frame` per
    /// character: the `Duration` form of ``signal(marbles:values:frame:file:line:)-(_,_,Double,_,_)``.
    ///
    /// - Parameters:
    ///   - marbles: The events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - frame: Time per character; positive.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: A cold signal.
    public func signal<T: Sendable>(
        marbles: String, values: [Character: T] = [:], frame: Duration, file: StaticString = #fileID, line: UInt = #line
    ) -> Signal<T, NoError> {
        return self.signal(marbles: marbles, values: values, frame: frame.secondsForSignals, file: file, line: line)
    }
}

extension SignalRecorder where T: Equatable, E: Equatable {
    /// Compares the recording with a marble diagram of `frame` per character: the `Duration` form of
    /// ``mismatch(marbles:values:error:frame:file:line:)-(_,_,_,Double,_,_)``.
    ///
    /// - Parameters:
    ///   - marbles: The expected events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Time per character; positive.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: nil, or the difference.
    public func mismatch(
        marbles: String, values: [Character: T] = [:], error: E? = nil, frame: Duration, file: StaticString = #fileID,
        line: UInt = #line
    ) -> RecordingMismatch? {
        return self.mismatch(marbles: marbles, values: values, error: error, frame: frame.secondsForSignals, file: file, line: line)
    }
}

extension SequenceRecorder where Element: Equatable, Failure: Equatable {
    /// Compares the recording with a marble diagram of `frame` per character: the `Duration` form of
    /// ``mismatch(marbles:values:error:frame:file:line:)-(_,_,_,Double,_,_)``.
    ///
    /// - Parameters:
    ///   - marbles: The expected events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The element of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Time per character; positive.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: nil, or the difference.
    public func mismatch(
        marbles: String, values: [Character: Element] = [:], error: Failure? = nil, frame: Duration,
        file: StaticString = #fileID, line: UInt = #line
    ) -> RecordingMismatch? {
        return self.mismatch(marbles: marbles, values: values, error: error, frame: frame.secondsForSignals, file: file, line: line)
    }
}

extension Marbles {
    /// The events a marble diagram describes, with `frame` per character: the `Duration` form of
    /// ``events(_:values:error:frame:start:file:line:)-(_,_,_,Double,Double,_,_)``.
    ///
    /// - Parameters:
    ///   - diagram: The marble string, such as `"-a-b-|"`.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`; required when the diagram has one.
    ///   - frame: Time per character; positive.
    ///   - start: The time of frame 0.
    ///   - file: The file a precondition failure names; the caller's by default.
    ///   - line: The line a precondition failure names; the caller's by default.
    /// - Returns: The events, in order, with their times in seconds.
    public static func events<T, E: Error>(
        _ diagram: String, values: [Character: T] = [:], error: E? = nil, frame: Duration, start: Duration = .zero,
        file: StaticString = #fileID, line: UInt = #line
    ) -> [Recorded<T, E>] {
        return self.events(
            diagram, values: values, error: error, frame: frame.secondsForSignals, start: start.secondsForSignals, file: file,
            line: line)
    }

    /// A recording drawn as a marble diagram with `frame` per character: the `Duration` form of
    /// ``diagram(_:values:frame:start:)-(_,_,Double,Double)``.
    ///
    /// - Parameters:
    ///   - events: The events.
    ///   - values: The characters of the values.
    ///   - frame: Time per character; positive.
    ///   - start: The time of frame 0.
    /// - Returns: The diagram, or nil when it cannot be drawn (see the `Double` form).
    public static func diagram<T: Equatable, E: Error>(
        _ events: [Recorded<T, E>], values: [Character: T], frame: Duration, start: Duration = .zero
    ) -> String? {
        return self.diagram(events, values: values, frame: frame.secondsForSignals, start: start.secondsForSignals)
    }
}
