// The negative control of the virtual timeline suite (Tests/SwiftSignalKitConcurrencyTests/TimelineTests):
// the same kinds of scenario, run on real queues and the real clock, and on a VirtualTimeScheduler's
// timeline, each many times. For each, how many different event logs the runs gave. The timeline must
// give one; real time gives several where work on two threads races, which is what a test on real time
// cannot pin down, and what the timeline buys.
//
//     swift run -c release --package-path Benchmarks timeline-control [--runs N]
//
// A log is the order of events with the values (no timestamps, which always differ in real time).
// Durations are milliseconds in real time and the same numbers as seconds on the timeline.

import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import SwiftSignalKitTesting
import Synchronization

/// The events of one run, in order.
final class EventLog: Sendable {
    private let lines = Mutex<[String]>([])

    func callAsFunction(_ line: String) {
        self.lines.withLock { $0.append(line) }
    }

    var all: [String] { self.lines.withLock { $0 } }
}

/// Where a scenario runs: its scheduler for timed operators, and its way to sleep.
struct Time: Sendable {
    let scheduler: any SignalScheduler
    /// Sleeps `units` (milliseconds in real time, seconds on the timeline).
    let sleep: @Sendable (Int) async -> Void
    /// A duration of `units` for `first(within:)`.
    let duration: @Sendable (Int) -> Duration
    /// `units` as the seconds that operators take.
    let seconds: @Sendable (Int) -> Double
}

typealias Scenario = @Sendable (Time, EventLog) async -> Void

let scenarios: [(name: String, run: Scenario)] = [
    (
        "two async bodies merged, ticks due at the same instants",
        { time, log in
            func ticker(_ name: String, every units: Int) -> Signal<String, NoError> {
                return Signal { send in
                    for index in 1...4 {
                        await time.sleep(units)
                        send("\(name)\(index)")
                    }
                }
            }
            for await value in merge([ticker("a", every: 10), ticker("b", every: 20)]).values(bufferingPolicy: .unbounded) {
                log(value)
            }
        }
    ),
    (
        "mapAsync(.concurrent, unordered), equal sleeps",
        { time, log in
            let signal = Signal<Int, NoError> { send in
                for value in 1...4 { send(value) }
            }
            let results =
                signal
                |> mapAsync(.concurrent(max: 4, ordered: false)) { (value: Int) -> Int in
                    await time.sleep(10)
                    return value
                }
            for await value in results.values(bufferingPolicy: .unbounded) {
                log("\(value)")
            }
        }
    ),
    (
        "debounce after mapAsync, latency near the interval",
        { time, log in
            let pipe = ValuePipe<Int>()
            let results =
                pipe.signal()
                |> mapAsync(.serial) { (value: Int) -> Int in
                    await time.sleep(value.isMultiple(of: 2) ? 10 : 5)
                    return value
                }
                |> debounce(time.seconds(7), scheduler: time.scheduler)
            let feeding = Task(executorPreference: TimelineControl.current) {
                for value in 1...6 { pipe.putNext(value) }
                await time.sleep(100)
                pipe.putNext(0)
            }
            for await value in results.values(bufferingPolicy: .unbounded) {
                log("\(value)")
                if value == 0 { break }
            }
            await feeding.value
        }
    ),
    (
        "first(within:) a value sent at the deadline",
        { time, log in
            let value = Signal<Int, NoError> { send in
                await time.sleep(10)
                send(1)
            }
            for _ in 0..<3 {
                log("\(await value.first(within: time.duration(10), scheduler: time.scheduler))")
            }
        }
    ),
    (
        "two child tasks that yield",
        { time, log in
            async let first: Void = {
                for index in 1...20 {
                    log("a\(index)")
                    await Task.yield()
                }
            }()
            async let second: Void = {
                for index in 1...20 {
                    log("b\(index)")
                    await Task.yield()
                }
            }()
            _ = await (first, second)
        }
    ),
]

/// The executor a scenario's own tasks prefer: the timeline's when it runs there, none in real time.
enum TimelineControl {
    @TaskLocal static var current: (any TaskExecutor)?
}

func realTime() -> Time {
    let queue = Queue(name: "timeline-control")
    return Time(
        scheduler: queue,
        sleep: { units in try? await Task.sleep(for: .milliseconds(units)) },
        duration: { .milliseconds($0) },
        seconds: { Double($0) / 1000 })
}

func virtualTime(_ scheduler: VirtualTimeScheduler) -> Time {
    return Time(
        scheduler: scheduler,
        sleep: { units in try? await scheduler.clock.sleep(for: .seconds(units)) },
        duration: { .seconds($0) },
        seconds: { Double($0) })
}

var runs = 30
if let index = CommandLine.arguments.firstIndex(of: "--runs"), index + 1 < CommandLine.arguments.count,
    let value = Int(CommandLine.arguments[index + 1])
{
    runs = value
}

print("Different event logs in \(runs) runs of each scenario (1 = the same every time)")
print("")
print("| scenario | real queues and clock | virtual timeline |")
print("|---|---:|---:|")
for (name, scenario) in scenarios {
    var real = Set<[String]>()
    var virtual = Set<[String]>()
    for _ in 0..<runs {
        let log = EventLog()
        await scenario(realTime(), log)
        real.insert(log.all)
    }
    for _ in 0..<runs {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        do {
            try await scheduler.run {
                await TimelineControl.$current.withValue(scheduler.executor) {
                    await scenario(virtualTime(scheduler), log)
                }
            }
        } catch {
            log("run failed: \(error)")
        }
        virtual.insert(log.all)
    }
    print("| \(name) | \(real.count) | \(virtual.count) |")
    if virtual.count != 1 {
        print("FAIL: the timeline gave \(virtual.count) different logs for \"\(name)\"")
        exit(1)
    }
}
