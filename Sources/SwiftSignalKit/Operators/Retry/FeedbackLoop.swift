/// What ``feedbackLoop(once:reduce:)`` passes to its `once` closure.
///
/// Kept for source compatibility with the original SwiftSignalKit, whose loop passes ``initial`` every
/// time; ``loop(_:)`` is never passed.
public enum SignalFeedbackLoopState<T> {
    /// The state passed on every iteration.
    case initial
    /// A reduced state; never passed (see ``feedbackLoop(once:reduce:)``).
    case loop(T)
}

extension SignalFeedbackLoopState: Sendable where T: Sendable {}

/// Runs the signal `once` returns, then calls `once` again each time that signal completes, until
/// `once` returns nil; then completes.
///
/// Kept for source compatibility with the original SwiftSignalKit, and with its behaviour: `once` is
/// always called with ``SignalFeedbackLoopState/initial``, `reduce` is never called, the iterations'
/// values are dropped, and the result sends no value (only completion, or the error of the first
/// iteration that fails). In new code, write the loop you mean: ``restart(_:)`` with an operator that ends it, or an
/// async signal (`Signal { send in ... }` in SwiftSignalKitConcurrency) that loops over awaited work.
///
/// ```swift
/// let remaining = Atomic(value: 3)
/// let drained: Signal<Never, NoError> = feedbackLoop(once: { (_: SignalFeedbackLoopState<Int>) in
///     remaining.modify { $0 - 1 } >= 0 ? Signal<Int, NoError>.single(1) : nil
/// }, reduce: { $0 + $1 })
/// ```
///
/// - An iteration's failure ends the result with that error; no further iteration starts.
/// - The next iteration starts from the completing iteration's callback. An iteration that completes
///   later than it starts is disposed once the next one has started, as in the original; iterations
///   that complete as they start run in a loop, not recursively, so the stack does not grow, and each
///   is disposed before the next starts (the original disposed them all when the recursion unwound).
/// - Disposing disposes the running iteration; `once` is not called again, except once when an
///   iteration completes on another thread as you dispose (see the Threading and disposal article);
///   the signal it returns is then disposed as soon as it starts.
///
/// - Parameters:
///   - once: Returns the next iteration's signal, or nil to complete.
///   - reduce: Never called; kept for the original's signature.
/// - Returns: A signal that completes when `once` returns nil.
@preconcurrency public func feedbackLoop<R1, R, E>(
    once: @escaping @Sendable (SignalFeedbackLoopState<R1>) -> Signal<R1, E>?,
    reduce: @escaping (R1, R1) -> R1
) -> Signal<R, E> {
    return RestartLoop.signal { subscriber, loop in
        guard let iteration = once(.initial) else {
            subscriber.putCompletion()
            return EmptyDisposable
        }
        return iteration.subscribe(
            ForwardingTerminals(to: subscriber),
            next: nil,
            completed: {
                loop.restart()
            })
    }
}
