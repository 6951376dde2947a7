import Dispatch
import Foundation
import SwiftSignalKit
import Testing

/// An async latch for transforms under test: `wait()` suspends until `open()`, whatever happens to the
/// task; `waitOrCancel()` also ends, throwing `CancellationError`, when the task is cancelled.
final class Gate: Sendable {
    private let state = Atomic<(isOpen: Bool, waiters: [OnceWaiter])>(value: (false, []))
    /// How many waits have started.
    let arrivals = Counter()

    var isOpen: Bool { self.state.with { $0.isOpen } }

    func wait() async {
        self.arrivals.increment()
        await self.suspend(OnceWaiter())
    }

    func waitOrCancel() async throws(CancellationError) {
        self.arrivals.increment()
        let waiter = OnceWaiter()
        await withTaskCancellationHandler {
            await self.suspend(waiter)
        } onCancel: {
            waiter.resume(cancelled: true)
        }
        if waiter.wasCancelled { throw CancellationError() }
    }

    private func suspend(_ waiter: OnceWaiter) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var openAlready = false
            self.state.modify { state in
                if state.isOpen {
                    openAlready = true
                    return state
                }
                return (false, state.waiters + [waiter])
            }
            waiter.install(continuation)
            if openAlready { waiter.resume(cancelled: false) }
        }
    }

    func open() {
        var waiters: [OnceWaiter] = []
        self.state.modify { state in
            waiters = state.waiters
            return (true, [])
        }
        for waiter in waiters { waiter.resume(cancelled: false) }
    }
}

/// A continuation resumed once, by whichever comes first: the gate opening or the task's cancellation
/// (which may come before the continuation exists).
final class OnceWaiter: Sendable {
    private let state = Atomic<(continuation: CheckedContinuation<Void, Never>?, ended: Bool, cancelled: Bool)>(
        value: (nil, false, false))

    var wasCancelled: Bool { self.state.with { $0.cancelled } }

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        var resumeNow = false
        self.state.modify { state in
            if state.ended {
                resumeNow = true
                return state
            }
            return (continuation, false, false)
        }
        if resumeNow { continuation.resume() }
    }

    func resume(cancelled: Bool) {
        var toResume: CheckedContinuation<Void, Never>?
        self.state.modify { state in
            guard !state.ended else { return state }
            toResume = state.continuation
            return (nil, true, cancelled)
        }
        toResume?.resume()
    }
}

/// Records what a subscription delivers.
final class Recording<T: Sendable, E: Sendable>: Sendable {
    private let events = Atomic<[String]>(value: [])
    let values = Atomic<[T]>(value: [])
    let error = Atomic<E?>(value: nil)
    let completed = Atomic(value: false)
    /// Callbacks running at the same time, at most.
    let overlap = Counter()
    private let inside = Counter()

    func start(_ signal: Signal<T, E>) -> Disposable {
        return signal.start(
            next: { value in
                if self.inside.increment() > 1 { self.overlap.increment() }
                self.values.modify { $0 + [value] }
                self.inside.decrement()
                TestProgress.shared.changed()
            },
            error: { error in
                _ = self.error.swap(error)
                TestProgress.shared.changed()
            },
            completed: {
                _ = self.completed.swap(true)
                TestProgress.shared.changed()
            }
        )
    }

    var valueList: [T] { self.values.with { $0 } }
    var isCompleted: Bool { self.completed.with { $0 } }
    var failure: E? { self.error.with { $0 } }
    var hasEnded: Bool { self.isCompleted || self.failure != nil }
}

/// Suspends until the task is cancelled, then throws: slow work that reacts to cancellation, without a
/// sleep. (An `AsyncStream` that nobody finishes ends its iteration when the iterating task is
/// cancelled.)
func untilCancelled() async throws(CancellationError) {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    for await _ in stream {}
    withExtendedLifetime(continuation) {}
    throw CancellationError()
}

/// Counts how many run at once, and the most that ever did.
final class ConcurrencyMeter: Sendable {
    private let state = Atomic(value: (current: 0, peak: 0))

    func enter() {
        self.state.modify { state in (state.current + 1, Swift.max(state.peak, state.current + 1)) }
    }

    func leave() {
        self.state.modify { state in (state.current - 1, state.peak) }
    }

    var peak: Int { self.state.with { $0.peak } }
    var current: Int { self.state.with { $0.current } }
}
