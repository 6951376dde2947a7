import SwiftSignalKit

/// How an async operator (`mapAsync`, `filterAsync`, `compactMapAsync`) runs its transform: how many at once, in which order the results
/// leave, and what happens to values that arrive while the transforms are busy.
///
/// ```swift
/// let rows = requests |> mapAsync { request in try await db.load(request) }                // .serial
/// let results = queries |> mapAsync(.latest) { text in try await searchRemote(text) }     // newest wins
/// let fetched = ids |> mapAsync(.concurrent(max: 8, ordered: true)) { id in try await fetch(id) } // 8 at once
/// ```
public struct AsyncTransformPolicy: Sendable, Equatable {
    @usableFromInline enum Mode: Sendable, Equatable {
        case serial
        case latest
        case concurrent(max: Int, ordered: Bool)
    }

    @usableFromInline let mode: Mode
    @usableFromInline let buffering: SignalBufferingPolicy

    init(mode: Mode, buffering: SignalBufferingPolicy) {
        switch buffering {
        case .bufferingNewest(let limit):
            if limit < 0 { misuse("AsyncTransformPolicy: the limit of .bufferingNewest must be at least 0, got \(limit)") }
        case .bufferingOldest(let limit):
            if limit < 0 { misuse("AsyncTransformPolicy: the limit of .bufferingOldest must be at least 0, got \(limit)") }
        case .bounded(let bound):
            if bound < 0 { misuse("AsyncTransformPolicy: the bound of .bounded must be at least 0, got \(bound)") }
        case .endingWhenFull:
            misuse(
                "AsyncTransformPolicy: .endingWhenFull ends a for await loop (values(bufferingPolicy:)); an async operator's buffer takes .unbounded, .bounded, .bufferingNewest or .bufferingOldest"
            )
        case .unbounded:
            break
        }
        self.mode = mode
        self.buffering = buffering
    }

    /// One transform at a time, results in input order; every value that arrives meanwhile waits.
    ///
    /// The default policy. Same as `.serial(buffering: .unbounded)`.
    public static let serial = AsyncTransformPolicy(mode: .serial, buffering: .unbounded)

    /// One transform at a time, results in input order; values that arrive meanwhile wait under
    /// `buffering`.
    ///
    /// - Parameter buffering: What to keep while a transform runs: `.unbounded` keeps every value,
    ///   `.bufferingNewest(n)` the newest `n`, `.bufferingOldest(n)` the first `n` (the others are
    ///   dropped and never transformed). `.bounded(n)` keeps every value and makes producers upstream
    ///   that can wait (an async generator's `waitingForRoom`, `Signal(sequence)`) wait while `n` values
    ///   wait for a transform.
    /// - Returns: The policy.
    public static func serial(buffering: SignalBufferingPolicy) -> AsyncTransformPolicy {
        return AsyncTransformPolicy(mode: .serial, buffering: buffering)
    }

    /// One transform at a time; a new value cancels the running transform, whose result is then dropped.
    /// So is its error: a cancelled transform that throws (a `CancellationError`, or its own) does not
    /// fail the signal.
    ///
    /// The async counterpart of `mapToSignal` (`switchToLatest`): search as you type, the latest
    /// request wins. The newest value's transform starts when the cancelled one has returned, so a
    /// transform slow to notice its cancellation delays the next one instead of running beside it;
    /// values in between are dropped.
    public static let latest = AsyncTransformPolicy(mode: .latest, buffering: .unbounded)

    /// At most `max` values in progress at once; values that arrive meanwhile wait under `buffering`.
    ///
    /// A value is in progress from the start of its transform until its result is handed to the
    /// subscriber, so a result that waits for an earlier one (`ordered: true`) or for a slow consumer
    /// still takes one of the `max` places.
    ///
    /// - Parameters:
    ///   - max: The most values in progress at once; at least 1 (a smaller value stops the program with
    ///     a message naming it).
    ///   - ordered: `true` sends the results in the order of their values (a fast result waits for the
    ///     slower ones before it); `false` sends each result as soon as its transform finishes.
    ///   - buffering: What to keep while `max` values are in progress (see ``serial(buffering:)``); a
    ///     negative limit stops the program with a message naming it.
    /// - Returns: The policy.
    public static func concurrent(
        max: Int, ordered: Bool, buffering: SignalBufferingPolicy = .unbounded
    )
        -> AsyncTransformPolicy
    {
        if max < 1 { misuse("AsyncTransformPolicy.concurrent(max:ordered:): max must be at least 1, got \(max)") }
        return AsyncTransformPolicy(mode: .concurrent(max: max, ordered: ordered), buffering: buffering)
    }
}
