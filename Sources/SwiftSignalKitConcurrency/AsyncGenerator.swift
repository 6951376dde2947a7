import SwiftSignalKit

/// What the body of an async signal sends its values with (see `Signal.init(priority:_:)`).
///
/// ```swift
/// let rows = Signal<Row, DBError> { send in
///     for try await row in db.rows() { send(row) }
/// }
/// ```
///
/// A value sent after the subscription was disposed, or after the body returned, is dropped.
///
/// A sender belongs to the body's task and is not `Sendable`: values go to the subscriber one at a
/// time, from that task. To send what child tasks compute, collect their results in the body (for
/// example with `for try await` over a task group) and send them from there.
public struct SignalSender<T, E> {
    @usableFromInline let subscriber: Subscriber<T, E>

    init(subscriber: Subscriber<T, E>) {
        self.subscriber = subscriber
    }

    /// Sends `value` to the subscriber, on the calling task.
    ///
    /// - Parameter value: The value.
    @inlinable public func callAsFunction(_ value: T) {
        self.subscriber.putNext(value)
    }
}

/// A sender is used by the body's task alone, so that the subscriber is never called from two threads
/// at once, and no value can race the completion that follows the body's return.
@available(*, unavailable)
extension SignalSender: Sendable {}

extension Signal where T: Sendable, E: Error {
    /// A signal whose values come from async code: `body` runs in a task started at each subscription,
    /// sends any number of values, and ends the signal when it returns or throws.
    ///
    /// ```swift
    /// let rows = Signal<Row, DBError> { send in
    ///     for try await row in db.rows() { send(row) }
    /// }
    /// ```
    ///
    /// - The signal completes when `body` returns and fails with the error it throws (typed). Name
    ///   the error type in a closure that throws, `{ (send) throws(DBError) in ... }`: Swift 6.3 infers
    ///   `throws(any Error)` for a closure that uses `try` without it, which fits only `E == any Error`.
    /// - Disposing the subscription cancels the task; nothing `body` sends after `dispose()` returned is
    ///   delivered, even when it ignores cancellation.
    /// - The task takes `priority`, or else the priority of the task that started the subscription, and
    ///   sees that task's task-local values.
    ///
    /// - Parameters:
    ///   - priority: The priority of the task.
    ///   - body: The async work; sends values with the `SignalSender` it is given.
    public convenience init(
        priority: TaskPriority? = nil, _ body: @escaping @Sendable (_ send: SignalSender<T, E>) async throws(E) -> Void
    ) {
        self.init { subscriber in
            let task = Task(priority: priority) {
                do throws(E) {
                    try await body(SignalSender(subscriber: subscriber))
                    subscriber.putCompletion()
                } catch {
                    subscriber.putError(error)
                }
            }
            return ActionDisposable { task.cancel() }
        }
    }
}
