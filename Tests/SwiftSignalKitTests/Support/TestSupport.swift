import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

/// One event of a subscription, as a comparable value.
enum Event<T: Equatable & Sendable, E: Equatable & Sendable>: Equatable, Sendable {
    case next(T)
    case error(E)
    case completed
}

/// A test error.
struct TestError: Error, Equatable, Sendable {
    var code: Int = 0
}

/// Records the events of subscriptions, from any thread.
final class Recorder<T: Equatable & Sendable, E: Equatable & Sendable>: Sendable {
    private let storage = LockedState<[Event<T, E>]>([])

    var events: [Event<T, E>] { self.storage.withLock { $0 } }
    var values: [T] {
        self.events.compactMap { event in
            if case .next(let value) = event { return value }
            return nil
        }
    }

    func append(_ event: Event<T, E>) {
        self.storage.withLock { $0.append(event) }
    }

    /// Starts `signal`, recording every event.
    @discardableResult
    func start(_ signal: Signal<T, E>) -> Disposable {
        return signal.start(next: { self.append(.next($0)) }, error: { self.append(.error($0)) }, completed: { self.append(.completed) })
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let storage = LockedState<Int>(0)
    var value: Int { self.storage.withLock { $0 } }
    @discardableResult
    func increment() -> Int {
        self.storage.withLock {
            $0 += 1; return $0
        }
    }
    func decrement() { self.storage.withLock { $0 -= 1 } }
}

/// A thread-safe flag.
final class Flag: Sendable {
    private let storage = LockedState<Bool>(false)
    var isSet: Bool { self.storage.withLock { $0 } }
    func set() { self.storage.withLock { $0 = true } }
}

/// Counts live instances of ``Tracked`` objects made from it, to check that captured objects are released.
final class LifetimeTracker: Sendable {
    let live = Counter()
    let made = Counter()

    func make() -> Tracked {
        return Tracked(tracker: self)
    }
}

final class Tracked: Sendable {
    let tracker: LifetimeTracker
    init(tracker: LifetimeTracker) {
        self.tracker = tracker
        tracker.live.increment()
        tracker.made.increment()
    }
    deinit {
        self.tracker.live.decrement()
    }
}

/// A disposable that counts how often it was disposed.
final class CountingDisposable: Disposable {
    let count = Counter()
    func dispose() { self.count.increment() }
}

/// A subscriber captured by a test, to send events by hand.
final class CapturedSubscriber<T, E>: Sendable {
    private let storage = LockedState<UnsafeTransfer<Subscriber<T, E>?>>(UnsafeTransfer(nil))
    var subscriber: Subscriber<T, E>? { self.storage.withLock { $0.value } }

    /// A signal that stores its subscriber here and returns `disposable`.
    func signal(disposable: Disposable = EmptyDisposable) -> Signal<T, E> {
        return Signal { subscriber in
            self.storage.withLock { $0 = UnsafeTransfer(subscriber) }
            return disposable
        }
    }
}
