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
        #expect(action?.disposable === probe)
        #expect(machine.isTerminated)
        #expect(!machine.admitsValues)
        #expect(machine.disposable == nil)
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
