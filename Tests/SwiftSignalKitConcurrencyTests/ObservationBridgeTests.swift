import Dispatch
import Observation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

@MainActor @Observable final class CartModel {
    var items: [Int] = []
    var discount = 0
    var label = ""
    var subscription: Disposable?
}

/// Both directions between signals and `@Observable` models, on virtual time moved from the main actor.
@Suite @MainActor struct ObservationBridgeTests {
    @Test func aSignalOfTrackedValuesSendsTheCurrentThenEachChangeCoalesced() {
        let scheduler = VirtualTimeScheduler()
        let cart = CartModel()
        let totals = SignalRecorder(
            Signal.observing(on: scheduler) { cart.items.reduce(0, +) - cart.discount }, scheduler: scheduler)
        #expect(totals.values.isEmpty, "the first read runs on the scheduler")
        scheduler.advance(by: .zero)
        #expect(totals.values == [0])
        cart.items.append(5)
        cart.items.append(7)
        scheduler.advance(by: .zero)
        #expect(totals.values == [0, 12], "two changes before the read: one value, the latest")
        cart.discount = 2
        scheduler.advance(by: .zero)
        #expect(totals.values == [0, 12, 10], "every property the read used is tracked")
        cart.label = "untracked"
        scheduler.advance(by: .zero)
        #expect(totals.values == [0, 12, 10], "a property the read did not use is not tracked")
        totals.dispose()
        cart.items.append(1)
        scheduler.advance(by: .zero)
        #expect(totals.values == [0, 12, 10])
        #expect(scheduler.scheduledActionCount == 0, "a change after dispose() schedules nothing")
    }

    @Test func eachSubscriptionTracksOnItsOwn() {
        let scheduler = VirtualTimeScheduler()
        let cart = CartModel()
        let counts = Signal.observing(on: scheduler) { cart.items.count }
        let first = SignalRecorder(counts, scheduler: scheduler)
        scheduler.advance(by: .zero)
        cart.items.append(1)
        let second = SignalRecorder(counts, scheduler: scheduler)
        scheduler.advance(by: .zero)
        #expect(first.values == [0, 1])
        #expect(second.values == [1])
        first.dispose()
        second.dispose()
    }

    @Test func assignKeepsThePropertyAtTheLatestValueOnTheMainActor() {
        let scheduler = VirtualTimeScheduler()
        let cart = CartModel()
        let labels = ValuePipe<String>()
        let subscription = labels.signal().assign(to: \.label, on: cart, scheduler: scheduler)
        labels.putNext("a")
        labels.putNext("b")
        #expect(cart.label == "", "set in an action of the scheduler")
        #expect(scheduler.scheduledActionCount == 1, "values that arrive together are coalesced")
        scheduler.advance(by: .zero)
        #expect(cart.label == "b")
        labels.putNext("c")
        scheduler.advance(by: .zero)
        #expect(cart.label == "c")
        subscription.dispose()
        labels.putNext("d")
        scheduler.advance(by: .zero)
        #expect(cart.label == "c")
    }

    @Test func assignEndsWhenTheModelIsReleased() {
        let scheduler = VirtualTimeScheduler()
        let source = CountingPipe()
        weak var released: CartModel?
        do {
            let cart = CartModel()
            released = cart
            cart.subscription = source.signal.assign(to: \.label, on: cart, scheduler: scheduler)
        }
        #expect(released == nil, "the subscription holds the model weakly")
        #expect(source.subscribers == 1)
        source.pipe.putNext("late")
        scheduler.advance(by: .zero)
        #expect(source.subscribers == 0, "the next value found the model gone and ended the subscription")
    }

    /// The model's observation registry keeps the last change handler until the next change; disposing
    /// must not leave the model (captured by the read) behind with it.
    @Test func disposingReleasesTheModelsTheReadCaptured() {
        let scheduler = VirtualTimeScheduler()
        weak var released: CartModel?
        do {
            let cart = CartModel()
            released = cart
            let counts = SignalRecorder(Signal.observing(on: scheduler) { cart.items.count }, scheduler: scheduler)
            scheduler.advance(by: .zero)
            #expect(counts.values == [0])
            counts.dispose()
        }
        #expect(released == nil)
    }

    @Test func aValueWaitingWhenDisposedIsNeverSet() {
        let scheduler = VirtualTimeScheduler()
        let cart = CartModel()
        let labels = ValuePipe<String>()
        let subscription = labels.signal().assign(to: \.label, on: cart, scheduler: scheduler)
        labels.putNext("pending")
        subscription.dispose()
        cart.label = "reset"
        scheduler.advance(by: .zero)
        #expect(cart.label == "reset")
    }

    @Test func onTheMainQueueByDefault() async {
        let cart = CartModel()
        cart.items = [1, 2]
        #expect(await Signal.observing { cart.items.count }.first() == 2)
        let labels = ValuePipe<String>()
        let subscription = labels.signal().assign(to: \.label, on: cart)
        labels.putNext("main")
        await eventually { cart.label == "main" }
        subscription.dispose()
    }
}

@Suite struct ObservationBridgeMisuseTests {
    @Test func aSchedulerOffTheMainActorStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let done = DispatchSemaphore(value: 0)
            _ = Signal.observing(on: Queue(name: "not-main")) { 1 }.start(next: { _ in done.signal() })
            _ = await wait(done)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Signal.observing(on:_:): the scheduler ran an action off the main actor"))
    }
}

/// A pipe that counts its subscribers.
final class CountingPipe: Sendable {
    let pipe = ValuePipe<String>()
    private let count = Atomic(value: 0)

    var subscribers: Int { self.count.with { $0 } }

    var signal: Signal<String, NoError> {
        return Signal { subscriber in
            self.count.modify { $0 + 1 }
            let inner = self.pipe.signal().start(next: { subscriber.putNext($0) })
            return ActionDisposable {
                inner.dispose()
                self.count.modify { $0 - 1 }
            }
        }
    }
}
