import SwiftSignalKit

/// Transforms each value with async code.
///
/// ```swift
/// let profiles = requests |> mapAsync { (request: Request) throws(DBError) in
///     try await db.loadProfile(request.userID)
/// }
/// ```
///
/// Name the closure's error type, as here, to keep the signal's: a closure that uses `try` without it
/// picks the overload whose result fails with `any Error`.
///
/// With the default ``AsyncTransformPolicy/serial`` policy, one transform runs at a time and the results
/// leave in input order; values that arrive meanwhile wait (all of them, unless a bounded buffering
/// policy says otherwise):
///
/// ```
/// upstream:   a----b-c------|
/// transforms: [-A-][--B-][-C-]
/// result:     ----A-----B----C|
/// ```
///
/// ``AsyncTransformPolicy/latest`` cancels the running transform when a value arrives (`b` cancels the
/// transform of `a`); ``AsyncTransformPolicy/concurrent(max:ordered:buffering:)`` runs up to `max` at
/// once.
///
/// - At most one transform (`.serial`, `.latest`) or `max` (`.concurrent`) values are in progress at
///   once, counting results that wait for an earlier one or for the subscriber; later values wait under
///   the policy's buffering, so neither a slow first value nor a slow consumer piles up results.
/// - The result completes when the upstream has completed and the last transform has finished and
///   its result has been sent. An upstream that ends while it starts (`.complete()`, `.fail(_:)`) ends
///   the result during `start`, as other operators do.
/// - A transform that throws fails the result with its error as the next event (results not handed to
///   the subscriber yet are dropped) and cancels the other transforms. An upstream failure does the
///   same.
/// - Disposing the subscription cancels every running transform and the upstream subscription before
///   `dispose()` returns: a transform running then, or one already handed a value, sees
///   `Task.isCancelled`, and a value not yet taken is never transformed. No
///   result that finishes after `dispose()` returns is delivered, even from a transform that ignores
///   cancellation. (A result another thread was already handing to the subscriber may still reach the
///   callback just after, as for every subscriber: see `Subscriber` in SwiftSignalKit.)
/// - The transforms run in tasks created when the subscription starts: they take `priority`, or else
///   the priority of the task that started the subscription, and see its task-local values.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value; its error type is the signal's.
/// - Returns: An operator for `|>`.
@inlinable public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async throws(E) -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    return asyncTransform(policy, priority: priority) { (value: T) throws(E) -> R? in
        try await transform(value)
    }
}

/// Transforms each value with async code that cannot fail; the signal keeps its error type.
///
/// ```swift
/// let thumbnails = uploads |> mapAsync(.concurrent(max: 4, ordered: true)) { upload in
///     await renderer.thumbnail(of: upload)
/// }
/// ```
///
/// Behaves as the `mapAsync` whose transform throws the signal's error type.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value.
/// - Returns: An operator for `|>`.
@inlinable public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    return asyncTransform(policy, priority: priority) { (value: T) throws(E) -> R? in
        await transform(value)
    }
}

/// Transforms each value with async code that throws `any Error`; the result fails with `any Error`.
///
/// ```swift
/// let rows = ids |> mapAsync { id in try await legacyClient.row(id) }   // Signal<Row, any Error>
/// ```
///
/// Swift 6.3 infers `throws(any Error)` for a closure that uses `try` without naming its error type,
/// even where the signal's error type is known. Such a closure picks this overload, whose result's
/// error type is `any Error`, and the upstream's errors are passed on as `any Error`. To keep the
/// signal's own error type, name it in the closure: `{ (id: ID) throws(DBError) in ... }`. Otherwise
/// behaves as the typed `mapAsync`.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async throws -> R
) -> (Signal<T, E>) -> Signal<R, any Error> {
    let operation = asyncTransform(policy, priority: priority) { (value: T) throws(any Error) -> R? in
        try await transform(value)
    }
    return { signal in operation(signal |> mapError { error -> any Error in error }) }
}

/// Keeps the values for which async code returns true.
///
/// ```swift
/// let allowed = uploads |> filterAsync(.concurrent(max: 4, ordered: true)) { upload in
///     await scanner.isClean(upload)
/// }
/// ```
///
/// Runs its predicate under `policy` exactly as `mapAsync` runs its transform, with the
/// same completion, error, cancellation and task rules; a value whose predicate returns false is left
/// out, without holding back the results after it.
///
/// - Parameters:
///   - policy: How many predicates run at once, and in what order values leave.
///   - priority: The priority of the predicates' tasks; by default, that of the subscribing task.
///   - isIncluded: Whether to keep a value.
/// - Returns: An operator for `|>`.
@inlinable public func filterAsync<T: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ isIncluded: @escaping @Sendable (T) async throws(E) -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    return asyncTransform(policy, priority: priority) { (value: T) throws(E) -> T? in
        try await isIncluded(value) ? value : nil
    }
}

/// Keeps the values for which async code that cannot fail returns true; the signal keeps its error type.
///
/// Behaves as the `filterAsync` whose predicate throws the signal's error type.
///
/// - Parameters:
///   - policy: How many predicates run at once, and in what order values leave.
///   - priority: The priority of the predicates' tasks; by default, that of the subscribing task.
///   - isIncluded: Whether to keep a value.
/// - Returns: An operator for `|>`.
@inlinable public func filterAsync<T: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ isIncluded: @escaping @Sendable (T) async -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    return asyncTransform(policy, priority: priority) { (value: T) throws(E) -> T? in
        await isIncluded(value) ? value : nil
    }
}

/// Keeps the values for which async code that throws `any Error` returns true; the result fails with
/// `any Error`.
///
/// The overload a closure that uses `try` without naming its error type picks (see the untyped
/// `mapAsync`); name the error type, `throws(E)`, to keep the signal's.
///
/// - Parameters:
///   - policy: How many predicates run at once, and in what order values leave.
///   - priority: The priority of the predicates' tasks; by default, that of the subscribing task.
///   - isIncluded: Whether to keep a value.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func filterAsync<T: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ isIncluded: @escaping @Sendable (T) async throws -> Bool
) -> (Signal<T, E>) -> Signal<T, any Error> {
    let operation = asyncTransform(policy, priority: priority) { (value: T) throws(any Error) -> T? in
        try await isIncluded(value) ? value : nil
    }
    return { signal in operation(signal |> mapError { error -> any Error in error }) }
}

/// Transforms each value with async code and leaves out the nil results.
///
/// ```swift
/// let sessions = tokens |> compactMapAsync { token in try await auth.session(for: token) }
/// ```
///
/// Runs its transform under `policy` exactly as `mapAsync` does, with the same
/// completion, error, cancellation and task rules.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value, or nil to leave the value out.
/// - Returns: An operator for `|>`.
@inlinable public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async throws(E) -> R?
) -> (Signal<T, E>) -> Signal<R, E> {
    return asyncTransform(policy, priority: priority, transform)
}

/// Transforms each value with async code that cannot fail and leaves out the nil results; the signal
/// keeps its error type.
///
/// Behaves as the `compactMapAsync` whose transform throws the signal's error type.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value, or nil to leave the value out.
/// - Returns: An operator for `|>`.
@inlinable public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async -> R?
) -> (Signal<T, E>) -> Signal<R, E> {
    return asyncTransform(policy, priority: priority) { (value: T) throws(E) -> R? in
        await transform(value)
    }
}

/// Transforms each value with async code that throws `any Error` and leaves out the nil results; the
/// result fails with `any Error`.
///
/// The overload a closure that uses `try` without naming its error type picks (see the untyped
/// `mapAsync`); name the error type, `throws(E)`, to keep the signal's.
///
/// - Parameters:
///   - policy: How many transforms run at once, and in what order results leave.
///   - priority: The priority of the transforms' tasks; by default, that of the subscribing task.
///   - transform: Makes a result from a value, or nil to leave the value out.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy = .serial, priority: TaskPriority? = nil,
    _ transform: @escaping @Sendable (T) async throws -> R?
) -> (Signal<T, E>) -> Signal<R, any Error> {
    let operation = asyncTransform(policy, priority: priority) { (value: T) throws(any Error) -> R? in
        try await transform(value)
    }
    return { signal in operation(signal |> mapError { error -> any Error in error }) }
}

// MARK: - The transform alone

/// `mapAsync(.serial, transform)`: lets a function reference or a closure in parentheses be passed
/// alone (a single unlabelled argument would otherwise be taken for the policy).
///
/// ```swift
/// let profiles = ids |> mapAsync(loadProfile)   // func loadProfile(_ id: ID) async throws(DBError) -> Profile
/// ```
///
/// - Parameter transform: Makes a result from a value; its error type is the signal's.
/// - Returns: An operator for `|>`.
@inlinable public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async throws(E) -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    return mapAsync(.serial, priority: nil, transform)
}

/// `mapAsync(.serial, transform)` for a transform that cannot fail, passed alone.
///
/// - Parameter transform: Makes a result from a value.
/// - Returns: An operator for `|>`.
@inlinable public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    return mapAsync(.serial, priority: nil, transform)
}

/// `mapAsync(.serial, transform)` for a transform that throws `any Error`, passed alone; the result
/// fails with `any Error`.
///
/// - Parameter transform: Makes a result from a value.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func mapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async throws -> R
) -> (Signal<T, E>) -> Signal<R, any Error> {
    return mapAsync(.serial, priority: nil, transform)
}

/// `filterAsync(.serial, isIncluded)`: lets a function reference or a closure in parentheses be passed
/// alone.
///
/// - Parameter isIncluded: Whether to keep a value; its error type is the signal's.
/// - Returns: An operator for `|>`.
@inlinable public func filterAsync<T: Sendable, E: Error>(
    _ isIncluded: @escaping @Sendable (T) async throws(E) -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    return filterAsync(.serial, priority: nil, isIncluded)
}

/// `filterAsync(.serial, isIncluded)` for a predicate that cannot fail, passed alone.
///
/// - Parameter isIncluded: Whether to keep a value.
/// - Returns: An operator for `|>`.
@inlinable public func filterAsync<T: Sendable, E: Error>(
    _ isIncluded: @escaping @Sendable (T) async -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    return filterAsync(.serial, priority: nil, isIncluded)
}

/// `filterAsync(.serial, isIncluded)` for a predicate that throws `any Error`, passed alone; the result
/// fails with `any Error`.
///
/// - Parameter isIncluded: Whether to keep a value.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func filterAsync<T: Sendable, E: Error>(
    _ isIncluded: @escaping @Sendable (T) async throws -> Bool
) -> (Signal<T, E>) -> Signal<T, any Error> {
    return filterAsync(.serial, priority: nil, isIncluded)
}

/// `compactMapAsync(.serial, transform)`: lets a function reference or a closure in parentheses be
/// passed alone.
///
/// - Parameter transform: Makes a result from a value, or nil; its error type is the signal's.
/// - Returns: An operator for `|>`.
@inlinable public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async throws(E) -> R?
) -> (Signal<T, E>) -> Signal<R, E> {
    return compactMapAsync(.serial, priority: nil, transform)
}

/// `compactMapAsync(.serial, transform)` for a transform that cannot fail, passed alone.
///
/// - Parameter transform: Makes a result from a value, or nil.
/// - Returns: An operator for `|>`.
@inlinable public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async -> R?
) -> (Signal<T, E>) -> Signal<R, E> {
    return compactMapAsync(.serial, priority: nil, transform)
}

/// `compactMapAsync(.serial, transform)` for a transform that throws `any Error`, passed alone; the
/// result fails with `any Error`.
///
/// - Parameter transform: Makes a result from a value, or nil.
/// - Returns: An operator for `|>`.
@_disfavoredOverload @inlinable
public func compactMapAsync<T: Sendable, R: Sendable, E: Error>(
    _ transform: @escaping @Sendable (T) async throws -> R?
) -> (Signal<T, E>) -> Signal<R, any Error> {
    return compactMapAsync(.serial, priority: nil, transform)
}

/// The operator behind the public ones.
@inlinable func asyncTransform<T: Sendable, R: Sendable, E: Error>(
    _ policy: AsyncTransformPolicy, priority: TaskPriority?, _ transform: @escaping @Sendable (T) async throws(E) -> R?
) -> (Signal<T, E>) -> Signal<R, E> {
    return { signal in
        return Signal { subscriber in
            let storage = AsyncTransformStorage(subscriber: subscriber, policy: policy, priority: priority, transform: transform)
            storage.start(signal)
            return storage
        }
    }
}
