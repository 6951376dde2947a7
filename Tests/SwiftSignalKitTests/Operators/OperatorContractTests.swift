import Dispatch
import Testing

@testable import SwiftSignalKit

/// One operator, adapted to `Signal<Int, TestError> -> Signal<Int, TestError>` so every operator can be
/// checked against the same contract.
struct OperatorCase: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the operator starts the source (or delivers) asynchronously.
    let isAsynchronous: Bool
    let apply: @Sendable (Signal<Int, TestError>) -> Signal<Int, TestError>

    init(
        _ name: String, async isAsynchronous: Bool = false, _ apply: @escaping @Sendable (Signal<Int, TestError>) -> Signal<Int, TestError>
    ) {
        self.name = name
        self.isAsynchronous = isAsynchronous
        self.apply = apply
    }

    var testDescription: String { self.name }
}

let contractQueue = Queue(name: "contract")
private let contractPool = ThreadPool(threadCount: 2, threadPriority: 0.5)

let operatorCases: [OperatorCase] = [
    OperatorCase("map") { $0 |> map { $0 + 1 } },
    OperatorCase("filter") { $0 |> filter { _ in true } },
    OperatorCase("flatMap") { $0 |> map { Optional($0) } |> flatMap { $0 } |> map { $0 ?? 0 } },
    OperatorCase("mapError") { $0 |> mapError { $0 } },
    OperatorCase("distinctUntilChanged") { $0 |> distinctUntilChanged },
    OperatorCase("distinctUntilChanged(isEqual:)") { $0 |> distinctUntilChanged(isEqual: { _, _ in false }) },
    OperatorCase("take") { $0 |> take(1_000_000) },
    OperatorCase("take(until:)") { $0 |> take(until: { _ in SignalTakeAction(passthrough: true, complete: false) }) },
    OperatorCase("last") { last(signal: $0) |> map { $0 ?? 0 } },
    OperatorCase("takeLast") { takeLast($0) },
    OperatorCase("catch") { $0 |> `catch` { _ in .complete() } },
    OperatorCase("restart") { restart($0) },
    OperatorCase("recurse") { $0 |> recurse(nil) },
    OperatorCase("restartIfError") { restartIfError($0) |> castError(TestError.self) },
    OperatorCase("retry", async: true) { $0 |> retry(0.001, maxDelay: 0.001, onQueue: contractQueue) |> castError(TestError.self) },
    OperatorCase("retry(retryOnError:)", async: true) {
        $0 |> retry(retryOnError: { _ in true }, delayIncrement: 0.001, maxDelay: 0.001, maxRetries: 1, onQueue: contractQueue)
    },
    OperatorCase("combineLatest") { combineLatest($0, .single(1)) |> map { $0 + $1 } },
    OperatorCase("combineLatest(initial values)") { combineLatest($0, 0, .never(), 1) |> map { $0 + $1 } },
    OperatorCase("combineLatest(queue:)", async: true) { combineLatest(queue: contractQueue, $0, .single(1)) |> map { $0 + $1 } },
    OperatorCase("combineLatest(array)") { combineLatest([$0, .single(0)]) |> map { $0.reduce(0, +) } },
    OperatorCase("deliverOn(Queue)", async: true) { $0 |> deliverOn(contractQueue) },
    OperatorCase("deliverOn(ThreadPool)", async: true) { $0 |> deliverOn(contractPool) },
    OperatorCase("runOn(Queue)", async: true) { $0 |> runOn(contractQueue) },
    OperatorCase("runOn(ThreadPool)", async: true) { $0 |> runOn(contractPool) },
    OperatorCase("switchToLatest") { $0 |> map { Signal<Int, TestError>.single($0) } |> switchToLatest },
    OperatorCase("mapToSignal") { $0 |> mapToSignal { .single($0) } },
    OperatorCase("queue") { $0 |> map { Signal<Int, TestError>.single($0) } |> queue },
    OperatorCase("throttled") { $0 |> map { Signal<Int, TestError>.single($0) } |> throttled },
    OperatorCase("mapToQueue") { $0 |> mapToQueue { .single($0) } },
    OperatorCase("mapToThrottled") { $0 |> mapToThrottled { .single($0) } },
    OperatorCase("then") { $0 |> then(.single(0)) },
    OperatorCase("deferred") { signal in deferred { signal } },
    OperatorCase("merge") { merge([$0, .never()]) },
    OperatorCase("reduceLeft(value:f:)") { $0 |> reduceLeft(value: 0, f: +) },
    OperatorCase("reduceLeft(value:f:emit)") {
        $0
            |> reduceLeft(
                value: 0,
                f: { sum, next, emit in
                    emit(next); return sum + next
                })
    },
    OperatorCase("reduceLeft(generator:)") { $0 |> reduceLeft(0, generator: { sum, next in .single((sum + next, .Some(next))) }) },
    OperatorCase("dematerialize/materialize") { $0 |> dematerialize |> materialize },
    OperatorCase("beforeNext") { $0 |> beforeNext { _ in } },
    OperatorCase("afterNext") { $0 |> afterNext { _ in } },
    OperatorCase("beforeStarted") { $0 |> beforeStarted {} },
    OperatorCase("beforeCompleted") { $0 |> beforeCompleted {} },
    OperatorCase("afterCompleted") { $0 |> afterCompleted {} },
    OperatorCase("afterDisposed") { $0 |> afterDisposed {} },
    OperatorCase("withState") { withState($0, { 0 }) },
    OperatorCase("delay", async: true) { $0 |> delay(0.001, queue: contractQueue) },
    OperatorCase("suspendAwareDelay", async: true) { $0 |> suspendAwareDelay(0.001, queue: contractQueue) },
    OperatorCase("timeout", async: true) { $0 |> timeout(60, queue: contractQueue, alternate: .never()) },
]

/// A source that records its subscriptions and can be driven by hand.
final class ControlledSource: Sendable {
    let starts = Counter()
    let disposals = Counter()
    let tracker = LifetimeTracker()
    private let pipe = ValuePipe<Int>()

    var signal: Signal<Int, TestError> {
        return Signal { subscriber in
            let tracked = self.tracker.make()
            let inner = self.pipe.signal().start(next: { subscriber.putNext($0) })
            // Counted once the source listens, so a test that waits for the start can send at once.
            self.starts.increment()
            return ActionDisposable {
                withExtendedLifetime(tracked) {}
                inner.dispose()
                self.disposals.increment()
            }
        }
    }

    func send(_ value: Int) {
        self.pipe.putNext(value)
    }
}

@Suite struct OperatorContractTests {
    @Test(arguments: operatorCases)
    func disposingTheResultDisposesTheSourceAndReleasesEverything(_ operatorCase: OperatorCase) async {
        let source = ControlledSource()
        let callbackTracker = LifetimeTracker()
        let subscription: Disposable
        do {
            let captured = callbackTracker.make()
            subscription = operatorCase.apply(source.signal).start(next: { _ in withExtendedLifetime(captured) {} })
        }
        #expect(await spin(until: { source.starts.value == 1 }), "\(operatorCase.name) starts the source once")
        source.send(1)
        subscription.dispose()
        await drain(contractQueue)
        // `runOn(ThreadPool)` counts a start before its pool thread has stored the source's disposable;
        // a disposal in between is carried out by that thread, once the start returns.
        _ = await spin(until: { source.disposals.value >= 1 && source.tracker.live.value == 0 && callbackTracker.live.value == 0 })
        #expect(source.disposals.value == 1, "\(operatorCase.name) disposes the source exactly once")
        #expect(source.tracker.live.value == 0, "\(operatorCase.name) releases the source's subscription")
        #expect(callbackTracker.live.value == 0, "\(operatorCase.name) releases the subscriber's callbacks")
    }

    /// restartIfError and the retry operators answer an error by subscribing again, so on a source that
    /// always fails they never end; they are left out here.
    @Test(arguments: operatorCases.filter { !$0.name.hasPrefix("restartIfError") && !$0.name.hasPrefix("retry") })
    func terminalEventReleasesEverything(_ operatorCase: OperatorCase) async {
        let tracker = LifetimeTracker()
        let done = DispatchSemaphore(value: 0)
        do {
            let captured = tracker.make()
            let source = Signal<Int, TestError> { subscriber in
                subscriber.putNext(1)
                subscriber.putError(TestError(code: 1))
                return EmptyDisposable
            }
            _ = operatorCase.apply(source).start(
                next: { _ in withExtendedLifetime(captured) {} }, error: { _ in done.signal() },
                completed: {
                    done.signal()
                })
        }
        #expect(await wait(done), "\(operatorCase.name) ends")
        await drain(contractQueue)
        #expect(await spin(until: { tracker.live.value == 0 }), "\(operatorCase.name) releases its callbacks after the terminal event")
    }

    @Test(arguments: operatorCases)
    func disposingFromInsideACallbackDoesNotDeadlock(_ operatorCase: OperatorCase) async {
        let source = ControlledSource()
        let holder = MetaDisposable()
        let received = Counter()
        let firstValue = DispatchSemaphore(value: 0)
        holder.set(
            operatorCase.apply(source.signal).start(next: { _ in
                if received.increment() == 1 {
                    holder.dispose()
                    firstValue.signal()
                }
            }))
        #expect(await spin(until: { source.starts.value == 1 }))
        source.send(1)
        source.send(2)
        let sendsOnlyAtCompletion = ["reduceLeft(value:f:)", "last", "takeLast"].contains { operatorCase.name.hasPrefix($0) }
        if !sendsOnlyAtCompletion {
            #expect(await wait(firstValue), "\(operatorCase.name) delivers and survives a re-entrant dispose")
        }
        holder.dispose()
        await drain(contractQueue)
        #expect(await spin(until: { source.disposals.value == 1 }), "\(operatorCase.name) disposes the source")
    }
}

extension OperatorContractTests {
    /// A loop of synchronous restarts stops once a `take` below the operator has taken enough: the loop
    /// asks the chain below it whether anyone still listens, and the operator must not hide that.
    /// `reduceLeft` did (its steps ran under a subscription of their own), and `start` never returned.
    /// The source fails after 10,000 starts, so a loop that goes on ends the test instead of hanging it.
    ///
    /// Left out: the operators that start asynchronously (the loop is not synchronous then), the ones
    /// that send only at completion, which a restart loop never reaches (`last`, `takeLast`,
    /// `reduceLeft(value:f:)`),
    /// `combineLatest` without initial values, which sends nothing until its other source has started,
    /// after the loop in its first source has returned, and the ones that answer the error by starting
    /// again.
    @Test(
        arguments: operatorCases.filter { operatorCase in
            let sendsOnlyLater = ["last", "takeLast", "reduceLeft(value:f:)", "combineLatest", "combineLatest(array)"]
            return !operatorCase.isAsynchronous && !sendsOnlyLater.contains(operatorCase.name)
                && !operatorCase.name.hasPrefix("restartIfError") && !operatorCase.name.hasPrefix("retry")
        })
    func aSynchronousRestartLoopAboveStopsWhenATakeBelowHasEnough(_ operatorCase: OperatorCase) async {
        let starts = Counter()
        let source = Signal<Int, TestError> { subscriber in
            let start = starts.increment()
            if start > 10_000 {
                subscriber.putError(TestError(code: 1))
            } else {
                subscriber.putNext(start)
                subscriber.putCompletion()
            }
            return EmptyDisposable
        }
        let completed = Flag()
        await onThread {
            _ = (operatorCase.apply(restart(source)) |> take(3)).start(completed: { completed.set() })
        }
        #expect(completed.isSet, "\(operatorCase.name): take(3) completes")
        #expect(starts.value <= 4, "\(operatorCase.name): the loop stops once take(3) has enough (\(starts.value) starts)")
    }
}

@Suite struct OperatorContractStressTests {
    /// Emissions from several threads racing a disposal: the source is disposed exactly once, and once
    /// `dispose()` has returned and the sends in flight have settled, no later send reaches a callback.
    @Test(arguments: operatorCases)
    func emissionsAfterDisposeAreNeverDelivered(_ operatorCase: OperatorCase) async {
        for _ in 0..<20 {
            let source = ControlledSource()
            let delivered = Counter()
            let subscription = operatorCase.apply(source.signal).start(next: { _ in
                delivered.increment()
            })
            await spin(until: { source.starts.value == 1 })
            await concurrently(3) { thread in
                if thread == 0 {
                    subscription.dispose()
                } else {
                    for value in 0..<100 {
                        source.send(value)
                    }
                }
            }
            await drain(contractQueue)
            let settled = delivered.value
            await concurrently(2) { _ in
                for value in 0..<100 {
                    source.send(value)
                }
            }
            await drain(contractQueue)
            #expect(delivered.value == settled, "\(operatorCase.name) delivered a value sent after dispose returned")
            #expect(source.disposals.value == 1, "\(operatorCase.name) disposes the source once")
        }
    }
}
