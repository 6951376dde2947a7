/// A disposable slot: holds one disposable at a time and disposes it when replaced or when the slot is
/// disposed.
///
/// ```swift
/// let current = MetaDisposable()
/// current.set(firstSignal.start(next: { print($0) }))
/// current.set(secondSignal.start(next: { print($0) })) // disposes the first subscription
/// current.dispose()                                     // disposes the second
/// ```
///
/// - ``set(_:)`` disposes the previous disposable.
/// - Once the slot is disposed, ``set(_:)`` disposes the new disposable at once.
/// - Every `dispose()` call runs outside the slot's lock.
public final class MetaDisposable: Disposable {
    private struct State {
        var isDisposed = false
        var current: Disposable?
    }

    private let state = LockedState<State>(State())

    /// Creates an empty slot.
    public init() {}

    /// Replaces the held disposable, disposing the previous one.
    ///
    /// - Parameter disposable: The new disposable, or nil to empty the slot. If the slot has already been
    ///   disposed, this disposable is disposed at once.
    public func set(_ disposable: Disposable?) {
        let (previous, rejected) = self.state.withLock { state -> (Disposable?, Disposable?) in
            if state.isDisposed {
                return (nil, disposable)
            }
            let previous = state.current
            state.current = disposable
            return (previous, nil)
        }
        previous?.dispose()
        rejected?.dispose()
    }

    /// Whether ``dispose()`` has been called.
    var isDisposed: Bool {
        return self.state.withLock { $0.isDisposed }
    }

    /// Disposes the held disposable; later ``set(_:)`` calls dispose their argument at once.
    public func dispose() {
        let current = self.state.withLock { state -> Disposable? in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            let current = state.current
            state.current = nil
            return current
        }
        current?.dispose()
    }
}
