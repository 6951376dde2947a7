import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// `first(within:)`: the four outcomes, each told apart, on virtual time where the deadline matters.
@Suite struct FirstWithinTests {
    @Test func aValueBeforeTheDeadlineIsTheOutcome() async {
        let scheduler = VirtualTimeScheduler()
        let source = InstrumentedSource()
        let reply: Signal<Int, NoError> = source.signal { subscriber in
            subscriber.keepAlive(scheduler.schedule(after: .seconds(1)) { subscriber.putNext(7) })
        }
        async let outcome = reply.first(within: .seconds(2), scheduler: scheduler)
        await scheduler.waitUntilScheduled(2)  // the reply and the deadline
        scheduler.advance(by: .seconds(1))
        #expect(await outcome == .value(7))
        #expect(source.isBalanced)
        #expect(scheduler.scheduledActionCount == 0, "the deadline is cancelled once the value came")
    }

    @Test func theDeadlineBeforeAnyEventTimesOutAndDisposes() async {
        let scheduler = VirtualTimeScheduler()
        let source = InstrumentedSource()
        let silent: Signal<Int, NoError> = source.signal { _ in }
        async let outcome = silent.first(within: .milliseconds(1500), scheduler: scheduler)
        await scheduler.waitUntilScheduled(1)
        scheduler.advance(by: .milliseconds(1499))
        #expect(source.disposals.value == 0, "not yet")
        scheduler.advance(by: .milliseconds(1))
        #expect(await outcome == .timedOut)
        #expect(source.isBalanced)
    }

    @Test func anEmptyCompletionIsEmptyNotATimeout() async {
        let source = InstrumentedSource()
        let empty: Signal<Int, NoError> = source.signal { $0.putCompletion() }
        #expect(await empty.first(within: .seconds(5), scheduler: VirtualTimeScheduler()) == .empty)
        #expect(source.isBalanced)
    }

    @Test func cancellationIsCancelledNotATimeout() async {
        let scheduler = VirtualTimeScheduler()
        let source = InstrumentedSource()
        let silent: Signal<Int, NoError> = source.signal { _ in }
        let task = Task { await silent.first(within: .seconds(2), scheduler: scheduler) }
        await scheduler.waitUntilScheduled(1)
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(source.isBalanced)
        #expect(scheduler.scheduledActionCount == 0, "the deadline is cancelled with the wait")
        scheduler.advance(by: .seconds(3))
    }

    @Test func aTaskCancelledBeforeTheCallNeverStartsTheSignal() async {
        let source = InstrumentedSource()
        let signal: Signal<Int, NoError> = source.signal { $0.putNext(1) }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await signal.first(within: .seconds(1), scheduler: VirtualTimeScheduler())
        }
        #expect(await task.value == .cancelled)
        #expect(source.starts.value == 0)
    }

    /// A task cancelled while the signal starts, with a deadline that passes at once on another thread:
    /// the answer is the cancellation, every time (it used to be `.timedOut` now and then).
    @Test func aTaskCancelledWhileTheSignalStartsIsCancelledNotTimedOut() async {
        let signal = Signal<Int, NoError> { _ in
            withUnsafeCurrentTask { $0?.cancel() }
            return EmptyDisposable
        }
        var outcomes: [FirstValueOutcome<Int>: Int] = [:]
        for _ in 0..<10_000 {
            let outcome = await Task { await signal.first(within: .zero) }.value
            outcomes[outcome, default: 0] += 1
        }
        #expect(outcomes == [.cancelled: 10_000])
    }

    @Test func theSignalsErrorIsThrownTyped() async {
        let source = InstrumentedSource()
        let failing: Signal<Int, TestError> = source.signal { $0.putError(TestError(code: 9)) }
        await #expect(throws: TestError(code: 9)) {
            _ = try await failing.first(within: .seconds(1), scheduler: VirtualTimeScheduler())
        }
        #expect(source.isBalanced)
    }

    @Test func anAnswerWhileStartingNeedsNoTimerEvenWithAZeroDeadline() async {
        let scheduler = VirtualTimeScheduler()
        #expect(await Signal<Int, NoError>.single(3).first(within: .zero, scheduler: scheduler) == .value(3))
        #expect(await Signal<Int, NoError>.single(3).first(within: .seconds(-1), scheduler: scheduler) == .value(3))
        #expect(scheduler.scheduledActionCount == 0)
    }

    @Test func aZeroOrNegativeDeadlineTimesOutAsSoonAsTheSchedulerRuns() async {
        let scheduler = VirtualTimeScheduler()
        async let zero = Signal<Int, NoError>.never().first(within: .zero, scheduler: scheduler)
        async let negative = Signal<Int, NoError>.never().first(within: .seconds(-5), scheduler: scheduler)
        await scheduler.waitUntilScheduled(2)
        scheduler.advance(by: .zero)
        #expect(await zero == .timedOut)
        #expect(await negative == .timedOut)
    }

    @Test func aHugeDeadlineWaitsForTheValue() async {
        let source = InstrumentedSource()
        let queue = Queue()
        let later: Signal<Int, NoError> = source.signal { subscriber in queue.justDispatch { subscriber.putNext(1) } }
        #expect(await later.first(within: .seconds(Int64.max)) == .value(1))
        #expect(source.isBalanced)
    }

    /// Threads race the value, the completion and the deadline: exactly one outcome, never a value after
    /// a timeout, and every subscription disposed.
    @Test func valueCompletionAndDeadlineRacingFromThreads() async {
        for _ in 0..<200 {
            let source = InstrumentedSource()
            let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
            let signal: Signal<Int, NoError> = source.signal { subscriber in _ = captured.swap(subscriber) }
            let scheduler = VirtualTimeScheduler()
            async let outcome = signal.first(within: .seconds(1), scheduler: scheduler)
            await scheduler.waitUntilScheduled(1)
            await concurrently(3) { index in
                switch index {
                case 0: captured.with { $0 }?.putNext(1)
                case 1: captured.with { $0 }?.putCompletion()
                default: scheduler.advance(by: .seconds(1))
                }
            }
            let result = await outcome
            #expect([.value(1), .empty, .timedOut].contains(result))
            #expect(source.isBalanced)
        }
    }

    /// A value that came before the deadline is the outcome even when the deadline passes while the
    /// source's disposable runs (a disposable that takes a lock, or cancels a request with a round
    /// trip). Deterministic: the disposable itself moves virtual time past the deadline. It used to be
    /// `.timedOut`, and the value was lost.
    @Test func aValueIsTheOutcomeEvenIfTheDeadlinePassesWhileTheSourceDisposes() async {
        let scheduler = VirtualTimeScheduler()
        let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
        let disposed = Counter()
        let signal = Signal<Int, NoError> { subscriber in
            _ = captured.swap(subscriber)
            return ActionDisposable {
                scheduler.advance(by: .seconds(1))  // a slow disposable: the deadline passes meanwhile
                disposed.increment()
            }
        }
        async let outcome = signal.first(within: .milliseconds(40), scheduler: scheduler)
        await scheduler.waitUntilScheduled(1)
        captured.with { $0 }?.putNext(7)
        #expect(await outcome == .value(7))
        #expect(disposed.value == 1)
    }

    /// As above, with the task cancelled while the disposable runs: the value, not `.cancelled`.
    @Test func aValueIsTheOutcomeEvenIfTheTaskIsCancelledWhileTheSourceDisposes() async {
        let scheduler = VirtualTimeScheduler()
        let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
        let waiting = Atomic<Task<FirstValueOutcome<Int>, Never>?>(value: nil)
        let signal = Signal<Int, NoError> { subscriber in
            _ = captured.swap(subscriber)
            return ActionDisposable { waiting.with { $0 }?.cancel() }
        }
        let task = Task { await signal.first(within: .seconds(10), scheduler: scheduler) }
        _ = waiting.swap(task)
        await scheduler.waitUntilScheduled(1)
        captured.with { $0 }?.putNext(7)
        #expect(await task.value == .value(7))
    }

    /// The value and the deadline race from two threads, a thousand times. Whichever decided the
    /// outcome disposed the subscription, on its own thread: a subscription disposed by the value's
    /// thread gives the value, one disposed by the deadline's thread gives `.timedOut`, and the call
    /// never returns before the disposal has (the value used to lose now and then, and the call to return
    /// while the source still held its subscriber).
    @Test func anAdmittedValueWinsItsRaceWithTheDeadline() async {
        for round in 0..<1_000 {
            let scheduler = VirtualTimeScheduler()
            let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
            let disposedByValue = Atomic<Bool?>(value: nil)
            let signal = Signal<Int, NoError> { subscriber in
                _ = captured.swap(subscriber)
                return ActionDisposable { _ = disposedByValue.swap(Thread.current.threadDictionary["sendsTheValue"] != nil) }
            }
            async let outcome = signal.first(within: .seconds(1), scheduler: scheduler)
            await scheduler.waitUntilScheduled(1)
            await concurrently(2) { index in
                if index == 0 {
                    Thread.current.threadDictionary["sendsTheValue"] = true
                    captured.with { $0 }?.putNext(1)
                } else {
                    scheduler.advance(by: .seconds(1))
                }
            }
            let result = await outcome
            let byValue = disposedByValue.with { $0 }
            #expect(byValue != nil, "round \(round): returned before the subscription was disposed")
            #expect(result == (byValue == true ? .value(1) : .timedOut), "round \(round): disposed by the value: \(byValue ?? false)")
        }
    }

    /// The deadline passes first; the task is cancelled while the source's disposable runs: the
    /// deadline stays the outcome (it used to read as `.cancelled`, a backend that was too slow reported
    /// as a client that went away).
    @Test func aDeadlineThatPassedFirstStaysTheOutcomeIfTheTaskIsCancelledDuringTheDisposal() async {
        let scheduler = VirtualTimeScheduler()
        let waiting = Atomic<Task<FirstValueOutcome<Int>, Never>?>(value: nil)
        let signal = Signal<Int, NoError> { _ in ActionDisposable { waiting.with { $0 }?.cancel() } }
        let task = Task { await signal.first(within: .seconds(1), scheduler: scheduler) }
        _ = waiting.swap(task)
        await scheduler.waitUntilScheduled(1)
        scheduler.advance(by: .seconds(2))
        #expect(await task.value == .timedOut)
    }

    /// Once the deadline is armed, the wait is under way: a cancellation that returned before the value
    /// was sent is the outcome, every time (the value used to win now and then: the deadline was armed
    /// before the cancellation handler was installed).
    @Test func aCancellationBeforeTheValueIsCancelledEveryTime() async {
        for round in 0..<1_000 {
            let scheduler = VirtualTimeScheduler()
            let captured = Atomic<Subscriber<Int, NoError>?>(value: nil)
            let signal = Signal<Int, NoError> { subscriber in
                _ = captured.swap(subscriber)
                return EmptyDisposable
            }
            let task = Task { await signal.first(within: .seconds(1), scheduler: scheduler) }
            await scheduler.waitUntilScheduled(1)
            await concurrently(1) { _ in
                task.cancel()
                captured.with { $0 }?.putNext(1)
            }
            #expect(await task.value == .cancelled, "round \(round)")
        }
    }

    @Test func theOutcomeGivesItsValue() {
        #expect(FirstValueOutcome.value(2).value == 2)
        #expect(FirstValueOutcome<Int>.empty.value == nil)
        #expect(FirstValueOutcome<Int>.timedOut.value == nil)
        #expect(FirstValueOutcome<Int>.cancelled.value == nil)
    }
}
