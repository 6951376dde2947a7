import SwiftSignalKit
import Testing

/// An async latch for transforms under test: `wait()` suspends until `open()`, whatever happens to the
/// task; `waitOrCancel()` also ends, throwing `CancellationError`, when the task is cancelled.
final class Gate: Sendable {
    private let state = Atomic<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>(value: (false, []))
    /// How many waits have started.
    let arrivals = Counter()

    var isOpen: Bool { self.state.with { $0.isOpen } }

    func wait() async {
        self.arrivals.increment()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var resumeNow = false
            self.state.modify { state in
                if state.isOpen {
                    resumeNow = true
                    return state
                }
                return (false, state.waiters + [continuation])
            }
            if resumeNow { continuation.resume() }
        }
    }

    func waitOrCancel() async throws(CancellationError) {
        self.arrivals.increment()
        while !self.isOpen {
            do {
                try await Task.sleep(for: .milliseconds(1))
            } catch {
                throw CancellationError()
            }
        }
    }

    func open() {
        var waiters: [CheckedContinuation<Void, Never>] = []
        self.state.modify { state in
            waiters = state.waiters
            return (true, [])
        }
        for waiter in waiters { waiter.resume() }
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
            },
            error: { error in _ = self.error.swap(error) },
            completed: { _ = self.completed.swap(true) }
        )
    }

    var valueList: [T] { self.values.with { $0 } }
    var isCompleted: Bool { self.completed.with { $0 } }
    var failure: E? { self.error.with { $0 } }
    var hasEnded: Bool { self.isCompleted || self.failure != nil }
}

/// Waits (up to 10 seconds) for something another thread does.
func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<10_000 {
        if condition() { return }
        try? await Task.sleep(for: .milliseconds(1))
    }
    Issue.record("still not true after 10 seconds", sourceLocation: sourceLocation)
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
