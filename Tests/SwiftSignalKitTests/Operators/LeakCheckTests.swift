import Dispatch
import Testing

@testable import SwiftSignalKit

@Suite struct LeakCheckTests {
    /// 1,000,000 subscribe/dispose cycles spread over every operator form: every subscription that
    /// started is disposed exactly once, and every object captured by a subscription is released.
    @Test func millionSubscribeDisposeCyclesLeakNothing() async {
        let cyclesPerOperator = 1_000_000 / operatorCases.count + 1
        let callbackTracker = LifetimeTracker()
        // Seconds of synchronous work: on a thread of its own, not on one of the task pool's.
        let sources = await onThread { () -> [ControlledSource] in
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
            contractQueue.sync {}  // blocking-check: on a thread of onThread's
            return sources
        }
        for (operatorCase, source) in zip(operatorCases, sources) {
            #expect(await spin(until: { source.disposals.value == source.starts.value }), "\(operatorCase.name) disposes every start")
            #expect(await spin(until: { source.tracker.live.value == 0 }), "\(operatorCase.name) releases every subscription")
        }
        #expect(await spin(until: { callbackTracker.live.value == 0 }), "every subscriber's callbacks are released")
        #expect(callbackTracker.made.value >= 1_000_000)
    }
}
