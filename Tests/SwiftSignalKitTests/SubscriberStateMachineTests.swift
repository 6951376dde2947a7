import Testing

@testable import SwiftSignalKit

/// The subscriber's state, event by event: it admits values while live, ends once, and hands what it
/// held (the generator's disposable) to exactly one terminal event or dispose. Kept-alive objects live
/// in the subscriber's extras (see `SignalTests.keepAliveHoldsObjectsUntilTermination`).
@Suite struct SubscriberStateMachineTests {
    final class Probe: Disposable {
        func dispose() {}
    }

    @Test func aLiveSubscriberAdmitsValuesUntilItTerminates() {
        var machine = SubscriberStateMachine()
        #expect(machine.admitsValues)
        #expect(machine.takeFirstEvent() == nil, "an ordinary subscriber takes no first event")
        let probe = Probe()
        machine.disposable = probe
        let action = machine.terminate()
        #expect(action?.disposalPending == true, "the source waits for the terminal callback")
        #expect(machine.isTerminated)
        #expect(!machine.admitsValues)
        #expect(machine.takePendingDisposable() === probe)
        #expect(machine.disposable == nil)
    }

    /// Disposed while its terminal callback runs, the subscriber disposes the source there and then;
    /// the terminal event then finds nothing left to dispose.
    @Test func aDisposeDuringTheTerminalCallbackTakesTheSource() {
        var machine = SubscriberStateMachine()
        let probe = Probe()
        machine.disposable = probe
        #expect(machine.terminate()?.disposalPending == true)
        let disposed = machine.dispose()
        #expect(disposed?.disposable === probe)
        #expect(disposed?.disposalPending == false)
        #expect(machine.takePendingDisposable() == nil)
        #expect(machine.dispose() == nil, "once")
    }

    /// A terminal event with no source stored (a synchronous generator's, or one that had not returned
    /// yet) leaves nothing to take, and costs no second lock round trip.
    @Test func aTerminalEventWithNoSourceLeavesNothingPending() {
        var machine = SubscriberStateMachine()
        #expect(machine.terminate()?.disposalPending == false)
        #expect(machine.dispose() == nil)
    }

    @Test func onlyTheFirstOfTerminationAndDisposeActs() {
        var machine = SubscriberStateMachine()
        machine.disposable = Probe()
        let first = machine.dispose()
        #expect(first?.disposable != nil)
        #expect(machine.dispose() == nil, "a second dispose finds nothing to do")
        #expect(machine.terminate() == nil, "a terminal event after dispose is dropped")
    }

    @Test func aFirstEventOnlySubscriberTerminatesOnItsFirstEvent() {
        var machine = SubscriberStateMachine(firstEventOnly: true)
        #expect(!machine.admitsValues, "a value is not delivered the ordinary way")
        #expect(!machine.isTerminated)
        let first = machine.takeFirstEvent()
        #expect(first != nil)
        #expect(machine.isTerminated)
        // Every later event is dropped, whatever its kind, and the owner's dispose finds nothing to do.
        #expect(machine.takeFirstEvent() == nil)
        #expect(machine.terminate() == nil)
        #expect(machine.dispose() == nil)
    }

    @Test func aFirstEventOnlySubscribersTerminalEventEndsIt() {
        var machine = SubscriberStateMachine(firstEventOnly: true)
        #expect(machine.terminate() != nil)
        #expect(machine.takeFirstEvent() == nil, "a value after the completion is dropped")
    }
}
