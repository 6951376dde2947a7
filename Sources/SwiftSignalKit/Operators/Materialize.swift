/// One event of a signal, as a value.
///
/// The case names follow the original library.
public enum SignalEvent<T, E> {
    /// A value.
    case Next(T)
    /// A failure.
    case Error(E)
    /// Completion.
    case Completion
}

extension SignalEvent: Sendable where T: Sendable, E: Sendable {}

/// Turns every event of `signal` into a value: values, then the error or completion as a last value.
///
/// > Note: The names `dematerialize` and ``materialize(signal:)`` are swapped compared with other reactive
/// > libraries; they are kept as in the original SwiftSignalKit so existing code keeps its meaning.
///
/// - Parameter signal: The source.
/// - Returns: A signal of events that completes after the source's terminal event.
@inlinable public func dematerialize<T, E>(signal: Signal<T, E>) -> Signal<SignalEvent<T, E>, NoError> {
    return Signal { subscriber in
        // Each value goes on at once, on the sending thread: a producer above may wait for the room
        // of the consumer below.
        return signal.subscribe(
            Linked(to: subscriber, passingDemand: true),
            next: { value in
                subscriber.putNext(.Next(value))
            },
            error: { error in
                subscriber.putNext(.Error(error))
                subscriber.putCompletion()
            },
            completed: {
                subscriber.putNext(.Completion)
                subscriber.putCompletion()
            })
    }
}

/// Turns a signal of events back into a signal: the inverse of ``dematerialize(signal:)``.
///
/// - Parameter signal: A signal of events.
/// - Returns: The signal those events describe.
@inlinable public func materialize<T, E>(signal: Signal<SignalEvent<T, E>, NoError>) -> Signal<T, E> {
    return Signal { subscriber in
        // Each event goes on at once, on the sending thread, as a value or a terminal event: a producer
        // above may wait for the room of the consumer below.
        return signal.subscribe(
            Linked(to: subscriber, passingDemand: true),
            next: { event in
                switch event {
                case .Next(let value):
                    subscriber.putNext(value)
                case .Error(let error):
                    subscriber.putError(error)
                case .Completion:
                    subscriber.putCompletion()
                }
            },
            completed: {
                subscriber.putCompletion()
            })
    }
}
