import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// Async code on a `VirtualClock`: sleeps end when the test moves time, and cancellation ends them at
/// once and removes them from the scheduler.
@Suite struct VirtualClockTests {
    @Test func transformsSleepingOnTheClockFinishInVirtualTimeOrder() async {
        let scheduler = VirtualTimeScheduler()
        let clock = scheduler.clock
        let pipe = ValuePipe<Int>()
        let recording = Recording<Int, NoError>()
        let subscription = recording.start(
            pipe.signal()
                |> mapAsync(.concurrent(max: 3, ordered: false)) { (seconds: Int) -> Int in
                    try? await clock.sleep(for: .seconds(seconds))
                    return seconds
                })
        pipe.putNext(3)
        pipe.putNext(1)
        pipe.putNext(2)
        await scheduler.waitUntilScheduled(3)
        scheduler.advance(by: 1)
        await eventually { recording.values.with { $0 } == [1] }
        scheduler.advance(by: 1)
        await eventually { recording.values.with { $0 } == [1, 2] }
        #expect(scheduler.scheduledActionCount == 1)
        subscription.dispose()
        await eventually { scheduler.scheduledActionCount == 0 }
        scheduler.run()
        #expect(recording.values.with { $0 } == [1, 2], "the cancelled transform's value is not delivered")
    }

    @Test func aCancelledSleepThrowsAtOnceAndLeavesTheScheduler() async {
        let scheduler = VirtualTimeScheduler()
        let sleeping = Task { () -> Bool in
            do {
                try await scheduler.clock.sleep(for: .seconds(3600))
                return false
            } catch {
                return error is CancellationError
            }
        }
        await scheduler.waitUntilScheduled(1)
        sleeping.cancel()
        #expect(await sleeping.value)
        #expect(scheduler.scheduledActionCount == 0)
        #expect(scheduler.now == 0)
    }

    @Test func sleepsToThePastScheduleNothingAndClockTimeFollowsTheScheduler() async throws {
        let scheduler = VirtualTimeScheduler()
        let clock = scheduler.clock
        scheduler.advance(by: 2.5)
        #expect(clock.now == VirtualClock.Instant(offset: .milliseconds(2500)))
        try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(1)))
        #expect(scheduler.scheduledActionCount == 0)
        #expect(clock.now.duration(to: clock.now.advanced(by: .seconds(4))) == .seconds(4))
    }

    @Test func manySleepersAtOneInstantAllWake() async {
        let scheduler = VirtualTimeScheduler()
        let woken = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try? await scheduler.clock.sleep(for: .seconds(5))
                    woken.increment()
                }
            }
            await scheduler.waitUntilScheduled(50)
            scheduler.advance(by: 5)
        }
        #expect(woken.value == 50)
    }
}
