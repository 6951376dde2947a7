import Testing

@testable import SwiftSignalKit

/// `combineLatest`'s state machine, event by event: when a combined value is queued, when the result
/// ends, and what disposal hands back.
@Suite struct CombineLatestStateMachineTests {
    typealias Machine = CombineLatestStateMachine<Int, TestError>

    func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: return "nothing"
        case .deliver(let event): return "deliver now \(event)"
        case .release(let event): return "refused \(event)"
        }
    }

    func describe(_ action: Machine.SubscriptionAction) -> String {
        switch action {
        case .none: return "nothing"
        case .dispose: return "dispose a source"
        case .tearDown(let sources, let undelivered):
            return "tear down \(sources.count) sources, \(undelivered.count) undelivered"
        }
    }

    func tornDown(_ action: Machine.SubscriptionAction) -> (sources: [Disposable], undelivered: Int)? {
        guard case .tearDown(let sources, let undelivered) = action else { return nil }
        return (sources, undelivered.count)
    }

    @Test func aValueIsCombinedOnceEverySourceHasOne() {
        var machine = Machine(filledCount: 0, arity: 2)
        let first = machine.valueStored(filledSlot: true, arity: 2, combine: { 1 })
        #expect(describe(first) == "nothing", "one source has no value yet")
        let replaced = machine.valueStored(filledSlot: false, arity: 2, combine: { 2 })
        #expect(describe(replaced) == "nothing", "a replaced value does not fill a slot")
        let filled = machine.valueStored(filledSlot: true, arity: 2, combine: { 3 })
        #expect(describe(filled) == "deliver now Next(3)")
        // While that thread delivers, the next combined value is queued for it, in order.
        let next = machine.valueStored(filledSlot: false, arity: 2, combine: { 4 })
        #expect(describe(next) == "nothing", "queued for the thread that delivers")
        #expect(SwiftSignalKitTests.describe(machine.delivery.step(resuming: false)) == "deliver Next(4)")
    }

    @Test func aStartedWithValuesMachineCombinesAtOnce() {
        var machine = Machine(filledCount: 3, arity: 3)
        let submission = machine.valueStored(filledSlot: false, arity: 3, combine: { 7 })
        #expect(describe(submission) == "deliver now Next(7)")
    }

    @Test func theFirstErrorEndsTheResultAndLaterTerminalEventsAreIgnored() {
        var machine = Machine(filledCount: 0, arity: 2)
        let failed = machine.sourceFailed(TestError(code: 1))
        #expect(describe(failed).hasPrefix("deliver now Error("))
        #expect(!machine.acceptsEvents)
        let again = machine.sourceFailed(TestError(code: 2))
        let completed = machine.sourceCompleted(arity: 2)
        #expect(describe(again) == "nothing")
        #expect(describe(completed) == "nothing")
    }

    @Test func theResultCompletesWhenEverySourceHasCompleted() {
        var machine = Machine(filledCount: 0, arity: 2)
        let one = machine.sourceCompleted(arity: 2)
        #expect(describe(one) == "nothing")
        #expect(machine.acceptsEvents)
        let both = machine.sourceCompleted(arity: 2)
        #expect(describe(both) == "deliver now Completion")
        #expect(!machine.acceptsEvents)
    }

    @Test func disposalHandsBackTheSourcesOnceAndRefusesLaterOnes() {
        var machine = Machine(filledCount: 0, arity: 2)
        let source = ActionDisposable {}
        let kept = machine.sourceStarted(source)
        #expect(describe(kept) == "nothing")
        let torn = tornDown(machine.disposed())
        #expect(torn?.sources.count == 1 && torn?.sources[0] === source)
        #expect(torn?.undelivered == 0)
        #expect(!machine.acceptsEvents)
        let late = ActionDisposable {}
        guard case .dispose(let refused) = machine.sourceStarted(late) else {
            Issue.record("a source that starts after disposal is disposed at once")
            return
        }
        #expect(refused === late)
        #expect(describe(machine.disposed()) == "nothing", "disposal happens once")
    }

    @Test func disposalHandsBackTheEventsNotYetDelivered() {
        var machine = Machine(filledCount: 2, arity: 2)
        _ = machine.valueStored(filledSlot: false, arity: 2, combine: { 1 })  // being delivered
        _ = machine.valueStored(filledSlot: false, arity: 2, combine: { 2 })  // queued
        _ = machine.sourceCompleted(arity: 1)  // queued
        #expect(tornDown(machine.disposed())?.undelivered == 2)
        let after = machine.valueStored(filledSlot: false, arity: 2, combine: { 3 })
        #expect(describe(after).hasPrefix("refused"), "the delivery is closed")
    }
}
