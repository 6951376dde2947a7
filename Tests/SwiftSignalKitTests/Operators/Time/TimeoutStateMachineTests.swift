import Testing

@testable import SwiftSignalKit

/// `timeout`'s state machine, event by event: who wins the race between the source and the timer, which
/// timer each event cancels, and what disposal hands back.
@Suite struct TimeoutStateMachineTests {
    typealias Machine = TimeoutStateMachine<Int, TestError>

    func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none:
            return "none"
        case .deliver(let item, let timer):
            let wait = item.startsWait.map { ", then wait \($0)" } ?? ""
            return "deliver \(item.event)\(wait)\(timer == nil ? "" : ", cancelling a timer")"
        case .cancel:
            return "cancel a timer"
        case .release(let event, let timer):
            return "release \(event)\(timer == nil ? "" : ", cancelling a timer")"
        case .switchToAlternate(let timer, _):
            return "switch to the alternate\(timer == nil ? "" : ", releasing its timer")"
        case .tearDown(let timer, let undelivered, let alternate):
            return "tear down\(timer == nil ? "" : ", cancelling a timer"), \(undelivered.count) undelivered"
                + (alternate == nil ? "" : ", releasing the alternate")
        case .retiringAlternate(_, let then):
            return "\(describe(then)), retiring the alternate"
        }
    }

    /// The timer an action disposes, if any.
    func timer(in action: Machine.Action) -> Disposable? {
        switch action {
        case .deliver(_, let timer), .release(_, let timer), .tearDown(let timer, _, _): return timer
        case .cancel(let timer): return timer
        case .switchToAlternate(let timer, _): return timer
        case .retiringAlternate(_, let then): return self.timer(in: then)
        case .none: return nil
        }
    }

    @Test func whenTheSourceWinsItsTimerIsCancelledAndItsEventsPass() {
        var machine = Machine(mode: .firstEvent, alternate: .never())
        let timer = ActionDisposable {}
        #expect(describe(machine.timerArmed(after: 0, timer)) == "none")
        let first = machine.sourceSent(.Next(1))
        #expect(describe(first) == "deliver Next(1), cancelling a timer, retiring the alternate")
        #expect(self.timer(in: first) === timer)
        #expect(describe(machine.timerFired(after: 0)) == "none", "the timer lost the race")
        #expect(describe(machine.sourceSent(.Next(2))) == "none", "queued for the thread that delivers")
        #expect(SwiftSignalKitTests.describe(machine.nextDelivery(resuming: false).map(\.event)) == "deliver Next(2)")
        #expect(SwiftSignalKitTests.describe(machine.nextDelivery(resuming: false).map(\.event)) == "idle")
        #expect(describe(machine.sourceSent(.Completion)) == "deliver Completion")
        #expect(describe(machine.sourceSent(.Next(3))) == "release Next(3)", "nothing after the terminal event")
    }

    /// A fired timer's disposable may be a user scheduler's, whose `deinit` is user code: the machine
    /// hands it back with the switch, to be released after unlocking.
    @Test func theTimerThatWinsIsHandedBackToBeReleasedOutsideTheLock() {
        var machine = Machine(mode: .everyGap, alternate: .never())
        let timer = ActionDisposable {}
        _ = machine.timerArmed(after: 0, timer)
        let fired = machine.timerFired(after: 0)
        #expect(self.timer(in: fired) === timer)
        var early = Machine(mode: .firstEvent, alternate: .never())
        #expect(describe(early.timerFired(after: 0)) == "switch to the alternate", "fired before it was stored")
    }

    @Test func whenTheTimerWinsOnlyTheAlternatesEventsPass() {
        var machine = Machine(mode: .firstEvent, alternate: .never())
        _ = machine.timerArmed(after: 0, ActionDisposable {})
        #expect(describe(machine.timerFired(after: 0)) == "switch to the alternate, releasing its timer")
        #expect(machine.isTimedOut)
        #expect(describe(machine.timerFired(after: 0)) == "none", "the race is decided once")
        #expect(describe(machine.sourceSent(.Next(1))) == "release Next(1)", "the source lost")
        #expect(describe(machine.alternateSent(.Next(-1))) == "deliver Next(-1)")
        #expect(describe(machine.alternateSent(.Completion)) == "none", "queued behind -1")
        #expect(!machine.isTimedOut)
        #expect(describe(machine.alternateSent(.Next(-2))) == "release Next(-2)", "nothing after the terminal event")
    }

    @Test func theAlternateIsIgnoredWhileTheSourceIsWinning() {
        var machine = Machine(mode: .firstEvent, alternate: .never())
        #expect(describe(machine.alternateSent(.Next(-1))) == "release Next(-1)")
        _ = machine.sourceSent(.Next(1))
        #expect(describe(machine.alternateSent(.Next(-1))) == "release Next(-1)")
    }

    /// Once the source has won for good, the alternate can never start: the machine hands it out, to be
    /// released after unlocking, rather than holding it and what it captures for the rest of the
    /// subscription (a probe, 2026-12-02). Every gap can still time out in every-gap mode, so it is kept
    /// there until the end.
    @Test func theAlternateIsHandedOutOnceTheSourceHasWonForGood() {
        let alternate = Signal<Int, TestError>.never()
        var machine = Machine(mode: .firstEvent, alternate: alternate)
        let first = machine.sourceSent(.Next(1))
        guard case .retiringAlternate(let retired, _) = first else {
            Issue.record("the first value kept the alternate: \(describe(first))")
            return
        }
        #expect(retired === alternate)
        #expect(machine.alternate == nil)
        #expect(describe(machine.disposed()) == "tear down, 0 undelivered", "handed out once")

        var gaps = Machine(mode: .everyGap, alternate: alternate)
        #expect(describe(gaps.sourceSent(.Next(1))) == "deliver Next(1), then wait 1")
        #expect(gaps.alternate != nil, "a later gap may still time out")
        _ = gaps.nextDelivery(resuming: false)
        #expect(describe(gaps.sourceSent(.Completion)) == "deliver Completion, retiring the alternate")
        #expect(gaps.alternate == nil)
    }

    @Test func everyGapModeFollowsTheWaitAfterTheLatestValue() {
        var machine = Machine(mode: .everyGap, alternate: .never())
        let first = ActionDisposable {}
        _ = machine.timerArmed(after: 0, first)
        let sent = machine.sourceSent(.Next(1))
        #expect(describe(sent) == "deliver Next(1), then wait 1, cancelling a timer")
        #expect(self.timer(in: sent) === first)
        #expect(describe(machine.timerFired(after: 0)) == "none", "replaced by the wait after value 1")
        let late = ActionDisposable {}
        let refused = machine.timerArmed(after: 0, late)
        #expect(describe(refused) == "cancel a timer", "a timer scheduled after its wait ended")
        #expect(self.timer(in: refused) === late)
        let second = ActionDisposable {}
        #expect(describe(machine.timerArmed(after: 1, second)) == "none")
        let queued = machine.sourceSent(.Next(2))
        #expect(describe(queued) == "cancel a timer", "value 2 is queued; the wait after value 1 is over")
        #expect(self.timer(in: queued) === second)
        #expect(describe(machine.timerFired(after: 1)) == "none")
        #expect(describe(machine.timerFired(after: 2)) == "switch to the alternate")
        #expect(describe(machine.sourceSent(.Next(3))) == "release Next(3)")
    }

    @Test func aTerminalEventFromTheSourceCancelsTheWait() {
        var machine = Machine(mode: .everyGap, alternate: .never())
        _ = machine.timerArmed(after: 0, ActionDisposable {})
        #expect(describe(machine.sourceSent(.Error(TestError(code: 1)))).hasPrefix("deliver Error("))
        #expect(describe(machine.timerFired(after: 0)) == "none")
        #expect(describe(machine.timerArmed(after: 0, ActionDisposable {})) == "cancel a timer")
    }

    @Test func disposalHandsBackTheTimerAndTheEventsNotDelivered() {
        var machine = Machine(mode: .firstEvent, alternate: .never())
        let timer = ActionDisposable {}
        _ = machine.timerArmed(after: 0, timer)
        let disposed = machine.disposed()
        #expect(describe(disposed) == "tear down, cancelling a timer, 0 undelivered, releasing the alternate")
        #expect(self.timer(in: disposed) === timer)
        #expect(describe(machine.timerFired(after: 0)) == "none")
        #expect(describe(machine.sourceSent(.Next(1))) == "release Next(1)")

        var delivering = Machine(mode: .firstEvent, alternate: .never())
        _ = delivering.sourceSent(.Next(1))  // being delivered
        _ = delivering.sourceSent(.Next(2))  // queued
        _ = delivering.sourceSent(.Completion)  // queued
        #expect(describe(delivering.disposed()) == "tear down, 2 undelivered")
        #expect(SwiftSignalKitTests.describe(delivering.nextDelivery(resuming: false).map(\.event)) == "idle")
    }
}
