import Testing

@testable import SwiftSignalKit

/// A scheduler whose first wait fires inside `schedule(after:)`, before it returns its disposable (as a
/// `Queue` timer can, or any wait whose scheduling thread is preempted); later waits are kept for the
/// test to fire.
private final class FirstWaitFiresAtOnce: SignalScheduler, Sendable {
    struct Wait {
        let action: @Sendable () -> Void
        let cancelled: Flag
    }
    let waits = LockedState<[Wait]>([])
    let calls = LockedState(0)

    func schedule(_ action: @escaping @Sendable () -> Void) {
        action()
    }

    func schedule(after delay: Double, _ action: @escaping @Sendable () -> Void) -> Disposable {
        let cancelled = Flag()
        let call = self.calls.withLock { calls -> Int in
            calls += 1
            return calls
        }
        if call == 1 {
            action()
        } else {
            self.waits.withLock { $0.append(Wait(action: action, cancelled: cancelled)) }
        }
        return ActionDisposable { cancelled.set() }
    }
}

/// The waits of a retry are kept in the order of the retries, whatever order their disposables come
/// back in: a wait whose disposable arrives after the next retry's never cancels that retry.
@Suite struct RetryWaitOrderTests {
    /// Attempt 1 fails after its start has returned (so no restart is in progress); the wait of retry 1
    /// fires before `schedule(after:)` returns, attempt 2 starts and fails at once, and retry 2's wait is
    /// scheduled and stored. Only then does retry 1's disposable come back: it must not replace retry 2's.
    @Test(arguments: ["retry", "retryOnError", "backoff"])
    func aWaitStoredLateDoesNotCancelTheNextRetry(form: String) throws {
        let scheduler = FirstWaitFiresAtOnce()
        let first = LockedState<Subscriber<Int, TestError>?>(nil)
        let attempts = LockedState(0)
        let source = Signal<Int, TestError> { subscriber in
            let attempt = attempts.withLock { attempts -> Int in
                attempts += 1
                return attempts
            }
            switch attempt {
            case 1:
                first.withLock { $0 = subscriber }
            case 2:
                subscriber.putError(TestError(code: 2))
            default:
                subscriber.putNext(attempt)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let retried: Signal<Int, TestError>
        let once = RetryBackoff.exponential(initial: 1, multiplier: 1, maxDelay: 1, jitter: .none)
        switch form {
        case "retry":
            retried = (source |> retry(1, maxDelay: 1, scheduler: scheduler)) |> castError(TestError.self)
        case "retryOnError":
            retried =
                source
                |> retry(retryOnError: { _ in true }, delayIncrement: 1, maxDelay: 1, maxRetries: 5, scheduler: scheduler)
        default:
            retried = source |> retry(once, maxAttempts: 5, scheduler: scheduler)
        }
        let values = LockedState<[Int]>([])
        let completed = Flag()
        let disposable = retried.start(next: { value in values.withLock { $0.append(value) } }, completed: { completed.set() })
        let subscriber = try #require(first.withLock { $0 })
        subscriber.putError(TestError(code: 1))

        #expect(attempts.withLock { $0 } == 2)
        let waits = scheduler.waits.withLock { $0 }
        #expect(waits.count == 1, "retry 2 waits")
        let wait = try #require(waits.first)
        #expect(!wait.cancelled.isSet, "retry 1's disposable, stored late, cancelled retry 2's wait")
        wait.action()
        #expect(attempts.withLock { $0 } == 3)
        #expect(values.withLock { $0 } == [3])
        #expect(completed.isSet)
        disposable.dispose()
    }
}
