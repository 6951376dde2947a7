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
    /// exact in binary.
    public static func == (lhs: Recorded, rhs: Recorded) -> Bool {
        return abs(lhs.time - rhs.time) < 1e-9 && lhs.event == rhs.event
    }
}

extension Recorded: CustomStringConvertible {
    /// The time and the event, such as `2.5 next(3)`.
    public var description: String {
        return "\(formatTime(self.time)) \(self.event)"
    }
}

/// A time as a short decimal: `3`, `2.5`, `0.001`.
func formatTime(_ time: Double) -> String {
    let rounded = (time * 1e9).rounded() / 1e9
    if rounded == rounded.rounded(), abs(rounded) < 1e15 {
        return String(Int64(rounded))
    }
    return String(rounded)
}
