import Testing

@testable import SwiftSignalKit

/// A log of what happened, in order, from any thread.
private final class Log: Sendable {
    private let lines = LockedState<[String]>([])
    var all: [String] { self.lines.withLock { $0 } }
    func add(_ line: String) { self.lines.withLock { $0.append(line) } }
}

/// A source the test drives by hand, logging its subscription and its disposal.
private final class LoggedSource: Sendable {
    let name: String
    let log: Log
    let captured = CapturedSubscriber<Int, TestError>()

    init(_ name: String, _ log: Log) {
        self.name = name
        self.log = log
    }

    var signal: Signal<Int, TestError> {
        Signal { subscriber in
            self.log.add("\(self.name) subscribed")
            return self.captured.signal(disposable: ActionDisposable { self.log.add("\(self.name) disposed") })
                .start(next: { subscriber.putNext($0) }, error: { subscriber.putError($0) }, completed: { subscriber.putCompletion() })
        }
    }

    func send(_ value: Int) { self.captured.subscriber?.putNext(value) }
    func fail(_ code: Int) { self.captured.subscriber?.putError(TestError(code: code)) }
    func complete() { self.captured.subscriber?.putCompletion() }
}

/// `feedbackLoop(once:reduce:)`, kept from the original SwiftSignalKit with the original's behaviour:
/// `once` always gets `.initial`, `reduce` is never called, no value is sent.
@Suite struct FeedbackLoopTests {
    private func record<R>(_ signal: Signal<R, TestError>, _ log: Log) -> Disposable {
        signal.start(
            next: { log.add("next \($0)") },
            error: { log.add("error \($0.code)") },
            completed: { log.add("completed") })
    }

    @Test func iteratesUntilOnceReturnsNilWithoutSendingAValue() {
        let log = Log()
        let sources = [LoggedSource("first", log), LoggedSource("second", log)]
        let calls = Counter()
        let reductions = Counter()
        let loop: Signal<Int, TestError> = feedbackLoop(
            once: { (state: SignalFeedbackLoopState<Int>) -> Signal<Int, TestError>? in
                let call = calls.increment()
                switch state {
                case .initial: log.add("once \(call): initial")
                case .loop(let value): log.add("once \(call): loop \(value)")
                }
                return call <= sources.count ? sources[call - 1].signal : nil
            },
            reduce: { lhs, rhs in
                reductions.increment()
                return lhs + rhs
            })
        let subscription = self.record(loop, log)
        sources[0].send(1)
        sources[0].send(2)
        sources[0].complete()
        sources[1].send(3)
        sources[1].complete()
        subscription.dispose()
        #expect(reductions.value == 0)
        #expect(
            log.all == [
                "once 1: initial", "first subscribed",
                // The next iteration starts before the completed one is disposed, as in the original.
                "once 2: initial", "second subscribed", "first disposed",
                "once 3: initial", "completed", "second disposed",
            ])
    }

    @Test func onceReturningNilAtOnceCompletes() {
        let log = Log()
        let loop: Signal<String, TestError> = feedbackLoop(
            once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, TestError>? in
                log.add("once")
                return nil
            },
            reduce: { $0 + $1 })
        _ = self.record(loop, log)
        #expect(log.all == ["once", "completed"])
    }

    /// A loop whose every iteration is `source`, with a count of the calls of `once`.
    private func loopOver(_ source: LoggedSource) -> (loop: Signal<Int, TestError>, calls: Counter) {
        let calls = Counter()
        let loop: Signal<Int, TestError> = feedbackLoop(
            once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, TestError>? in
                calls.increment()
                return source.signal
            },
            reduce: { $0 + $1 })
        return (loop, calls)
    }

    @Test func aFailureEndsTheLoop() {
        let log = Log()
        let source = LoggedSource("source", log)
        let (loop, calls) = self.loopOver(source)
        _ = self.record(loop, log)
        source.send(1)
        source.fail(7)
        #expect(log.all == ["source subscribed", "error 7", "source disposed"])
        #expect(calls.value == 1)
    }

    @Test func disposingDisposesTheIterationAndEndsTheLoop() {
        let log = Log()
        let source = LoggedSource("source", log)
        let (loop, calls) = self.loopOver(source)
        self.record(loop, log).dispose()
        source.complete()
        #expect(log.all == ["source subscribed", "source disposed"])
        #expect(calls.value == 1)
    }

    /// The original called `once` again from inside the completing iteration's `start`, one stack frame
    /// deeper each time: 100,000 iterations that complete as they start overflowed the stack.
    @Test func iterationsThatCompleteAsTheyStartDoNotGrowTheStack() async {
        let calls = Counter()
        let completed = Flag()
        let loop: Signal<Never, NoError> = feedbackLoop(
            once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, NoError>? in
                calls.increment() <= 100_000 ? .single(1) : nil
            },
            reduce: { $0 + $1 })
        // A stress of synchronous work: on a thread of its own, not on one of the task pool's.
        await onThread { _ = loop.start(completed: { completed.set() }) }
        #expect(calls.value == 100_001)
        #expect(completed.isSet)
    }

    @Test func aDownstreamThatEndsStopsALoopThatNeverReturnsNil() async {
        let calls = Counter()
        let stop = ValuePipe<Void>()
        let loop: Signal<Int, NoError> = feedbackLoop(
            once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, NoError>? in
                if calls.increment() == 5 { stop.putNext(()) }
                return .complete()
            },
            reduce: { $0 + $1 })
        let recorder = Recorder<Int, NoError>()
        // Without the check before each iteration, this start would never return: every iteration
        // completes as it starts, and `once` never returns nil.
        await onThread { recorder.start(loop |> take(until: stop.signal())) }
        #expect(recorder.events == [.completed])
        #expect(calls.value == 5)
    }

    /// Disposing from one thread while another runs iterations that complete as they start: the loop
    /// stops, and `once` runs at most once after `dispose()` has returned (the iteration already being
    /// made, as Threading and disposal says).
    @Test func disposingWhileAnotherThreadIteratesStopsTheLoop() async {
        for _ in 0..<stressRounds(300) {
            let first = CapturedSubscriber<Int, NoError>()
            let disposed = Flag()
            let calls = Counter()
            let callsAfterDispose = Counter()
            let loop: Signal<Never, NoError> = feedbackLoop(
                once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, NoError>? in
                    let call = calls.increment()
                    if disposed.isSet { callsAfterDispose.increment() }
                    return call == 1 ? first.signal() : .complete()
                },
                reduce: { $0 + $1 })
            let ended = Flag()
            let subscription = loop.start(completed: { ended.set() })
            await concurrently(2, timeLimit: 60) { index in
                if index == 0 {
                    first.subscriber?.putCompletion()
                } else {
                    subscription.dispose()
                    disposed.set()
                }
            }
            #expect(callsAfterDispose.value <= 1)
            #expect(!ended.isSet)
        }
    }
}
