import SwiftSignalKit

/// Subscribes to a signal and records its events with the virtual time at which each arrived.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// let source = scheduler.signal(marbles: "-a-b-|", values: ["a": 1, "b": 2], error: NoError?.none)
/// let recorder = SignalRecorder(source |> map { $0 * 10 }, scheduler: scheduler)
/// scheduler.run()
/// let mismatch = recorder.mismatch(marbles: "-a-b-|", values: ["a": 10, "b": 20])
/// assert(mismatch == nil, "\(mismatch!)")
/// ```
///
/// The recorder subscribes when it is made; marble diagrams compared with it start at that time.
/// Events may arrive on any thread.
public final class SignalRecorder<T: Sendable, E: Error>: Sendable {
    private let recorded = LockedState<[Recorded<T, E>]>([])
    private let subscription: Disposable
    /// The virtual time at which the recorder subscribed.
    public let subscribedAt: Double

    /// Subscribes to `signal` and records what it sends, stamped with `scheduler`'s time.
    ///
    /// - Parameters:
    ///   - signal: The signal to record.
    ///   - scheduler: The scheduler whose time stamps the events.
    public init(_ signal: Signal<T, E>, scheduler: VirtualTimeScheduler) {
        let recorded = self.recorded
        self.subscribedAt = scheduler.now
        self.subscription = signal.start(
            next: { value in
                let time = scheduler.now
                recorded.withLock { $0.append(.next(value, at: time)) }
            },
            error: { error in
                let time = scheduler.now
                recorded.withLock { $0.append(.error(error, at: time)) }
            },
            completed: {
                let time = scheduler.now
                recorded.withLock { $0.append(.completed(at: time)) }
            })
    }

    /// The events so far, in order, with their virtual times.
    public var events: [Recorded<T, E>] {
        return self.recorded.withLock { $0 }
    }

    /// The values so far, in order.
    public var values: [T] {
        return self.events.compactMap { recorded in
            if case .next(let value) = recorded.event { return value }
            return nil
        }
    }

    /// Disposes the subscription; events sent afterwards are not recorded.
    public func dispose() {
        self.subscription.dispose()
    }
}

extension SignalRecorder where T: Equatable, E: Equatable {
    /// Compares the recording with `expected`; nil when they are equal, or a readable difference.
    ///
    /// Times are absolute virtual times here; they are equal when they differ by less than a nanosecond
    /// (or, past about 97 days of virtual time, by a few units of a `Double`'s precision: see
    /// ``Recorded``'s `==`).
    ///
    /// - Parameter expected: The events the test expects, in order.
    /// - Returns: nil, or the difference, whose description lists both sides and marks each mismatch.
    public func mismatch(_ expected: [Recorded<T, E>]) -> RecordingMismatch? {
        return RecordingMismatch.between(self.events, expected)
    }

    /// Compares the recording with a marble diagram whose frame 0 is the time the recorder subscribed.
    ///
    /// - Parameters:
    ///   - marbles: The expected events, such as `"-a-b-|"`; see ``Marbles``.
    ///   - values: The value of each value character.
    ///   - error: The error of `#`.
    ///   - frame: Seconds per character.
    ///   - file: The file a precondition failure about the diagram names; the caller's by default.
    ///   - line: The line a precondition failure about the diagram names; the caller's by default.
    /// - Returns: nil, or the difference, with the recording drawn as a diagram when it can be.
    public func mismatch(
        marbles: String, values: [Character: T] = [:], error: E? = nil, frame: Double = 1,
        file: StaticString = #fileID, line: UInt = #line
    ) -> RecordingMismatch? {
        return RecordingMismatch.between(
            self.events, marbles: marbles, values: values, error: error, frame: frame, start: self.subscribedAt, file: file,
            line: line)
    }
}

extension RecordingMismatch {
    /// nil when `actual` is `expected`, else their difference.
    static func between<T: Equatable, E: Equatable>(_ actual: [Recorded<T, E>], _ expected: [Recorded<T, E>]) -> RecordingMismatch? {
        guard actual != expected else { return nil }
        return RecordingMismatch(expected: expected, actual: actual, diagrams: nil)
    }

    /// nil when `actual` is the diagram `marbles`, whose frame 0 is `start`, else their difference, with
    /// `actual` drawn as a diagram when it can be.
    static func between<T: Equatable, E: Equatable>(
        _ actual: [Recorded<T, E>], marbles: String, values: [Character: T], error: E?, frame: Double, start: Double,
        file: StaticString, line: UInt
    ) -> RecordingMismatch? {
        let expected: [Recorded<T, E>] = Marbles.events(
            marbles, values: values, error: error, frame: frame, start: start, file: file, line: line)
        guard actual != expected else { return nil }
        let drawn = Marbles.diagram(actual, values: values, frame: frame, start: start)
        return RecordingMismatch(
            expected: expected, actual: actual,
            diagrams: (
                expected: marbles,
                actual: drawn
                    ?? "(not drawn: an event falls between frames, before frame 0, or 10,000 or more frames after it; see the list)"
            ))
    }
}

/// How a recording differs from what a test expected, as text for the test's failure message.
public struct RecordingMismatch: Sendable, Equatable, CustomStringConvertible {
    /// The expected events, one line each.
    public let expected: [String]
    /// The recorded events, one line each.
    public let actual: [String]
    /// Both sides as marble diagrams, when the expectation was one.
    public let diagrams: (expected: String, actual: String)?
    /// For each line, whether the two sides differ (compared as events, not as text).
    let differs: [Bool]

    init<T: Equatable, E: Equatable>(expected: [Recorded<T, E>], actual: [Recorded<T, E>], diagrams: (expected: String, actual: String)?) {
        self.expected = expected.map(\.description)
        self.actual = actual.map(\.description)
        self.diagrams = diagrams
        self.differs = (0..<Swift.max(expected.count, actual.count)).map { index in
            index >= expected.count || index >= actual.count || expected[index] != actual[index]
        }
    }

    /// Whether both describe the same difference.
    public static func == (lhs: RecordingMismatch, rhs: RecordingMismatch) -> Bool {
        return lhs.expected == rhs.expected && lhs.actual == rhs.actual && lhs.diagrams?.expected == rhs.diagrams?.expected
            && lhs.diagrams?.actual == rhs.diagrams?.actual
    }

    /// Both sides line by line, each differing line marked with `✗`; the diagrams first when present.
    public var description: String {
        var lines: [String] = ["Recorded events differ from the expected ones:"]
        if let diagrams = self.diagrams {
            lines.append("  expected: \(diagrams.expected)")
            lines.append("  actual:   \(diagrams.actual)")
        }
        let width = Swift.max(8, self.expected.map(\.count).max() ?? 0)
        lines.append("    " + "expected".padding(width) + "   actual")
        for index in 0..<Swift.max(self.expected.count, self.actual.count) {
            let expected = index < self.expected.count ? self.expected[index] : "—"
            let actual = index < self.actual.count ? self.actual[index] : "—"
            let marker = self.differs[index] ? "✗ " : "  "
            lines.append("  " + marker + expected.padding(width) + "   " + actual)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        return self.count >= width ? self : self + String(repeating: " ", count: width - self.count)
    }
}
