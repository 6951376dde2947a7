import Dispatch
import Foundation
import Testing

@testable import SwiftSignalKit

/// Seconds that are not ordinary numbers, given to timers, `Queue.after` and the timing operators.
///
/// The values that are refused stop the process, so they are tested through the decision function, and
/// two of them also in a child process (exit tests).
@Suite struct TimeIntervalValidationTests {
    private let maximum = TimeIntervalValidation.maximumSeconds

    private func decide(_ seconds: Double, _ use: TimeIntervalValidation.Use) -> WaitDecision {
        return TimeIntervalValidation.decide(seconds, as: use, api: "Timer(timeout:repeat:completion:queue:)", argument: "timeout")
    }

    @Test func oneShotWaits() {
        #expect(self.decide(1.5, .delay) == .wait(.seconds(1.5)))
        #expect(self.decide(0, .delay) == .wait(.seconds(0)))
        #expect(self.decide(-1, .delay) == .wait(.seconds(0)), "a deadline that has passed runs at once")
        #expect(self.decide(-.infinity, .delay) == .wait(.seconds(0)))
        #expect(self.decide(.infinity, .delay) == .wait(.never))
        #expect(self.decide(1e11, .delay) == .wait(.seconds(self.maximum)))
        #expect(self.decide(.greatestFiniteMagnitude, .delay) == .wait(.seconds(self.maximum)))
        #expect(self.decide(self.maximum, .delay) == .wait(.seconds(self.maximum)))
        #expect(
            self.decide(.nan, .delay)
                == .refuse(
                    "Timer(timeout:repeat:completion:queue:): timeout must be a number of seconds "
                        + "(negative means now, .infinity means never), got nan"))
    }

    @Test func intervals() {
        #expect(self.decide(0.25, .interval) == .wait(.seconds(0.25)))
        #expect(self.decide(0, .interval) == .wait(.seconds(0)))
        #expect(self.decide(.infinity, .interval) == .wait(.never))
        #expect(self.decide(1e11, .interval) == .wait(.seconds(self.maximum)))
        #expect(self.decide(1e300, .interval) == .wait(.seconds(self.maximum)))
        let refusal = "Timer(timeout:repeat:completion:queue:): timeout must be a number of seconds ≥ 0 (.infinity means never), got "
        #expect(self.decide(-1, .interval) == .refuse(refusal + "-1.0"))
        #expect(self.decide(-.infinity, .interval) == .refuse(refusal + "-inf"))
        #expect(self.decide(.nan, .interval) == .refuse(refusal + "nan"))
    }

    /// The clamp is below what Dispatch traps on: a repeating timer source converts its interval to
    /// `UInt64` nanoseconds, and `1e11` seconds does not fit.
    @Test func theMaximumIsAcceptedByDispatch() {
        #expect(self.decide(.greatestFiniteMagnitude, .interval) == .wait(.seconds(self.maximum)))
        #expect(self.maximum * 1e9 < Double(Int64.max), "fits a signed nanosecond count, with room for the uptime")
        #expect(1e11 * 1e9 > Double(UInt64.max), "1e11 s is past what Dispatch converts")
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "maximum"))
        source.schedule(deadline: .now() + self.maximum, repeating: self.maximum)
        source.setEventHandler {}
        source.resume()
        source.cancel()
    }

    /// Every value that is not refused, used for real: huge and infinite waits neither trap nor fire (and
    /// keep nothing), past and zero waits run as soon as possible.
    @Test func valuesThatAreNotRefusedWorkAsDocumented() async {
        let queue = Queue(name: "timers")
        let fired = Counter()
        let timers = [
            Timer(timeout: 1e11, repeat: true, completion: { fired.increment() }, queue: queue),
            Timer(timeout: 1e300, repeat: true, completion: { fired.increment() }, queue: queue),
            Timer(timeout: .infinity, repeat: true, completion: { fired.increment() }, queue: queue),
            Timer(timeout: 1e11, repeat: false, completion: { fired.increment() }, queue: queue),
            Timer(timeout: .infinity, repeat: false, completion: { fired.increment() }, queue: queue),
        ]
        for timer in timers { timer.start() }

        let tracker = LifetimeTracker()
        do {
            let tracked = tracker.make()
            queue.after(.infinity) {  // no-sleep-check: tests Queue.after's argument rules
                withExtendedLifetime(tracked) { _ = fired.increment() }
            }
        }
        #expect(tracker.live.value == 0, "Queue.after(.infinity) does not keep its block")
        let starts = Counter()
        let source = Signal<Int, NoError> { subscriber in
            starts.increment()
            subscriber.putNext(7)
            return EmptyDisposable
        }
        let delayed = Recorder<Int, NoError>()
        let delayedDisposable = delayed.start(source |> delay(.infinity, queue: queue))
        let timedOut = Recorder<Int, NoError>()
        let timedOutDisposable = timedOut.start(source |> timeout(.infinity, queue: queue, alternate: .single(-1)))

        let ran = Counter()
        let done = DispatchSemaphore(value: 0)
        let record: @Sendable () -> Void = {
            ran.increment()
            done.signal()
        }
        queue.after(0, record)  // no-sleep-check: tests Queue.after's argument rules
        queue.after(-1, record)  // no-sleep-check: tests Queue.after's argument rules
        queue.after(-.infinity, record)  // no-sleep-check: tests Queue.after's argument rules
        let soonTimers = [
            Timer(timeout: 0, repeat: false, completion: record, queue: queue),
            Timer(timeout: -1, repeat: false, completion: record, queue: queue),
        ]
        for timer in soonTimers { timer.start() }
        let soon = Recorder<Int, NoError>()
        soon.start(Signal<Int, NoError>.single(1) |> delay(0, queue: queue) |> afterCompleted(record))
        soon.start(Signal<Int, NoError>.single(2) |> delay(-5, queue: queue) |> afterCompleted(record))
        soon.start(Signal<Int, NoError>.single(3) |> suspendAwareDelay(-5, queue: queue) |> afterCompleted(record))
        for _ in 0..<8 { #expect(await wait(done)) }
        // Everything due so far has run; were any of the long waits due, it would have run too.
        await drain(queue)
        #expect(ran.value == 8)
        #expect(soon.values.sorted() == [1, 2, 3])
        #expect(fired.value == 0)
        #expect(delayed.values.isEmpty)
        #expect(starts.value == 1, "delay(.infinity) never subscribes; timeout(.infinity) subscribes once")
        #expect(timedOut.values == [7])
        // The timers fire only while referenced.
        withExtendedLifetime(soonTimers) {}
        for timer in timers { timer.invalidate() }
        delayedDisposable.dispose()
        timedOutDisposable.dispose()
    }

    @Test func nanDelayStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Queue(name: "nan").after(.nan) {}  // no-sleep-check: tests Queue.after's argument rules
        }
        // In release builds too: the library stops with `fatalError`, which keeps its message.
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Queue.after(_:_:): delay must be a number of seconds"))
    }

    @Test func negativeRepeatingTimeoutStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Timer(timeout: -1, repeat: true, completion: {}, queue: Queue(name: "negative"))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Timer(timeout:repeat:completion:queue:): timeout must be a number of seconds ≥ 0"))
    }

    @Test func nanRetryDelayStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let operation: (Signal<Int, TestError>) -> Signal<Int, NoError> = retry(.nan, maxDelay: 1, onQueue: Queue(name: "retry"))
            _ = operation
        }
    }
}
