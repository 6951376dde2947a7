import SwiftSignalKit

extension Signal where T: Sendable, E: Error {
    /// A signal of the elements of an `AsyncSequence`.
    ///
    /// ```swift
    /// let lines = Signal(file.lines)   // an AsyncSequence of String
    /// let disposable = lines.start(next: { print($0) })
    /// ```
    ///
    /// Each `start` runs one task that iterates the sequence, sending each element, then the completion
    /// or the sequence's typed failure. `dispose()` cancels that task; no element the task sends after
    /// `dispose()` returns reaches the callback. One it was already sending when `dispose()` ran may
    /// still enter the callback just after, as with every subscription (`Subscriber`, and "What a
    /// disposal guarantees" in SwiftSignalKit's Threading and disposal article, which says how to tear
    /// down what the callback uses).
    ///
    /// The task makes the sequence's iterator when it first runs, after `start` has returned. A sequence
    /// that subscribes to a hot source when its iterator is made misses what the source sends before
    /// then. A signal's `values` should not be wrapped at all: its first iterator takes the
    /// subscription made with the sequence, so the first `start` gets what was sent since; each later
    /// one subscribes when its task runs. Use the signal itself (`pipe.signal()`, not
    /// `Signal(pipe.values)`).
    ///
    /// The task pulls the next element only when the consumer has room for it, if a consumer paces this
    /// subscription (a `for await` loop over `values(bufferingPolicy: .bounded(n))` below operators that
    /// hand values on synchronously): a slow loop then reads the sequence no faster than it takes the
    /// values. Otherwise it pulls as fast as the sequence gives.
    ///
    /// When the subscription ends (disposed, or `first()`/`get()`/`take(n)` took its last value through
    /// operators that hand values on synchronously, such as `map`, `filter` or `skip`), or the loop that
    /// paces it has ended, the task stops at once, without waiting for the disposal that cancels it (past
    /// a hop or a buffer, such as `deliverOn` or `combineLatest`, it stops when that disposal lands): it calls the iterator's `next()` once more, in its cancelled task, and drops what it returns: that
    /// call is how a sequence learns its iteration ended (an `AsyncStream` runs its `onTermination`). A
    /// sequence that ignores cancellation hands over one element there, which nobody sees: a shared
    /// iterator, or an `AsyncStream` read again later, has lost it.
    ///
    /// - Parameters:
    ///   - sequence: The sequence; iterated once per subscription.
    ///   - priority: The priority of the iterating task.
    @inlinable public convenience init<S: AsyncSequence & Sendable>(_ sequence: S, priority: TaskPriority? = nil)
    where S.Element == T, S.Failure == E {
        self.init { subscriber in
            // Found here, where the chain below the subscriber is complete.
            let demand = subscriber.demand
            let task = TimelineExecutor.startTask(priority: priority) {
                do throws(E) {
                    var elements = sequence.makeAsyncIterator()
                    while true {
                        // Room first, then the pull: the sequence is not read ahead of the consumer.
                        if let demand, !(await demand.waitForRoom()) {
                            // The consumer has gone (its loop ended), and the disposal that cancels this
                            // task is on its way: pulling on until it lands read elements nobody takes
                            // (up to a dozen in a release build). The task ends as a disposed one does,
                            // cancelled, with the one pull that tells the sequence.
                            withUnsafeCurrentTask { $0?.cancel() }
                            _ = try? await elements.next(isolation: nil)
                            return
                        }
                        // Pulled even once cancelled: a cancelled task's `next()` is how a sequence learns
                        // that its iteration ended (an `AsyncStream` then runs its `onTermination`, and its
                        // producer stops). Returning without it left such a producer running for ever.
                        let pullStartedCancelled = Task.isCancelled
                        guard let element = try await elements.next(isolation: nil) else { break }
                        if Task.isCancelled {
                            // Disposed while the pull ran, or just after it gave this element (a sequence
                            // that works after each element of the stream below it): that pull began
                            // before the cancellation, so one more tells the sequence. Its result, and
                            // this element, are dropped.
                            if !pullStartedCancelled { _ = try? await elements.next(isolation: nil) }
                            return
                        }
                        subscriber.putNext(element)
                        if subscriber.isTerminated {
                            // That was the last value the chain takes (`get()`, `first()`, `take(n)`
                            // below, through operators that hand values on synchronously), or it was
                            // disposed: the disposal that
                            // cancels this task may land much later (the first value can arrive before
                            // `start` has stored it), and pulling on until then read elements nobody
                            // takes (2,219 in a release build under load). A lock round trip per
                            // operator below, per element. The task ends as a disposed one does, with
                            // the one pull that tells the sequence.
                            withUnsafeCurrentTask { $0?.cancel() }
                            _ = try? await elements.next(isolation: nil)
                            return
                        }
                    }
                    subscriber.putCompletion()
                } catch {
                    subscriber.putError(error)
                }
            }
            return ActionDisposable { task.cancel() }
        }
    }

    /// A single-value signal that runs `operation` in a task for each subscription.
    ///
    /// ```swift
    /// let profile = Signal(operation: { () throws(APIError) in try await api.profile(id) })  // Signal<Profile, APIError>
    /// disposables.add(profile.start(next: { show($0) }))
    /// ```
    ///
    /// The bridge for calling new async APIs from signal code: the result is sent as one value followed
    /// by completion; a thrown error is sent as the signal's error. Disposing the subscription cancels
    /// the task; a result that arrives after `dispose()` returned is dropped. A subscription disposed
    /// before its task first runs never calls `operation`; one disposed while the task starts may still
    /// call it just after `dispose()` returns, with `Task.isCancelled` true (check it before sending a
    /// request that must not go out after the disposal). An operation isolated to an actor
    /// (`{ @MainActor in ... }`) is reached after a hop to it: a disposal while the task waits for that
    /// actor does not keep it from starting (its result is dropped).
    ///
    /// Name the closure's error type, as in `() throws(APIError) in`: a closure that throws is otherwise
    /// inferred to throw `any Error`, which does not convert to `E`.
    ///
    /// - Parameters:
    ///   - priority: The priority of the task.
    ///   - operation: The async work; for `NoError` signals it cannot throw.
    public convenience init(priority: TaskPriority? = nil, operation: @escaping @Sendable () async throws(E) -> T) {
        self.init { subscriber in
            let task = TimelineExecutor.startTask(priority: priority) {
                // Disposed before the task ran: nobody takes the result, so the work is not started.
                if Task.isCancelled { return }
                do throws(E) {
                    let value = try await operation()
                    subscriber.putNext(value)
                    subscriber.putCompletion()
                } catch {
                    subscriber.putError(error)
                }
            }
            return ActionDisposable { task.cancel() }
        }
    }
}

/// A `Task` held as a `Disposable`: disposing it cancels the task.
///
/// ```swift
/// disposables.add(TaskDisposable(Task { await refreshForever() }))
/// ```
///
/// Ownership: the disposable does not keep the task's result; it only cancels. Whoever holds the
/// disposable decides when the task should stop.
public final class TaskDisposable: Disposable {
    private let cancelTask: @Sendable () -> Void

    /// Wraps `task`.
    ///
    /// - Parameter task: The task to cancel on `dispose()`.
    public init<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>) {
        self.cancelTask = { task.cancel() }
    }

    /// Cancels the task. Idempotent.
    public func dispose() {
        self.cancelTask()
    }
}

extension Task {
    /// This task as a `Disposable` that cancels it.
    ///
    /// - Returns: A ``TaskDisposable`` for this task.
    public func asDisposable() -> Disposable {
        return TaskDisposable(self)
    }
}

extension Disposable {
    /// Suspends until the current task is cancelled, then disposes this disposable.
    ///
    /// Ties a subscription to a task's lifetime: the task owns the subscription, and cancelling the task
    /// ends it.
    ///
    /// ```swift
    /// let task = Task {
    ///     let subscription = updates.start(next: { handle($0) })
    ///     await subscription.disposeOnCancellation()
    /// }
    /// // later
    /// task.cancel() // disposes the subscription
    /// ```
    ///
    /// If the task is already cancelled, the disposable is disposed at once.
    public func disposeOnCancellation() async {
        let gate = CancellationGate()
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                gate.wait(continuation)
            }
        } onCancel: {
            gate.open()
        }
        self.dispose()
    }
}

/// Resumes one waiting continuation when opened, whichever comes first.
final class CancellationGate: Sendable {
    private struct State: Sendable {
        var isOpen = false
        var waiter: UnsafeContinuation<Void, Never>?
    }

    private let state = LockedState<State>(State())

    func wait(_ continuation: UnsafeContinuation<Void, Never>) {
        let resumeNow = self.state.withLock { state -> Bool in
            if state.isOpen { return true }
            state.waiter = continuation
            return false
        }
        if resumeNow {
            continuation.resume()
        }
    }

    func open() {
        let waiter = self.state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.isOpen = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}

extension Promise {
    /// The promise's values as an `AsyncSequence`: the current value (if any), then each new one.
    ///
    /// The sequence subscribes when it is made (as every signal's ``SwiftSignalKit/Signal/values(bufferingPolicy:)``
    /// does), so a value set between making it and the loop's first `next()` is not lost. The sequence
    /// never ends on its own (a promise never completes); leave the loop or cancel the task.
    @inlinable public var values: SignalValues<T, NoError> {
        return self.get().values
    }

    /// The promise's values as an `AsyncSequence` with the given buffering policy: the current value (if
    /// any), then each new one, from when the sequence is made. Same as
    /// `get().values(bufferingPolicy:)`.
    ///
    /// ```swift
    /// for await latest in status.values(bufferingPolicy: .bufferingNewest(1)) { render(latest) }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What to keep until the loop takes it.
    /// - Returns: The sequence, already subscribed.
    @inlinable public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, NoError> {
        return self.get().values(bufferingPolicy: bufferingPolicy)
    }
}

extension ValuePromise {
    /// The promise's values as an `AsyncSequence`: the current value (if any), then each new one.
    ///
    /// Like `Promise.values`, the sequence subscribes when it is made and never ends on its own.
    @inlinable public var values: SignalValues<T, NoError> {
        return self.get().values
    }

    /// The promise's values as an `AsyncSequence` with the given buffering policy, from when the
    /// sequence is made. Same as `get().values(bufferingPolicy:)`.
    ///
    /// - Parameter bufferingPolicy: What to keep until the loop takes it.
    /// - Returns: The sequence, already subscribed.
    @inlinable public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, NoError> {
        return self.get().values(bufferingPolicy: bufferingPolicy)
    }
}

extension ValuePipe where T: Sendable {
    /// The pipe's values as an `AsyncSequence`: every value put after the sequence is made.
    ///
    /// ```swift
    /// let trades = feed.values        // subscribed here
    /// exchange.connect()              // may put values at once, from its own thread
    /// for await trade in trades { record(trade) }
    /// ```
    ///
    /// The sequence subscribes when it is made (as every signal's ``SwiftSignalKit/Signal/values(bufferingPolicy:)``
    /// does), so values put before the loop starts are kept for it. No replay: values put before the
    /// sequence was made are not seen.
    @inlinable public var values: SignalValues<T, NoError> {
        return self.signal().values
    }

    /// The pipe's values as an `AsyncSequence` with the given buffering policy, from when the sequence is
    /// made. Same as `signal().values(bufferingPolicy:)`.
    ///
    /// ```swift
    /// for await tick in ticks.values(bufferingPolicy: .bufferingNewest(1)) { redraw(tick) }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What to keep until the loop takes it.
    /// - Returns: The sequence, already subscribed.
    @inlinable public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, NoError> {
        return self.signal().values(bufferingPolicy: bufferingPolicy)
    }
}
