import Dispatch
import Testing

@testable import SwiftSignalKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The subscriber's bookkeeping of callbacks in progress, driven with made-up thread identities so that
/// every interleaving below is exact: first thread, second thread, and the overflow beyond two.
@Suite struct SubscriberStateMachineTests {
    /// Distinct thread identities for the state machine (it only compares them with `pthread_equal`).
    private func threads(_ count: Int) -> [pthread_t] {
        #if canImport(Darwin)
            return (1...count).map { pthread_t(bitPattern: $0)! }
        #else
            return (1...count).map { pthread_t($0) }
        #endif
    }

    /// What `Subscriber.putNext` does with a value that has a callback: counts it if admitted.
    private func deliver(_ machine: inout SubscriberStateMachine, on thread: pthread_t) -> Bool {
        guard machine.admitsValues else { return false }
        machine.countDelivery(on: thread)
        return true
    }

    @Test func aDisposerWaitsUntilEveryOtherThreadHasReturned() {
        let t = self.threads(5)
        var machine = SubscriberStateMachine()
        // Four threads deliver at once; the second one re-enters.
        for thread in [t[0], t[1], t[2], t[1], t[3]] {
            let delivering = self.deliver(&machine, on: thread)
            #expect(delivering)
        }
        let (action, wasTerminated) = machine.dispose(on: t[4])
        #expect(!wasTerminated)
        #expect(action.waitForOtherThreads != nil)
        let afterDispose = self.deliver(&machine, on: t[0])
        #expect(!afterDispose, "no event is delivered after dispose")
        // The deliveries end in an order that empties the second slot (refilled from the overflow), then
        // the first (refilled from the second); the waiter is released only by the last one.
        for thread in [t[1], t[0], t[2], t[1]] {
            let waiters = machine.endDelivery(on: thread)
            #expect(waiters)
            let released = machine.takeReleasedWaiters()
            #expect(released.isEmpty)
        }
        let waiters = machine.endDelivery(on: t[3])
        #expect(waiters)
        let released = machine.takeReleasedWaiters()
        #expect(released.count == 1)
        // Nothing is in progress any more: another disposer does not wait.
        let (later, alreadyTerminated) = machine.dispose(on: t[4])
        #expect(alreadyTerminated)
        #expect(later.waitForOtherThreads == nil)
    }

    @Test func aDisposerInsideItsOwnCallbackDoesNotWait() {
        let t = self.threads(3)
        var machine = SubscriberStateMachine()
        for thread in t {
            let delivering = self.deliver(&machine, on: thread)
            #expect(delivering)
        }
        // The third thread (in the overflow) disposes from inside its own callback: waiting there could
        // deadlock with another such disposer, so it does not wait.
        let (action, _) = machine.dispose(on: t[2])
        #expect(action.waitForOtherThreads == nil)
        for thread in [t[2], t[0], t[1]] {
            let waiters = machine.endDelivery(on: thread)
            #expect(!waiters)
        }
    }

    @Test func aForwardedTerminalEventIsNotCountedWhenNoCallbackRuns() {
        let t = self.threads(2)
        var machine = SubscriberStateMachine()
        let action = machine.terminate(on: t[0], delivering: false)
        #expect(action != nil)
        // Nothing runs, and nothing can start after termination: counting the forward would cost a lock
        // round trip for nothing.
        let counted = machine.countForward(on: t[0])
        #expect(!counted)
        let (disposal, wasTerminated) = machine.dispose(on: t[1])
        #expect(wasTerminated)
        #expect(disposal.waitForOtherThreads == nil)
    }

    @Test func aForwardedTerminalEventIsCountedWhileAnotherThreadDelivers() {
        let t = self.threads(3)
        var machine = SubscriberStateMachine()
        let delivering = self.deliver(&machine, on: t[1])
        #expect(delivering)
        let action = machine.terminate(on: t[0], delivering: false)
        #expect(action != nil)
        let counted = machine.countForward(on: t[0])
        #expect(counted)
        // A dispose reached from inside the forward (the downstream terminating disposes its upstream)
        // does not wait for the other thread, as it would not from inside a callback...
        let (inside, _) = machine.dispose(on: t[0])
        #expect(inside.waitForOtherThreads == nil)
        // ...while a disposer on a third thread waits for both.
        let (outside, _) = machine.dispose(on: t[2])
        #expect(outside.waitForOtherThreads != nil)
        let afterForward = machine.endDelivery(on: t[0])
        #expect(afterForward)
        #expect(machine.takeReleasedWaiters().isEmpty)
        let afterCallback = machine.endDelivery(on: t[1])
        #expect(afterCallback)
        #expect(machine.takeReleasedWaiters().count == 1)
    }

    @Test func aForwardInsideTheForwardersOwnCallbackIsNotCounted() {
        // A re-entrant terminal event (sent from inside this subscriber's own value callback on the same
        // thread) needs no count: that thread is already delivering.
        let t = self.threads(1)
        var machine = SubscriberStateMachine()
        let delivering = self.deliver(&machine, on: t[0])
        #expect(delivering)
        _ = machine.terminate(on: t[0], delivering: false)
        let counted = machine.countForward(on: t[0])
        #expect(!counted)
        let (inside, _) = machine.dispose(on: t[0])
        #expect(inside.waitForOtherThreads == nil)
    }

    @Test func aFirstEventOnlySubscriberTerminatesOnItsFirstEventWithoutCounting() {
        let t = self.threads(2)
        var machine = SubscriberStateMachine(firstEventOnly: true)
        #expect(!machine.admitsValues, "a value is not delivered the ordinary way")
        #expect(!machine.isTerminated)
        let first = machine.takeFirstEvent()
        #expect(first != nil)
        #expect(machine.isTerminated)
        #expect(machine.isIdle, "the first event's callback is not counted")
        // Every later event is dropped, whatever its kind.
        #expect(machine.takeFirstEvent() == nil)
        #expect(machine.terminate(on: t[1], delivering: true) == nil)
        // The owner's dispose (cancellation) finds nothing to wait for.
        let (disposal, wasTerminated) = machine.dispose(on: t[1])
        #expect(wasTerminated)
        #expect(disposal.waitForOtherThreads == nil)
    }

    @Test func aFirstEventOnlySubscribersTerminalEventIsNotCounted() {
        let t = self.threads(1)
        var machine = SubscriberStateMachine(firstEventOnly: true)
        let action = machine.terminate(on: t[0], delivering: true)
        #expect(action != nil)
        #expect(machine.isIdle)
        #expect(machine.takeFirstEvent() == nil, "a value after the completion is dropped")
    }

    @Test func anOrdinarySubscriberTakesNoFirstEvent() {
        var machine = SubscriberStateMachine()
        #expect(machine.admitsValues)
        #expect(machine.takeFirstEvent() == nil)
        #expect(!machine.isTerminated)
    }
}
