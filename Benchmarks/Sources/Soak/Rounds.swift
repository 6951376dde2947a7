// One round of the soak check: subscriptions made and ended across the operators and the bridges, the
// way a server makes and ends them for its clients. Every subscription is disposed or finishes before
// the round returns, so the memory a round leaves behind should not grow from one round to the next.

import SwiftSignalKit
import SwiftSignalKitConcurrency
import Synchronization

/// Counts deliveries, so that every round can check that its subscriptions did receive.
final class Deliveries: Sendable {
    let count = Atomic<Int>(0)

    func add(_: some Any) {
        self.count.add(1, ordering: .relaxed)
    }
}

/// What the rounds share: queues, sources that live for the whole run (as a server's feeds and caches
/// do, so that what a subscription leaves in a source's member list adds up from round to round), and
/// the deliberate leak of `--leak`.
final class SoakContext: Sendable {
    let queue = Queue()
    let deliveries = Deliveries()
    let feed = ValuePipe<Int>()
    let latest = ValuePromise<Int>(0)
    let promise = Promise<Int>(0)
    let replaying = ReplayingValuePipe<Int>(0)
    let shared: Signal<Int, NoError>
    let combined: Signal<(Int, Int), NoError>
    /// With `--leak`, every round keeps one subscription for good: the check must then fail.
    let leak: Bool
    let leaked = Mutex<[Disposable]>([])

    init(leak: Bool) {
        self.leak = leak
        self.shared = self.feed.signal() |> share(replay: .latest)
        self.combined = combineLatest(self.feed.signal(), self.latest.get())
    }
}

/// Subscriptions to the long-lived sources, made and ended in every round.
func longLivedRound(_ context: SoakContext, _ round: Int) {
    let deliveries = context.deliveries
    let subscriptions = [
        (context.feed.signal() |> map { $0 + 1 } |> filter { $0 > 0 }).start(next: deliveries.add),
        context.latest.get().start(next: deliveries.add, completed: {}),
        context.promise.get().start(next: deliveries.add),
        context.replaying.signal().start(next: deliveries.add),
        context.shared.start(next: deliveries.add),
        context.combined.start(next: deliveries.add),
    ]
    context.feed.putNext(round)
    context.latest.set(round)
    context.promise.set(.single(round))
    context.replaying.putNext(round)
    for subscription in subscriptions {
        subscription.dispose()
    }
}

/// The core operators: a hot source and a promise with several stages each, the timing operators on a
/// real queue (their timers are made and cancelled every round), and a synchronous restart loop.
func coreRound(_ context: SoakContext, _ round: Int) {
    let deliveries = context.deliveries
    let pipe = ValuePipe<Int>()
    let promise = ValuePromise<Int>(round)
    let shared = pipe.signal() |> share(replay: .latest)
    var subscriptions: [Disposable] = []
    subscriptions.append((pipe.signal() |> map { $0 + 1 } |> filter { $0 > 0 }).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> filter { $0 >= 0 } |> map { "\($0)" }).start(next: deliveries.add))
    subscriptions.append(promise.get().start(next: deliveries.add, completed: {}))
    subscriptions.append(combineLatest(pipe.signal(), promise.get()).start(next: deliveries.add))
    subscriptions.append(shared.start(next: deliveries.add))
    subscriptions.append(shared.start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> mapToSignal { Signal<Int, NoError>.single($0) }).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> take(2) |> reduceLeft(value: 0, f: +)).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> distinctUntilChanged).start(next: deliveries.add))
    subscriptions.append(zip(pipe.signal(), promise.get()).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> deliverOn(context.queue)).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> debounce(0.001, scheduler: context.queue)).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> throttle(0.001, scheduler: context.queue)).start(next: deliveries.add))
    subscriptions.append((pipe.signal() |> delay(0.0005, queue: context.queue)).start(next: deliveries.add))
    subscriptions.append(
        (pipe.signal() |> timeout(10, queue: context.queue, alternate: .never())).start(next: deliveries.add))
    subscriptions.append(
        (promise.get() |> timeout(perValue: 10, scheduler: context.queue, alternate: .never())).start(next: deliveries.add))
    subscriptions.append(interval(10, scheduler: context.queue).start(next: deliveries.add))
    subscriptions.append(
        (Signal<Int, NoError>.single(round) |> restart |> take(3) |> scan(0, +)).start(next: deliveries.add))
    let keptAlive = pipe.signal().start(next: deliveries.add)
    pipe.putNext(round)
    pipe.putNext(round + 1)
    promise.set(round + 2)
    for subscription in subscriptions {
        subscription.dispose()
    }
    if context.leak {
        context.leaked.withLock { $0.append(keptAlive) }
    } else {
        keptAlive.dispose()
    }
}

/// The bridges: awaiting first values, iterating with `for await` and cancelling, async work inside a
/// pipeline, signals made from async code, and an actor on a queue.
func bridgeRound(_ context: SoakContext, _ round: Int, actor: QueueLocalActor<Int>) async {
    let deliveries = context.deliveries
    deliveries.add(try? await Signal<Int, NoError>.single(round).get())
    deliveries.add(try? await (Signal<Int, NoError>.single(round) |> mapAsync { $0 + 1 }).get())
    deliveries.add(try? await Signal<Int, Error>(operation: { round }).get())

    // A stream cancelled while a producer sends, and one that ends with its source.
    let pipe = ValuePipe<Int>()
    let iterating = Task {
        for await value in pipe.signal().values {
            deliveries.add(value)
        }
    }
    let promise = ValuePromise<Int>(round)
    let ended = Task {
        for await value in (promise.get() |> take(1)).values {
            deliveries.add(value)
        }
    }
    for value in 0..<4 {
        pipe.putNext(value)
        await Task.yield()
    }
    iterating.cancel()
    await iterating.value
    await ended.value

    // A value awaited while the task waiting for it is cancelled.
    let never = Task { try? await Signal<Int, NoError>.never().get() }
    never.cancel()
    _ = await never.value

    // An actor on a queue, subscribed to a source, then disposed.
    let subscription = actor.subscribe(pipe.signal()) { actor, value in
        actor.withValueOnQueue { $0 &+= value }
    }
    pipe.putNext(round)
    subscription.dispose()
}
