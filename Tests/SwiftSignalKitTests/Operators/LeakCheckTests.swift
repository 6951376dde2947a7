import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct LeakCheckTests {
    /// 1,000,000 subscribe/dispose cycles spread over every operator form: every subscription that
    /// started is disposed exactly once, and every object captured by a subscription is released.
    @Test func millionSubscribeDisposeCyclesLeakNothing() {
        let cyclesPerOperator = 1_000_000 / operatorCases.count + 1
        let callbackTracker = LifetimeTracker()
        var sources: [ControlledSource] = []
        for operatorCase in operatorCases {
            let source = ControlledSource()
            sources.append(source)
            let signal = operatorCase.apply(source.signal)
            for cycle in 0..<cyclesPerOperator {
                let captured = callbackTracker.make()
                let subscription = signal.start(next: { _ in withExtendedLifetime(captured) {} })
                if cycle % 64 == 0 {
                    source.send(cycle)
                }
                subscription.dispose()
            }
        }
        contractQueue.sync {}
        for (operatorCase, source) in zip(operatorCases, sources) {
            #expect(spin(until: { source.disposals.value == source.starts.value }), "\(operatorCase.name) disposes every start")
            #expect(spin(until: { source.tracker.live.value == 0 }), "\(operatorCase.name) releases every subscription")
        }
        #expect(spin(until: { callbackTracker.live.value == 0 }), "every subscriber's callbacks are released")
        #expect(callbackTracker.made.value >= 1_000_000)
    }
}
