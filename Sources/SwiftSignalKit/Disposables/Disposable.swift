/// Something that can be stopped: a subscription, a timer, a task.
///
/// `dispose()` must be safe to call more than once and from any thread; calls after the first do nothing.
///
/// Every disposable of this library returns from `dispose()` without waiting for another thread, so it
/// may be called under any lock (yours included), inside any callback and inside a task cancellation
/// handler. For a subscription, no event sent after `dispose()` returns reaches a callback, but a
/// callback that another thread had already begun may still be running. When teardown must wait for
/// it, deliver on a serial ``Queue`` and tear down on that queue after disposing:
///
/// ```swift
/// let queue = Queue(name: "log")
/// let subscription = (lines |> deliverOn(queue)).start(next: { line in file.write(line) })
/// subscription.dispose()
/// queue.async { file.close() }  // after any write in progress; no write follows
/// ```
///
/// Your own conformances should keep the same promise: change state, schedule work, return.
///
/// > Note: `Disposable` refines `Sendable` because disposables are handed between threads (a subscription
/// > started on one queue is often disposed on another). It is `@preconcurrency`, so classes written for
/// > the original library keep compiling without diagnostics in Swift 5 mode; Swift 6 code is checked.
@preconcurrency public protocol Disposable: AnyObject, Sendable {
    /// Stops the work this disposable stands for. Idempotent.
    func dispose()
}

/// A disposable that does nothing; the return value of generators with nothing to stop.
///
/// `@usableFromInline` so that a subscriber can recognise it by type (see `Subscriber.assignDisposable`)
/// without reading the lazily initialised global.
@usableFromInline final class _EmptyDisposable: Disposable {
    @usableFromInline func dispose() {}
}

/// The shared disposable that does nothing.
///
/// ```swift
/// let signal = Signal<Int, NoError> { subscriber in
///     subscriber.putNext(1)
///     return EmptyDisposable
/// }
/// ```
public let EmptyDisposable: Disposable = emptyDisposableObject

/// The object behind ``EmptyDisposable``. A global of the concrete class is built by the compiler as a
/// static object, whose reference count the runtime never changes: retaining and releasing it writes
/// nothing. A global of the existential type was allocated at run time, and every generator returning
/// it wrote its reference count twice, a cache line that all threads shared.
@usableFromInline let emptyDisposableObject = _EmptyDisposable()

/// A disposable that runs a closure once, on the first call to `dispose()`.
///
/// ```swift
/// let disposable = ActionDisposable { timer.invalidate() }
/// ```
///
/// The closure runs outside any lock, on the thread that calls `dispose()`. If the disposable is released
/// without being disposed, the closure is released without running.
public final class ActionDisposable: Disposable {
    private let action: LockedState<(@Sendable () -> Void)?>

    /// Creates a disposable that runs `action` when first disposed.
    ///
    /// - Parameter action: The work to run once.
    @preconcurrency public init(action: @escaping @Sendable () -> Void) {
        self.action = .init(action)
    }

    /// Runs the action if it has not run yet.
    public func dispose() {
        let action = self.action.withLock { state -> (@Sendable () -> Void)? in
            let action = state
            state = nil
            return action
        }
        action?()
    }
}

/// A disposable that reports, in debug builds, being released without having been disposed.
///
/// Returned by ``Signal/startStrict(next:error:completed:file:line:)`` and ``Disposable/strict(file:line:)``.
/// The report is an `assertionFailure` naming the file and line where the strict disposable was made and
/// what it wraps; in release builds nothing is reported. A subscription that had already ended when
/// `startStrict` returned (a synchronous signal) is reported too, saying so: dispose every strict
/// disposable, or use `start` for a subscription you never dispose.
public final class StrictDisposable: Disposable {
    private let disposable: Disposable
    private let file: String
    private let line: Int
    private let isDisposed = LockedState<Bool>(false)

    /// Wraps `disposable`, remembering where it was made.
    ///
    /// - Parameters:
    ///   - disposable: The disposable to forward `dispose()` to.
    ///   - file: The file to report on a leak.
    ///   - line: The line to report on a leak.
    public init(_ disposable: Disposable, file: String, line: Int) {
        self.disposable = disposable
        self.file = file
        self.line = line
    }

    deinit {
        #if DEBUG
            if !self.isDisposed.withLock({ $0 }) {
                let report = StrictDisposable.leakHandler.withLock { $0 }
                report(StrictDisposable.leakMessage(wrapping: self.disposable, file: self.file, line: self.line))
            }
        #endif
    }

    /// The leak report: where the strict disposable was made, and what it wrapped, in the caller's terms.
    /// A signal that had ended by the time `startStrict` returned leaves the empty disposable to wrap,
    /// whose type name would mean nothing to the reader.
    static func leakMessage(wrapping disposable: Disposable, file: String, line: Int) -> String {
        let wrapped =
            type(of: disposable) == _EmptyDisposable.self
            ? "its subscription had already ended, but a strict disposable must be disposed all the same"
            : "it wraps \(disposable)"
        return "Leaked disposable from \(file):\(line): a strict disposable was released without dispose(); \(wrapped)"
    }

    /// Disposes the wrapped disposable and marks this one as disposed.
    public func dispose() {
        self.isDisposed.withLock { $0 = true }
        self.disposable.dispose()
    }

    /// What happens when a strict disposable leaks in a debug build. Tests replace it to observe leaks.
    static let leakHandler = LockedState<@Sendable (String) -> Void>({ message in
        assertionFailure(message)
    })
}

extension Disposable {
    /// Wraps this disposable in a ``StrictDisposable`` that reports a leak in debug builds.
    ///
    /// - Parameters:
    ///   - file: The file reported on a leak; defaults to the caller's.
    ///   - line: The line reported on a leak; defaults to the caller's.
    /// - Returns: The strict wrapper; dispose it before releasing it.
    public func strict(file: String = #file, line: Int = #line) -> Disposable {
        return StrictDisposable(self, file: file, line: line)
    }
}
