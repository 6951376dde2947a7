// This library's side of every shape.

import SwiftSignalKit
import SwiftSignalKitConcurrency

final class HotMapSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let pipe = ValuePipe<Int>()
    let mapped: Signal<Int, NoError>
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.mapped = self.pipe.signal() |> map { $0 + 1 }
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = self.mapped.start(next: { sink.receive($0) })
        }
    }

    func check() async -> String? {
        self.pipe.putNext(1)
        return self.sink.expect(self.count, "values through map")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
    }
}

final class PromiseSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var promises: Handles<ValuePromise<Int>>
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.promises = Handles(count: count)
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            let promise = ValuePromise<Int>(0)
            self.promises[index] = promise
            self.held[index] = promise.get().start(next: { sink.receive($0) })
        }
    }

    func check() async -> String? {
        for promise in self.promises.all { promise.set(1) }
        return self.sink.expect(2 * self.count, "the initial value and one set per promise")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
        self.promises.endAll { _ in }
    }
}

final class IdleChainSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let chain = Signal<Int, NoError>.never() |> map { $0 + 1 } |> filter { $0 > 0 }
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = self.chain.start(next: { sink.receive($0) })
        }
    }

    func check() async -> String? {
        return self.sink.expect(0, "values from never()")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
    }
}

final class CombineLatestSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let first = ValuePipe<Int>()
    let second = ValuePipe<Int>()
    let combined: Signal<(Int, Int), NoError>
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.combined = combineLatest(self.first.signal(), self.second.signal())
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = self.combined.start(next: { sink.receive($0.0 + $0.1) })
        }
    }

    func check() async -> String? {
        self.first.putNext(1)
        self.second.putNext(2)
        return self.sink.expect(self.count, "pairs")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
    }
}

/// A source that keeps its subscribers in a preallocated list, so that the harness can tell when every
/// task has subscribed and can wake each of them.
final class SubscriberListSource: Sendable {
    let subscribers: Slots<Subscriber<Int, NoError>>
    let signal: Signal<Int, NoError>

    init(count: Int) {
        let subscribers = Slots<Subscriber<Int, NoError>>(count: count)
        self.subscribers = subscribers
        self.signal = Signal { subscriber in
            subscribers.append(subscriber)
            return EmptyDisposable
        }
    }
}

final class ForAwaitSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let source: SubscriberListSource
    var tasks: Handles<Task<Void, Never>>

    init(count: Int) {
        self.count = count
        self.source = SubscriberListSource(count: count)
        self.tasks = Handles(count: count)
    }

    func subscribe() async {
        let (sink, signal) = (self.sink, self.source.signal)
        for index in 0..<self.count {
            self.tasks[index] = Task.detached {
                for await value in signal.values {
                    sink.receive(value)
                }
            }
        }
        await waitUntil { self.source.subscribers.count == self.count }
    }

    func check() async -> String? {
        self.source.subscribers.forEach { $0.putNext(1) }
        await waitUntil { self.sink.count >= self.count }
        return self.sink.expect(self.count, "values iterated")
    }

    func end() async {
        for subscriber in self.source.subscribers.takeAll() { subscriber.putCompletion() }
        for task in self.tasks.all { await task.value }
        self.tasks.endAll { _ in }
    }
}

final class PendingGetSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let source: SubscriberListSource
    var tasks: Handles<Task<Void, Never>>

    init(count: Int) {
        self.count = count
        self.source = SubscriberListSource(count: count)
        self.tasks = Handles(count: count)
    }

    func subscribe() async {
        let (sink, signal) = (self.sink, self.source.signal)
        for index in 0..<self.count {
            self.tasks[index] = Task.detached {
                if let value = try? await signal.get() {
                    sink.receive(value)
                }
            }
        }
        await waitUntil { self.source.subscribers.count == self.count }
    }

    func check() async -> String? {
        for subscriber in self.source.subscribers.takeAll() { subscriber.putNext(1) }
        for task in self.tasks.all { await task.value }
        return self.sink.expect(self.count, "values awaited")
    }

    func end() async {
        self.tasks.endAll { _ in }
    }
}

final class QueueLocalActorSignalKit: LiveSubscriptions {
    let count: Int
    let queue = Queue()
    var actors: Handles<QueueLocalActor<Int>>

    init(count: Int) {
        self.count = count
        self.actors = Handles(count: count)
    }

    func subscribe() async {
        for index in 0..<self.count {
            self.actors[index] = QueueLocalActor(queue: self.queue, value: index)
        }
    }

    func check() async -> String? {
        var total = 0
        for actor in self.actors.all {
            total += await actor.withValue { @Sendable value in
                value += 1
                return 1
            }
        }
        return total == self.count ? nil : "\(total) actors answered, \(self.count) expected"
    }

    func end() async {
        self.actors.endAll { _ in }
        // Each actor releases its value in a block on the queue: wait for them.
        await withCheckedContinuation { continuation in
            self.queue.async { continuation.resume() }
        }
    }
}

/// As servers write it: `func quotes(_ symbol: String) -> Signal<Quote, NoError> { feed.signal() |> ... }`,
/// a fresh chain for each subscriber, kept alive by its subscription.
final class HotMapPerSubscriberSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let pipe = ValuePipe<Int>()
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = (self.pipe.signal() |> map { $0 + 1 }).start(next: { sink.receive($0) })
        }
    }

    func check() async -> String? {
        self.pipe.putNext(1)
        return self.sink.expect(self.count, "values through map")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
    }
}

/// A fresh `never() |> map |> filter` for each subscription.
final class IdleChainPerSubscriptionSignalKit: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var held: Handles<Disposable>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            let chain = Signal<Int, NoError>.never() |> map { $0 + 1 } |> filter { $0 > 0 }
            self.held[index] = chain.start(next: { sink.receive($0) })
        }
    }

    func check() async -> String? {
        return self.sink.expect(0, "values from never()")
    }

    func end() async {
        self.held.endAll { $0.dispose() }
    }
}
