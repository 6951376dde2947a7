import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// A scheduler of the user's own, as `SignalScheduler` invites: it forwards to a virtual-time scheduler,
/// and the disposable it returns for a timer runs `onRelease` when it is released after its timer fired,
/// as a disposable that owns user state may (its `deinit` is user code).
final class ReleaseHookScheduler: SignalScheduler {
    let inner = VirtualTimeScheduler()
    let onRelease = LockedState<(@Sendable () -> Void)?>(nil)
    let released = Counter()

    func schedule(_ action: @escaping @Sendable () -> Void) {
        self.inner.schedule(action)
    }

    func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void) {
        self.inner.scheduleAtEndOfInstant(action)
    }

    func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        let hook = self.onRelease.withLock { $0 }
        let fired = Flag()
        let timer = self.inner.schedule(after: delay) {
            fired.set()
            action()
        }
        return HookedTimer(timer, released: self.released, onRelease: { if fired.isSet { hook?() } })
    }
}

/// A timer's disposable whose `deinit` runs a hook.
final class HookedTimer: Disposable {
    let timer: Disposable
    let released: Counter
    let onRelease: @Sendable () -> Void

    init(_ timer: Disposable, released: Counter, onRelease: @escaping @Sendable () -> Void) {
        self.timer = timer
        self.released = released
        self.onRelease = onRelease
    }

    func dispose() {
        self.timer.dispose()
    }

    deinit {
        self.released.increment()
        self.onRelease()
    }
}

/// The timers of `debounce`, `throttle` and `timeout` may come from a user's scheduler, and releasing
/// one may run user code that calls back into the same subscription. The operators release a timer
/// that fired after unlocking, as every other value they let go: until 2026-11-30 they dropped it under
/// their lock, and a hook that disposed the subscription or sent it a value trapped ("Recursive call to
/// lock Mutex") in debug and release builds alike.
@Suite struct UserSchedulerTimerTests {
    /// Starts `transform` over a pipe on a `ReleaseHookScheduler` whose first fired timer, released, runs
    /// `reenter` with the pipe and the subscription; sends 1, lets five seconds pass, and returns the
    /// values delivered and how many timers were released.
    func run(
        _ transform: (ReleaseHookScheduler) -> (Signal<Int, NoError>) -> Signal<Int, NoError>,
        reenter: @escaping @Sendable (ValuePipe<Int>, Disposable?) -> Void
    ) -> (values: [Int], released: Int) {
        let scheduler = ReleaseHookScheduler()
        let pipe = ValuePipe<Int>()
        let subscription = LockedState<Disposable?>(nil)
        let first = Counter()
        scheduler.onRelease.withLock {
            $0 = {
                if first.increment() == 1 { reenter(pipe, subscription.withLock { $0 }) }
            }
        }
        let recorder = Recorder<Int, Never>()
        let started = recorder.start(pipe.signal() |> transform(scheduler))
        subscription.withLock { $0 = started }
        pipe.putNext(1)
        scheduler.inner.advance(by: 5)
        started.dispose()
        scheduler.inner.run()
        return (recorder.values, scheduler.released.value)
    }

    @Test(arguments: ["debounce", "throttle"])
    func aFiredTimerReleasedIntoADisposalOfItsSubscription(_ name: String) {
        let result = run(
            { scheduler in
                name == "debounce" ? debounce(1, scheduler: scheduler) : throttle(1, scheduler: scheduler)
            }, reenter: { _, subscription in subscription?.dispose() })
        #expect(result.values == [1])
        #expect(result.released == 1)
    }

    @Test(arguments: ["debounce", "throttle"])
    func aFiredTimerReleasedIntoAValueOfItsSource(_ name: String) {
        let result = run(
            { scheduler in
                name == "debounce" ? debounce(1, scheduler: scheduler) : throttle(1, scheduler: scheduler)
            }, reenter: { pipe, _ in pipe.putNext(2) })
        // The value sent from the release waits for a timer of its own, which fires a second later.
        #expect(result.values == [1, 2])
        #expect(result.released == 2)
    }

    @Test func theTimeoutThatWinsReleasedIntoADisposalOfItsSubscription() {
        let result = run(
            { scheduler in
                { signal in (signal |> filter { $0 > 1 }) |> timeout(1, scheduler: scheduler, alternate: .single(-1)) }
            }, reenter: { _, subscription in subscription?.dispose() })
        // The timer is released once the action that switched to the alternate is done, outside the
        // lock: the alternate (a synchronous `single`) has sent its value by then.
        #expect(result.values == [-1])
        #expect(result.released == 1)
    }

    @Test func aPerValueTimeoutThatWinsReleasedIntoAValueOfItsSource() {
        let result = run(
            { scheduler in
                timeout(perValue: 1, scheduler: scheduler, alternate: .single(-1))
            }, reenter: { pipe, _ in pipe.putNext(2) })
        // The value sent from the release comes after the timer won: the alternate has taken over.
        #expect(result.values == [1, -1])
        #expect(result.released == 2, "the wait before value 1, and the one after it")
    }
}

/// A scheduler whose first timed action runs before `schedule(after:_:)` returns, as it may on a
/// concurrent queue whose other thread takes it at once; later ones wait for `runPending()`.
final class FirstActionRunsAtOnceScheduler: SignalScheduler {
    private let pending = LockedState<[(action: @Sendable () -> Void, cancelled: Flag)]>([])
    private let scheduledCount = Counter()

    func schedule(_ action: @escaping @Sendable () -> Void) {
        action()
    }

    func scheduleAtEndOfInstant(_ action: @escaping @Sendable () -> Void) {
        action()
    }

    func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        let cancelled = Flag()
        if self.scheduledCount.increment() == 1 {
            action()
        } else {
            self.pending.withLock { $0.append((action, cancelled)) }
        }
        return ActionDisposable { cancelled.set() }
    }

    /// Runs the actions scheduled so far that were not cancelled; returns how many ran.
    @discardableResult func runPending() -> Int {
        let actions = self.pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        let live = actions.filter { !$0.cancelled.isSet }
        live.forEach { $0.action() }
        return live.count
    }
}

@Suite struct SchedulerTimerProbeRegressionTests {
    /// A repeating timer on a scheduler other than a `Queue` stopped by itself when a firing ran on
    /// another thread before the scheduler had returned its disposable: the late store of the first
    /// firing's disposable cancelled the second firing, which that first firing had already scheduled.
    @Test func aRepeatingTimerKeepsFiringWhenAFiringRunsBeforeItsScheduleReturns() {
        let scheduler = FirstActionRunsAtOnceScheduler()
        let firings = Counter()
        let timer = Timer(timeout: 0, repeat: true, scheduler: scheduler) { _ in firings.increment() }
        timer.start()
        #expect(firings.value == 1)
        #expect(scheduler.runPending() == 1, "the second firing must not have been cancelled")
        #expect(firings.value == 2)
        scheduler.runPending()
        #expect(firings.value == 3)
        timer.invalidate()
        #expect(scheduler.runPending() == 0, "invalidate cancels the next firing")
        #expect(firings.value == 3)
    }
}
