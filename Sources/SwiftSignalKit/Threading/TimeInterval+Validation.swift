import Dispatch

/// How long to wait before scheduled work runs, decided once from the seconds a caller passed.
@usableFromInline enum Wait: Equatable, Sendable {
    /// Run after this many seconds: finite, from 0 to ``TimeIntervalValidation/maximumSeconds``.
    case seconds(Double)
    /// Never run.
    case never
}

/// The outcome of checking a number of seconds: the wait to use, or why the value is refused.
enum WaitDecision: Equatable, Sendable {
    case wait(Wait)
    /// The value has no sensible reading; the message names the API, the argument and the value.
    case refuse(String)
}

/// Turns the seconds callers pass to timers, `Queue.after` and the timing operators into waits that
/// Dispatch accepts, in one place.
///
/// Dispatch traps on some values: a repeating timer source converts its interval to `UInt64`
/// nanoseconds, so a negative or NaN interval, or one of 2^64 ns (about 584 years, e.g. `1e11`) or more,
/// stops the process with no message. Deadlines do not trap (`DispatchTime + Double` saturates to
/// "forever" past 2^63 ns of uptime), but NaN silently becomes "forever".
///
/// | Value | One-shot wait (``Use/delay``) | Interval (``Use/interval``) |
/// | --- | --- | --- |
/// | NaN | refused | refused |
/// | negative, `-infinity` | 0: the deadline has passed, run as soon as possible | refused |
/// | 0 | as soon as possible | back to back, as often as the queue runs it |
/// | above ``maximumSeconds`` | ``maximumSeconds`` | ``maximumSeconds`` |
/// | `+infinity` | never | never |
///
/// A negative one-shot wait is accepted because it is what `deadline - now` gives once the deadline has
/// passed; the original SwiftSignalKit (through Dispatch) ran such work at once, and client code relies
/// on it.
@usableFromInline enum TimeIntervalValidation {
    /// The longest wait: 100 years of 365 days. Far inside both Dispatch limits (2^63 ns for deadlines,
    /// 2^64 ns for repeating intervals), and longer than any process waits in practice.
    static let maximumSeconds: Double = 100 * 365 * 24 * 60 * 60

    /// What the seconds are for.
    @usableFromInline enum Use: Sendable {
        /// A one-shot wait: how long until the work runs.
        case delay
        /// A length of time that cannot be negative: the period of a repeating timer (also its first
        /// wait), or a retry's growth step.
        case interval
        /// An upper bound on waits, which cannot be negative; `+infinity` means no bound.
        case cap
    }

    /// Decides what `seconds` means, without trapping.
    ///
    /// - Parameters:
    ///   - seconds: The value the caller passed.
    ///   - use: What the value is for.
    ///   - api: The public API that received it, for the message, e.g. `"Queue.after(_:_:)"`.
    ///   - argument: The argument's name in that API, for the message.
    /// - Returns: The wait, or the message of a refusal.
    static func decide(_ seconds: Double, as use: Use, api: String, argument: String) -> WaitDecision {
        if seconds.isNaN {
            return .refuse(self.message(for: seconds, as: use, api: api, argument: argument))
        }
        if seconds < 0 {
            switch use {
            case .delay:
                return .wait(.seconds(0))
            case .interval, .cap:
                return .refuse(self.message(for: seconds, as: use, api: api, argument: argument))
            }
        }
        if seconds == .infinity {
            return .wait(.never)
        }
        return .wait(.seconds(Swift.min(seconds, self.maximumSeconds)))
    }

    /// The wait for `seconds`; a refused value is a precondition failure.
    ///
    /// - Parameters:
    ///   - seconds: The value the caller passed.
    ///   - use: What the value is for.
    ///   - api: The public API that received it.
    ///   - argument: The argument's name in that API.
    /// - Returns: The wait.
    @usableFromInline static func wait(_ seconds: Double, as use: Use, api: String, argument: String) -> Wait {
        switch self.decide(seconds, as: use, api: api, argument: argument) {
        case .wait(let wait):
            return wait
        case .refuse(let message):
            misuse(message)
        }
    }

    private static func message(for seconds: Double, as use: Use, api: String, argument: String) -> String {
        switch use {
        case .delay:
            return "\(api): \(argument) must be a number of seconds (negative means now, .infinity means never), got \(seconds)"
        case .interval:
            return "\(api): \(argument) must be a number of seconds ≥ 0 (.infinity means never), got \(seconds)"
        case .cap:
            return "\(api): \(argument) must be a number of seconds ≥ 0 (.infinity means no cap), got \(seconds)"
        }
    }
}
