import Testing

@testable import SwiftSignalKit

/// More of `switchToLatest`'s state machine, event by event: subscriptions handed back, completion,
/// termination.
extension SwitchToLatestStateMachineTests {
    @Test func onlyTheLatestInnerSignalPassesAndItsSubscriptionReplacesThePrevious() {
        var machine = SwitchToLatestStateMachine()
        let first = machine.outerSentInner()
        #expect(first?.id == 1 && first?.disposePrevious == nil)
        let firstSubscription = ActionDisposable {}
        guard case .keep(let none) = machine.innerStarted(1, disposable: firstSubscription) else {
            Issue.record("the current inner signal's subscription is kept")
            return
        }
        #expect(none == nil)
        #expect(machine.isCurrent(1))
        let second = machine.outerSentInner()
        #expect(second?.id == 2)
        #expect(second?.disposePrevious === firstSubscription, "the replaced subscription is handed back")
        #expect(!machine.isCurrent(1))
        #expect(machine.isCurrent(2))
        // The first inner signal's subscription was made late, after the second was sent: disposed.
        guard case .disposeNew = machine.innerStarted(1, disposable: ActionDisposable {}) else {
            Issue.record("a replaced inner signal's subscription is disposed")
            return
        }
        let replacedCompleted = machine.innerCompleted(1)
        #expect(!replacedCompleted, "a replaced inner signal completing does nothing")
    }

    @Test func theResultCompletesWhenTheOuterAndTheCurrentInnerHaveCompleted() {
        var machine = SwitchToLatestStateMachine()
        _ = machine.outerSentInner()
        let subscription = ActionDisposable {}
        _ = machine.innerStarted(1, disposable: subscription)
        let outer = machine.outerCompletedEvent()
        #expect(!outer, "the current inner signal still runs")
        let inner = machine.innerCompleted(1)
        #expect(inner)
        #expect(machine.isTerminated)
        // The last subscription is kept until termination hands it back, outside the lock.
        #expect(machine.terminate() === subscription)
        #expect(machine.terminate() == nil)
    }

    @Test func anOuterCompletionWithNoInnerRunningCompletesAtOnce() {
        var machine = SwitchToLatestStateMachine()
        let completed = machine.outerCompletedEvent()
        #expect(completed)
        #expect(machine.outerSentInner() == nil, "nothing starts after the end")
        let again = machine.outerCompletedEvent()
        #expect(!again)
    }

    @Test func terminationHandsBackTheCurrentSubscriptionAndLaterEventsDoNothing() {
        var machine = SwitchToLatestStateMachine()
        _ = machine.outerSentInner()
        let subscription = ActionDisposable {}
        _ = machine.innerStarted(1, disposable: subscription)
        #expect(machine.terminate() === subscription)
        #expect(!machine.isCurrent(1))
        guard case .disposeNew = machine.innerStarted(1, disposable: ActionDisposable {}) else {
            Issue.record("a subscription made after the end is disposed")
            return
        }
        let completed = machine.innerCompleted(1)
        #expect(!completed)
    }
}
