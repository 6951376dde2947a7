// A delivered value takes no lock and does not copy the subscriber's value callback (`DeliveryGate` in
// Core/Subscriber.swift): the callback, and whatever it captures, is released only once no delivery
// runs it, by whichever thread is last, and a delivery writes nothing to the objects it captures.

import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

@Suite struct DeliveryGateTests {
    /// An object whose end is recorded, captured by a value callback.
    final class Tracked: Sendable {
        let ended: Atomic<Bool>
        init(_ ended: Atomic<Bool>) { self.ended = ended }
        deinit { _ = self.ended.swap(true) }
    }

    /// Disposed on another thread while a value is being delivered: the callback's captures outlive
    /// `dispose()`, and the delivering thread releases them as its callback returns.
    @Test func aDisposeDuringADeliveryReleasesTheCallbackWhenThatDeliveryReturns() async {
        let ended = Atomic(value: false)
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let delivered = Atomic(value: 0)
        let pipe = ValuePipe<Int>()
        let disposable = Self.subscribe(pipe, capturing: Tracked(ended)) { value in
            _ = delivered.modify { $0 + 1 }
            if value == 1 {
                entered.signal()
                _ = blockingWait(proceed)
            }
        }
        let delivery = Task { await onThread { pipe.putNext(1) } }
        #expect(await wait(entered))
        disposable.dispose()
        #expect(!ended.with { $0 }, "the callback's captures were released while it ran")
        pipe.putNext(2)
        proceed.signal()
        await delivery.value
        #expect(ended.with { $0 }, "the delivery that returned last released the callback")
        #expect(delivered.with { $0 } == 1, "a value sent after dispose() returned was delivered")
    }

    /// The same when the callback disposes its own subscription.
    @Test func aCallbackThatDisposesItsSubscriptionIsReleasedWhenItReturns() {
        let ended = Atomic(value: false)
        let subscription = Atomic<Disposable?>(value: nil)
        let endedInside = Atomic<Bool?>(value: nil)
        let pipe = ValuePipe<Int>()
        _ = subscription.swap(
            Self.subscribe(pipe, capturing: Tracked(ended)) { _ in
                subscription.with { $0 }?.dispose()
                _ = endedInside.swap(ended.with { $0 })
            })
        pipe.putNext(1)
        #expect(endedInside.with { $0 } == false, "released while its own callback ran")
        #expect(ended.with { $0 }, "released when the callback returned")
        _ = subscription.swap(nil)
    }

    /// With no delivery in progress, `dispose()` releases the callback itself, before it returns.
    @Test func anIdleSubscriptionIsReleasedByDispose() {
        let ended = Atomic(value: false)
        let pipe = ValuePipe<Int>()
        let disposable = Self.subscribe(pipe, capturing: Tracked(ended)) { _ in }
        pipe.putNext(1)
        #expect(!ended.with { $0 })
        disposable.dispose()
        #expect(ended.with { $0 }, "dispose() released the callback")
        withExtendedLifetime(disposable) {}
    }

    /// Senders on several threads and a dispose at a random moment, many times: the callback's captures
    /// are released exactly once, never while a delivery runs the callback.
    @Test func theCallbackIsReleasedOnceAfterTheLastDeliveryWhateverTheRace() async {
        let violations = Atomic(value: 0)
        for round in 0..<stressRounds(300) {
            let running = Atomic(value: 0)
            let ended = Atomic(value: false)
            let pipe = ValuePipe<Int>()
            // Made in the callback's capture list, so that the callback holds the only reference.
            let disposable = pipe.signal().start(next: {
                [
                    tracked = TrackedWithCheck({
                        if running.with({ $0 }) != 0 { _ = violations.modify { $0 + 1 } }
                        _ = ended.swap(true)
                    })
                ] _ in
                _ = running.modify { $0 + 1 }
                withExtendedLifetime(tracked) {}
                _ = running.modify { $0 - 1 }
            })
            await concurrently(3) { index in
                if index == 2 {
                    for _ in 0..<(round % 50) { yieldProcessor() }
                    disposable.dispose()
                } else {
                    for value in 0..<200 { pipe.putNext(value) }
                }
            }
            #expect(ended.with { $0 }, "round \(round): the callback was never released")
        }
        #expect(violations.with { $0 } == 0, "the callback was released while a delivery ran it")
    }

    /// An object that runs `onEnd` as it ends.
    final class TrackedWithCheck: Sendable {
        let onEnd: @Sendable () -> Void
        init(_ onEnd: @escaping @Sendable () -> Void) { self.onEnd = onEnd }
        deinit { self.onEnd() }
    }

    /// Subscribes with a callback whose context holds `captured`, and returns the subscription; the
    /// caller keeps no reference to `captured`.
    private static func subscribe(
        _ pipe: ValuePipe<Int>, capturing captured: Tracked, _ body: @escaping @Sendable (Int) -> Void
    ) -> Disposable {
        return pipe.signal().start(next: { value in
            withExtendedLifetime(captured) {}
            body(value)
        })
    }
}
