/// An event of a signal, as a value a test can compare.
public enum RecordedEvent<T, E: Error> {
    /// A value.
    case next(T)
    /// The failure that ended the signal.
    case error(E)
    /// The completion that ended the signal.
    case completed
}

extension RecordedEvent: Sendable where T: Sendable {}
extension RecordedEvent: Equatable where T: Equatable, E: Equatable {}

extension RecordedEvent: CustomStringConvertible {
    /// `next(value)`, `error(error)` or `completed`.
    public var description: String {
        switch self {
        case .next(let value):
            return "next(\(value))"
        case .error(let error):
            return "error(\(error))"
        case .completed:
            return "completed"
        }
    }
}

/// An event and the virtual time, in seconds, at which it happened.
public struct Recorded<T, E: Error> {
    /// When the event happened (for expectations made from marbles: seconds after the subscription).
    public var time: Double
    /// The event.
    public var event: RecordedEvent<T, E>

    /// Creates a recorded event.
    ///
    /// - Parameters:
    ///   - time: The virtual time, in seconds.
    ///   - event: The event.
    public init(time: Double, event: RecordedEvent<T, E>) {
        self.time = time
        self.event = event
    }

    /// A value at `time`.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - time: The virtual time, in seconds.
    /// - Returns: The recorded event.
    public static func next(_ value: T, at time: Double) -> Recorded {
        return Recorded(time: time, event: .next(value))
    }

    /// A failure at `time`.
    ///
    /// - Parameters:
    ///   - error: The error.
    ///   - time: The virtual time, in seconds.
    /// - Returns: The recorded event.
    public static func error(_ error: E, at time: Double) -> Recorded {
        return Recorded(time: time, event: .error(error))
    }

    /// A completion at `time`.
    ///
    /// - Parameter time: The virtual time, in seconds.
    /// - Returns: The recorded event.
    public static func completed(at time: Double) -> Recorded {
        return Recorded(time: time, event: .completed)
    }
}

extension Recorded: Sendable where T: Sendable {}

extension Recorded: Equatable where T: Equatable, E: Equatable {
    /// Equal events at times that differ by less than a nanosecond: sums of fractional seconds are not
    /// exact in binary. Past 2^23 seconds (about 97 days) of virtual time a `Double` no longer holds
    /// every nanosecond, and the same instant computed two ways (a marble diagram's `start + 3 * frame`,
    /// the scheduler's nanoseconds read back as seconds) can differ by a few units of its precision:
    /// there, times within four such units (about 60 ns at 10^8 seconds) are equal too.
    public static func == (lhs: Recorded, rhs: Recorded) -> Bool {
        return recordedTimesAreEqual(lhs.time, rhs.time) && lhs.event == rhs.event
    }
}

extension Recorded: CustomStringConvertible {
    /// The time and the event, such as `2.5 next(3)`.
    public var description: String {
        return "\(formatTime(self.time)) \(self.event)"
    }
}

/// Whether two recorded times stand for the same instant (see `Recorded.==`): within a nanosecond, or
/// within four units in the last place of the larger, where those are longer than a nanosecond.
func recordedTimesAreEqual(_ lhs: Double, _ rhs: Double) -> Bool {
    let difference = abs(lhs - rhs)
    return difference < 1e-9 || difference <= 4 * max(abs(lhs), abs(rhs)).ulp
}

/// A time as a short decimal: `3`, `2.5`, `0.001`.
func formatTime(_ time: Double) -> String {
    let rounded = (time * 1e9).rounded() / 1e9
    if rounded == rounded.rounded(), abs(rounded) < 1e15 {
        return String(Int64(rounded))
    }
    return String(rounded)
}
