import Testing

@testable import SwiftSignalKit

extension SwitchToLatestStateMachine.Action {
    /// The inner signal the action subscribes to.
    var subscribesTo: UInt64? {
        if case .subscribe(let id) = self { return id }
        return nil
    }

    /// The subscription the action disposes.
    var disposed: Disposable? {
        switch self {
        case .none, .complete, .subscribe: return nil
        case .dispose(let subscription): return subscription
        case .fail(let subscription): return subscription
        }
    }

    var completes: Bool {
        if case .complete = self { return true }
        return false
    }

    var fails: Bool {
        if case .fail = self { return true }
        return false
    }

    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}

/// More of `switchToLatest`'s state machine, event by event: subscriptions handed back, completion,
/// failure, termination.
extension SwitchToLatestStateMachineTests {
    @Test func onlyTheLatestInnerSignalPassesAndItsSubscriptionReplacesThePrevious() {
        var machine = SwitchToLatestStateMachine()
        let first = machine.outerSentInner()
        #expect(first.subscribesTo == 1 && first.disposed == nil)
        let firstSubscription = ActionDisposable {}
        let kept = machine.innerStarted(1, disposable: firstSubscription)
        #expect(kept.disposed == nil, "the current inner signal's subscription is kept")
        #expect(machine.isCurrent(1))
        let second = machine.outerSentInner()
        #expect(second.subscribesTo == 2)
        #expect(second.disposed == nil, "the replaced subscription stays until the new one is made")
        #expect(!machine.isCurrent(1))
        #expect(machine.isCurrent(2))
        // A subscription to the first inner signal made late, after the second was sent: disposed.
        let late = ActionDisposable {}
        let lateAction = machine.innerStarted(1, disposable: late)
        #expect(lateAction.disposed === late, "a replaced inner signal's subscription is disposed")
        let secondStarted = machine.innerStarted(2, disposable: ActionDisposable {})
        #expect(secondStarted.disposed === firstSubscription, "the replaced subscription is handed back now")
        let replacedCompleted = machine.innerCompleted(1)
        #expect(replacedCompleted.isNone, "a replaced inner signal completing does nothing")
        let replacedFailed = machine.innerFailed(1)
        #expect(replacedFailed.isNone, "a replaced inner signal failing does nothing")
        #expect(machine.isCurrent(2))
    }

    /// A new inner signal that ends while it is being subscribed: the subscription it replaces, still
    /// kept, is handed back by the failure, or by the disposal after a completion.
    @Test func aNewInnerThatEndsWhileSubscribingHandsBackTheOneItReplaces() {
        var failing = SwitchToLatestStateMachine()
        _ = failing.outerSentInner()
        let first = ActionDisposable {}
        _ = failing.innerStarted(1, disposable: first)
        _ = failing.outerSentInner()
        let failed = failing.innerFailed(2)
        #expect(failed.fails && failed.disposed === first)

        var completing = SwitchToLatestStateMachine()
        _ = completing.outerSentInner()
        let kept = ActionDisposable {}
        _ = completing.innerStarted(1, disposable: kept)
        _ = completing.outerSentInner()
        #expect(completing.outerCompletedEvent().isNone)
        #expect(completing.innerCompleted(2).completes)
        let second = ActionDisposable {}
        #expect(completing.innerStarted(2, disposable: second).disposed === second, "made after the end")
        #expect(completing.disposed().disposed === kept)
    }

    @Test func theResultCompletesWhenTheOuterAndTheCurrentInnerHaveCompleted() {
        var machine = SwitchToLatestStateMachine()
        _ = machine.outerSentInner()
        let subscription = ActionDisposable {}
        _ = machine.innerStarted(1, disposable: subscription)
        let outer = machine.outerCompletedEvent()
        #expect(outer.isNone, "the current inner signal still runs")
        let inner = machine.innerCompleted(1)
        #expect(inner.completes)
        #expect(machine.isTerminated)
        // The last subscription is kept until the disposal hands it back, outside the lock.
        let disposed = machine.disposed()
        #expect(disposed.disposed === subscription)
        let again = machine.disposed()
        #expect(again.disposed == nil)
    }

    @Test func anOuterCompletionWithNoInnerRunningCompletesAtOnce() {
        var machine = SwitchToLatestStateMachine()
        let completed = machine.outerCompletedEvent()
        #expect(completed.completes)
        let late = machine.outerSentInner()
        #expect(late.isNone, "nothing starts after the end")
        let again = machine.outerCompletedEvent()
        #expect(again.isNone)
    }

    @Test func theCurrentInnerSignalsFailureFailsTheResultAndHandsBackItsSubscription() {
        var machine = SwitchToLatestStateMachine()
        _ = machine.outerSentInner()
        let subscription = ActionDisposable {}
        _ = machine.innerStarted(1, disposable: subscription)
        let failed = machine.innerFailed(1)
        #expect(failed.fails)
        #expect(failed.disposed === subscription)
        #expect(machine.isTerminated)
        let again = machine.innerFailed(1)
        #expect(again.isNone, "once")
    }

    @Test func terminationHandsBackTheCurrentSubscriptionAndLaterEventsDoNothing() {
        var machine = SwitchToLatestStateMachine()
        _ = machine.outerSentInner()
        let subscription = ActionDisposable {}
        _ = machine.innerStarted(1, disposable: subscription)
        let failed = machine.outerFailed()
        #expect(failed.fails && failed.disposed === subscription)
        #expect(!machine.isCurrent(1))
        let late = ActionDisposable {}
        let lateAction = machine.innerStarted(1, disposable: late)
        #expect(lateAction.disposed === late, "a subscription made after the end is disposed")
        let completed = machine.innerCompleted(1)
        #expect(completed.isNone)
    }
}
