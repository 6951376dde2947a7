import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Testing

/// A run's scheduled actions (a marble signal's events, timers, the operators' deadlines, the clock's
/// wake-ups) see the task-local values of the test that runs it, as its body does. A probe found
/// (2026-11-30) that they ran outside every task: an `#expect` that failed in a callback an action made
/// (a `map` below a marble signal) was credited to no test ("Test «unknown» recorded an issue"), and
/// the test that made it passed.
@Suite struct TimelineTaskLocalsTests {
    @TaskLocal static var request: String?

    @Test func actionsSeeTheTestAndItsTaskLocals() async throws {
        let scheduler = VirtualTimeScheduler()
        let seen = Atomic<[String]>(value: [])
        let name = Test.current?.name
        try await Self.$request.withValue("r1") {
            try await scheduler.run {
                let marbles: Signal<Int, NoError> = scheduler.signal(marbles: "-a-b|", values: ["a": 1, "b": 2])
                let noted =
                    marbles
                    |> map { value -> Int in
                        seen.modify { $0 + ["\(value) \(Self.request ?? "none") \(Test.current?.name == name)"] }
                        return value
                    }
                for await _ in noted.values(bufferingPolicy: .unbounded) {}
                let timer = SwiftSignalKit.Timer(timeout: 1, repeat: false, scheduler: scheduler) { _ in
                    seen.modify { $0 + ["timer \(Self.request ?? "none") \(Test.current?.name == name)"] }
                }
                timer.start()
                try await scheduler.clock.sleep(for: .seconds(2))
            }
        }
        #expect(seen.with { $0 } == ["1 r1 true", "2 r1 true", "timer r1 true"])
    }

    final class Token: Sendable {}
    @TaskLocal static var token: Token?

    /// The task that runs the actions ends with the run, also one that work leaving the timeline stopped
    /// after the body had returned: a re-probe found it left waiting, its job dropped with the others,
    /// keeping the caller's task-local values alive for good (2026-11-30).
    @Test func aRunThatStopsEarlyReleasesTheCallersTaskLocals() async {
        weak var released: Token?
        do {
            let token = Token()
            released = token
            let scheduler = VirtualTimeScheduler()
            await Self.$token.withValue(token) {
                await #expect(throws: VirtualTimeScheduler.WorkLeftTheTimeline.self) {
                    try await scheduler.run {
                        Task(executorPreference: scheduler.executor) { Queue(name: "away").async {} }
                    }
                }
            }
        }
        #expect(released == nil)
    }
}
