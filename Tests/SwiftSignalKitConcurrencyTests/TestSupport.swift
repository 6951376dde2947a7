import Dispatch
import SwiftSignalKit

/// A thread-safe counter.
final class Counter: Sendable {
    private let storage = Atomic(value: 0)
    var value: Int { self.storage.with { $0 } }
    @discardableResult
    func increment() -> Int {
        defer { TestProgress.shared.changed() }
        return self.storage.modify { $0 + 1 }
    }
    func decrement() {
        self.storage.modify { $0 - 1 }
        TestProgress.shared.changed()
    }
}

/// Counts live objects made from it.
final class LifetimeTracker: Sendable {
    let live = Counter()
    func make() -> Tracked { Tracked(self) }
}

final class Tracked: Sendable {
    let tracker: LifetimeTracker
    init(_ tracker: LifetimeTracker) {
        self.tracker = tracker
        tracker.live.increment()
    }
    deinit { self.tracker.live.decrement() }
}

struct TestError: Error, Equatable, Sendable {
    var code = 0
}

/// A source that counts subscriptions and disposals, and keeps a tracked object per subscription.
final class InstrumentedSource: Sendable {
    let starts = Counter()
    let disposals = Counter()
    let tracker = LifetimeTracker()

    /// A signal running `body` with the subscriber on each start.
    func signal<T: Sendable, E: Sendable>(
        _ body: @escaping @Sendable (Subscriber<T, E>) -> Void
    ) -> Signal<T, E> {
        return Signal { subscriber in
            let tracked = self.tracker.make()
            self.starts.increment()
            body(subscriber)
            return ActionDisposable {
                withExtendedLifetime(tracked) {}
                self.disposals.increment()
            }
        }
    }

    /// Every started subscription was disposed exactly once and released.
    var isBalanced: Bool {
        return self.starts.value == self.disposals.value && self.tracker.live.value == 0
    }
}
