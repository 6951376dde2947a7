import SwiftSignalKit

/// What the body of an async signal sends its values with (see `Signal.init(priority:_:)`).
///
/// ```swift
/// let rows = Signal<Row, any Error> { send in
///     for try await row in db.rows() { send(row) }
/// }
/// ```
///
/// A value sent after the subscription was disposed, or after the body returned, is dropped.
///
/// `send(value)` never waits. `await send.waitingForRoom(value)` waits first while a consumer that paces
/// its producers has no room (a `for await` loop over `values(bufferingPolicy: .bounded(n))`), so a
/// producer that reads a database or a file reads no faster than its consumer:
///
/// ```swift
/// let rows = Signal<Row, any Error> { send in
///     for try await row in db.rows() { await send.waitingForRoom(row) }
/// }
/// for try await row in rows.values(bufferingPolicy: .bounded(64)) { try await write(row) }
/// ```
///
/// A sender belongs to the body's task and is not `Sendable`: values go to the subscriber one at a
/// time, from that task. To send what child tasks compute, collect their results in the body (for
/// example with `for try await` over a task group) and send them from there.
///
/// The body is given its sender with `sending`, so the body may be isolated to an actor, and may hand
/// the sender on to an actor's method that takes it as `sending`:
///
/// ```swift
/// @MainActor final class Screen {
///     var shown: [String] = []
///
///     func lines(_ names: [String]) -> Signal<String, NoError> {
///         Signal { @MainActor send in
///             for name in names {
///                 self.shown.append(name)
///                 await send.waitingForRoom(name)
///             }
///         }
///     }
/// }
/// ```
///
/// The compiler also accepts handing the sender to a task that outlives the body
/// (`Task.detached { send(value) }`), which gives up the one-at-a-time rule: a value that task sends
/// while the body returns can reach its callback at the same time as the completion that follows,
/// from another thread. Await such a task before the body returns.
public struct SignalSender<T, E> {
    @usableFromInline let subscriber: Subscriber<T, E>
    /// The room of the consumer that paces this subscription, found once when the body starts (the
    /// chain below the subscriber is complete by then); nil when none does.
    @usableFromInline let demand: (any SignalDemand)?

    init(subscriber: Subscriber<T, E>) {
        self.subscriber = subscriber
        self.demand = subscriber.demand
    }

    /// Sends `value` to the subscriber, on the calling task. Never waits.
    ///
    /// - Parameter value: The value.
    @inlinable public func callAsFunction(_ value: T) {
        self.subscriber.putNext(value)
    }

    /// Waits until the consumer has room for `value`, then sends it.
    ///
    /// It runs in its caller's isolation (`nonisolated(nonsending)`): in a body isolated to an actor,
    /// the value is sent from that actor, as one sent with `send(value)` is.
    ///
    /// It waits only when a consumer paces this subscription: a `for await` loop over
    /// `values(bufferingPolicy: .bounded(n))` with `n` values it has not taken yet,
    /// reached through operators that hand each value on synchronously (`map`, `filter`, `take`, ...;
    /// the Flow control article lists them). Otherwise it sends at once, as `send(value)` does.
    ///
    /// It returns as soon as there is room, or when the task is cancelled or the consumer has gone: the
    /// value is then sent and dropped like any value sent after the subscription ended, so a loop of
    /// `await send.waitingForRoom(...)` ends with the task's cancellation if it checks for it.
    ///
    /// - Parameter value: The value.
    @inlinable nonisolated(nonsending) public func waitingForRoom(_ value: T) async {
        if let demand = self.demand {
            _ = await demand.waitForRoom()
        }
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
    /// let rows = Signal<Row, any Error> { send in
    ///     for try await row in db.rows() { send(row) }
    /// }
    /// ```
    ///
    /// - The signal completes when `body` returns and fails with the error it throws (typed). Name
    ///   the error type in a closure that throws, `{ (send) throws(DBError) in ... }`: Swift 6.3 infers
    ///   `throws(any Error)` for a closure that uses `try` without it, which fits only `E == any Error`.
    /// - Disposing the subscription cancels the task; nothing `body` sends after `dispose()` returned is
    ///   delivered, even when it ignores cancellation. A subscription disposed before its task first
    ///   runs never calls `body`; one disposed while the task starts may still call it just after
    ///   `dispose()` returns, with `Task.isCancelled` true: check it before a side effect that must not
    ///   happen after the disposal (sending a request, say). A body isolated to an actor is reached
    ///   after a hop to it: a disposal while the task waits for that actor does not keep it from
    ///   starting (its values are dropped).
    /// - The task takes `priority`, or else the priority of the task that started the subscription, and
    ///   sees that task's task-local values.
    /// - `body` may be isolated to an actor: write `@MainActor send in` (a closure passed here is not
    ///   isolated to the code around it, even in a module whose default isolation is the main actor).
    ///   The task then runs it there, and it sends from there. Write `@MainActor send async in` when the
    ///   body has no `await`: Swift 6.3 refuses such a closure otherwise, with a message about
    ///   `Sendable` parameter types (the sender is not `Sendable`; the `async` is what it needs).
    ///
    /// - Parameters:
    ///   - priority: The priority of the task.
    ///   - body: The async work; sends values with the `SignalSender` it is given.
    public convenience init(
        priority: TaskPriority? = nil, _ body: @escaping @Sendable (_ send: sending SignalSender<T, E>) async throws(E) -> Void
    ) {
        self.init { subscriber in
            let task = TimelineExecutor.startTask(priority: priority) {
                // Disposed before the task ran: nothing `body` sends would be delivered; it is not started.
                // Asked once the sender is made (it reads the demand of the subscribers below), just
                // before the call, to narrow the window in which a racing `dispose()` returns before the
                // body starts (a probe: 28 to 255 such starts in 3,000 in a debug build, 0 to 44 after).
                let send = SignalSender(subscriber: subscriber)
                if Task.isCancelled { return }
                do throws(E) {
                    try await body(send)
                    subscriber.putCompletion()
                } catch {
                    subscriber.putError(error)
                }
            }
            return ActionDisposable { task.cancel() }
        }
    }
}
