import Testing

@testable import SwiftSignalKit

/// `debounce` and `throttle`'s state machine, event by event: which timer each value arms or cancels,
/// which values are replaced, and how the source's end and disposal hand back what was held.
@Suite struct DebounceThrottleStateMachineTests {
    typealias Machine = DebounceThrottleStateMachine<Int, TestError>

    func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none:
            return "none"
        case .release(let value):
            return "release \(value)"
        case .arm(let generation, let cancelling, let releasing):
            let replaced = releasing.map { ", releasing \($0)" } ?? ""
            return "arm \(generation)\(cancelling == nil ? "" : ", cancelling a timer")\(replaced)"
        case .cancel:
            return "cancel a timer"
        case .deliver:
            return "deliver"
        case .fired(_, let deliver):
            return deliver ? "deliver, releasing its timer" : "releasing its timer"
        case .end(let timer, let dropped, let undelivered, let deliver):
            var parts = ["end"]
            if timer != nil { parts.append("cancelling a timer") }
            if let dropped { parts.append("releasing \(dropped)") }
            if undelivered.count > 0 { parts.append("\(undelivered.count) undelivered") }
            if deliver { parts.append("then deliver") }
            return parts.joined(separator: ", ")
        }
    }

    /// Takes every queued event, as the deliverer would.
    func delivered(_ machine: inout Machine) -> [String] {
        var events: [String] = []
        while case .deliver(let event) = machine.delivery.step(resuming: false) {
            events.append("\(event)")
        }
        return events
    }

    @Test func debounceRestartsTheQuietPeriodOnEachValue() {
        var machine = Machine(mode: .debounce)
        #expect(describe(machine.valueArrived(1)) == "arm 1")
        #expect(describe(machine.timerScheduled(1, ActionDisposable {})) == "none")
        #expect(describe(machine.valueArrived(2)) == "arm 2, cancelling a timer, releasing 1")
        #expect(describe(machine.timerFired(1)) == "none", "replaced by timer 2")
        let late = ActionDisposable {}
        #expect(describe(machine.timerScheduled(1, late)) == "cancel a timer", "scheduled after it was replaced")
        #expect(describe(machine.timerFired(2)) == "deliver", "timer 2 fired before it was stored")
        #expect(delivered(&machine) == ["Next(2)"])
        #expect(describe(machine.timerFired(2)) == "none", "a timer fires once")
    }

    @Test func throttleKeepsTheWindowAndReplacesItsValue() {
        var machine = Machine(mode: .throttle)
        #expect(describe(machine.valueArrived(1)) == "arm 1")
        _ = machine.timerScheduled(1, ActionDisposable {})
        #expect(describe(machine.valueArrived(2)) == "release 1", "the window stays; its latest value is 2")
        #expect(describe(machine.valueArrived(3)) == "release 2")
        #expect(describe(machine.timerFired(1)) == "deliver, releasing its timer")
        #expect(delivered(&machine) == ["Next(3)"])
        #expect(describe(machine.valueArrived(4)) == "arm 2", "the next value opens a new window")
    }

    /// A fired timer's disposable may be a user scheduler's, whose `deinit` is user code: the machine
    /// hands it back, to be released after unlocking, and keeps no reference to it.
    @Test func aFiredTimerIsHandedBackToBeReleasedOutsideTheLock() {
        for mode in [Machine.Mode.debounce, .throttle] {
            var machine = Machine(mode: mode)
            _ = machine.valueArrived(1)
            let timer = ActionDisposable {}
            _ = machine.timerScheduled(1, timer)
            let fired = machine.timerFired(1)
            #expect(describe(fired) == "deliver, releasing its timer")
            guard case .fired(let released, _) = fired else { continue }
            #expect(released === timer)
            // Queued behind a delivery in progress: the timer is handed back all the same.
            _ = machine.valueArrived(2)
            let second = ActionDisposable {}
            _ = machine.timerScheduled(2, second)
            let queued = machine.timerFired(2)
            #expect(describe(queued) == "releasing its timer")
            guard case .fired(let releasedSecond, false) = queued else { continue }
            #expect(releasedSecond === second)
            #expect(delivered(&machine) == ["Next(1)", "Next(2)"])
        }
    }

    @Test func aValueFiredWhileAnotherThreadDeliversIsQueued() {
        var machine = Machine(mode: .debounce)
        _ = machine.valueArrived(1)
        #expect(describe(machine.timerFired(1)) == "deliver")
        _ = machine.valueArrived(2)
        #expect(describe(machine.timerFired(2)) == "none", "queued behind 1")
        #expect(delivered(&machine) == ["Next(1)", "Next(2)"])
    }

    @Test func completionSendsTheWaitingValueThenCompletes() {
        var machine = Machine(mode: .debounce)
        _ = machine.valueArrived(1)
        _ = machine.timerScheduled(1, ActionDisposable {})
        #expect(describe(machine.sourceCompleted()) == "end, cancelling a timer, then deliver")
        #expect(delivered(&machine) == ["Next(1)", "Completion"])
        #expect(describe(machine.valueArrived(2)) == "release 2", "nothing after the end")
        #expect(describe(machine.sourceCompleted()) == "none")
        #expect(describe(machine.timerFired(1)) == "none")

        var idle = Machine(mode: .throttle)
        #expect(describe(idle.sourceCompleted()) == "deliver")
        #expect(delivered(&idle) == ["Completion"])
    }

    @Test func anErrorDropsTheWaitingValue() {
        var machine = Machine(mode: .throttle)
        _ = machine.valueArrived(1)
        _ = machine.timerScheduled(1, ActionDisposable {})
        #expect(describe(machine.sourceFailed(TestError(code: 1))) == "end, cancelling a timer, releasing 1, then deliver")
        #expect(delivered(&machine).count == 1)
        #expect(describe(machine.sourceFailed(TestError(code: 2))) == "none", "the first terminal event wins")
    }

    @Test func disposalHandsBackTheTimerTheValueAndTheEventsNotDelivered() {
        var machine = Machine(mode: .debounce)
        _ = machine.valueArrived(1)
        #expect(describe(machine.timerFired(1)) == "deliver")  // 1 is being delivered
        _ = machine.valueArrived(2)
        _ = machine.timerFired(2)  // queued
        _ = machine.valueArrived(3)
        _ = machine.timerScheduled(3, ActionDisposable {})
        #expect(describe(machine.disposed()) == "end, cancelling a timer, releasing 3, 2 undelivered")
        #expect(describe(machine.valueArrived(4)) == "release 4")
        #expect(describe(machine.timerFired(3)) == "none")
        #expect(describe(machine.disposed()) == "end", "a second disposal hands back nothing")
    }
}
