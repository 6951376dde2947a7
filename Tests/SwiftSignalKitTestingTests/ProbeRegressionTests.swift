import Dispatch
import Foundation
import SwiftSignalKit
import SwiftSignalKitTesting
import Testing

/// What a sceptical review of the testing helpers found, each fixed and kept fixed here.
@Suite struct ProbeRegressionTests {
    /// 300 ms as a `Duration` was 0.30000000000000004 s as a `Double`, so `advance(by: 0.3)` left the
    /// sleeper asleep and the test hung.
    @Test func aDurationSleepWakesAtTheMatchingAdvance() async {
        let scheduler = VirtualTimeScheduler()
        let sleeping = Task { try await scheduler.clock.sleep(for: .milliseconds(300)) }
        await scheduler.waitUntilScheduled(1)
        scheduler.advance(by: 0.3)
        #expect(scheduler.scheduledActionCount == 0)
        #expect((try? await sleeping.value) != nil)
    }

    /// Sums of fractional delays land on the sum: 0.1 + 0.2 is due at 0.3.
    @Test func fractionalDelaysAddUpExactly() {
        let scheduler = VirtualTimeScheduler()
        let fired = Atomic(value: false)
        _ = scheduler.schedule(after: 0.1) {
            _ = scheduler.schedule(after: 0.2) { _ = fired.swap(true) }
        }
        scheduler.advance(to: 0.3)
        #expect(fired.with { $0 })
    }

    /// `Duration.seconds(2.3)` is 2.2999999999999998 s: it must be due when `schedule(after: 2.3)` is,
    /// not a nanosecond earlier.
    @Test func durationsRoundToTheNearestNanosecondAsDelaysDo() async {
        for hundredths in [57, 230, 999] {
            let scheduler = VirtualTimeScheduler()
            let seconds = Double(hundredths) / 100
            let sleeping = Task { try await scheduler.clock.sleep(for: .seconds(seconds)) }
            await scheduler.waitUntilScheduled(1)
            scheduler.advance(to: seconds - 1e-9)
            #expect(scheduler.scheduledActionCount == 1, "asleep a nanosecond before \(seconds) s")
            scheduler.advance(to: seconds)
            #expect(scheduler.scheduledActionCount == 0)
            _ = try? await sleeping.value
        }
    }

    /// Past 2^53 ns (about 104 days) a `Double` cannot hold every nanosecond: `advance(to: now)` must
    /// still be accepted.
    @Test func advancingToNowIsAcceptedLateInVirtualTime() {
        let scheduler = VirtualTimeScheduler()
        scheduler.advance(by: 9.1e6)
        scheduler.advance(by: 1e-9)
        scheduler.advance(to: scheduler.now)
    }

    /// Past 2^23 s (about 97 days) the same instant computed two ways differs by a unit of a `Double`'s
    /// precision, which is more than a nanosecond: a recording must still match its diagram.
    @Test func recordingsLateInVirtualTimeMatchTheirDiagrams() {
        let starts: [Double] = [100_000_000.05, 9_000_000.05, 31_000_000.01, 432_000.05]
        for start in starts {
            let scheduler = VirtualTimeScheduler()
            scheduler.advance(to: start)
            let values: [Character: Int] = ["a": 1, "b": 2, "c": 3]
            let recorder = SignalRecorder(scheduler.signal(marbles: "-a-b-c|", values: values, frame: 0.1), scheduler: scheduler)
            scheduler.run()
            let mismatch = recorder.mismatch(marbles: "-a-b-c|", values: values, frame: 0.1)
            #expect(mismatch == nil, "from \(start) s: \(mismatch.map { "\($0)" } ?? "")")
        }
        #expect(Recorded<Int, NoError>.next(1, at: 100_000_000.149_999_99) == .next(1, at: 100_000_000.15))
        #expect(Recorded<Int, NoError>.next(1, at: 1e8) != .next(1, at: 1e8 + 1e-6), "a microsecond is still a difference")
        #expect(Recorded<Int, NoError>.next(1, at: 0.3) != .next(1, at: 0.300_000_002), "two nanoseconds too")
    }

    /// A recording too long to draw (an event 10,000 frames or more after frame 0) said that an event
    /// fell between frames, which was not so (2026-11-30): the message now names each reason.
    @Test func aRecordingTooLongToDrawSaysWhy() {
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(scheduler.signal(marbles: "a|", values: ["a": 1]), scheduler: scheduler)
        scheduler.run()
        let late = SignalRecorder(Signal<Int, NoError>.single(1) |> delay(10_000, scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        let mismatch = late.mismatch(marbles: "a|", values: ["a": 1])
        #expect(mismatch?.diagrams?.actual.contains("10,000 or more frames after it") == true)
        #expect(recorder.mismatch(marbles: "a|", values: ["a": 1]) == nil)
    }

    /// A scheduler released with work still pending is freed, with what the work holds: a pending
    /// action held its subscriber, which held the action's disposable, which held the scheduler.
    @Test func aSchedulerReleasedWithWorkPendingIsFreed() {
        weak var released: VirtualTimeScheduler?
        do {
            let scheduler = VirtualTimeScheduler()
            released = scheduler
            let subscription = scheduler.signal(marbles: "--a", values: ["a": 1]).start(next: { _ in })
            scheduler.advance(by: 1)
            withExtendedLifetime(subscription) {}
        }
        #expect(released == nil, "a diagram's event still to come")
    }

    /// What the testing article says about work left pending: an operator's pending action holds the
    /// operator, which holds the scheduler, until the subscription is disposed.
    @Test func disposingTheSubscriptionsFreesASchedulerWithWorkPending() {
        weak var released: VirtualTimeScheduler?
        do {
            let scheduler = VirtualTimeScheduler()
            released = scheduler
            let pipe = ValuePipe<Int>()
            let recorder = SignalRecorder(pipe.signal() |> debounce(1, scheduler: scheduler), scheduler: scheduler)
            pipe.putNext(1)
            #expect(scheduler.scheduledActionCount == 1)
            recorder.dispose()
        }
        #expect(released == nil, "a debounced value was waiting")
    }

    @Test func cancellingATaskInWaitUntilScheduledEndsTheWait() async {
        let scheduler = VirtualTimeScheduler()
        let waiting = Task { await scheduler.waitUntilScheduled(1) }
        waiting.cancel()
        await waiting.value
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await scheduler.waitUntilScheduled(5)
        }
        await cancelledFirst.value
    }

    @Test func advancingPastTheEndOfVirtualTimeIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            VirtualTimeScheduler().advance(by: 1e25)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("VirtualTimeScheduler.advance(by:): virtual time ends at"))
    }

    @Test func aSleepBeyondTheEndOfVirtualTimeWaitsForTheEnd() async {
        let scheduler = VirtualTimeScheduler()
        let sleeping = Task { try await scheduler.clock.sleep(for: .seconds(10_000_000_000)) }
        await scheduler.waitUntilScheduled(1)
        scheduler.advance(by: 200 * 365 * 86_400)
        #expect(scheduler.scheduledActionCount == 1, "not woken before its deadline")
        scheduler.run()
        #expect((try? await sleeping.value) != nil)
    }

    @Test func marblesRefuseEventsAfterTheEndAndEmptyGroups() async {
        await #expect(processExitsWith: .failure) {
            let _: [Recorded<Int, Never>] = Marbles.events("a|b", values: ["a": 1, "b": 2])
        }
        await #expect(processExitsWith: .failure) {
            let _: [Recorded<Int, Never>] = Marbles.events("-()-")
        }
        let grouped: [Recorded<Int, Never>] = Marbles.events("-(a|)--", values: ["a": 1])
        #expect(grouped == [.next(1, at: 1), .completed(at: 1)])
    }

    /// Late in virtual time a short frame is finer than a `Double` holds the time: a recording at 10^8 s
    /// with 1 ms frames, which compares equal to its diagram, was not drawn ("an event falls between
    /// frames") when it differed (a probe, 2026-11-30).
    @Test func aRecordingLateInVirtualTimeIsDrawnOnItsFrames() {
        let start = 100_000_000.0
        // As a recorder records them: the scheduler's nanoseconds read back as seconds.
        let recorded: [Recorded<Int, Never>] = [1, 3].map { frame in
            .next(frame, at: Double(Int64(start * 1e9) + Int64(frame) * 1_000_000) / 1e9)
        }
        #expect(recorded == Marbles.events("-a-b", values: ["a": 1, "b": 3], frame: 0.001, start: start))
        #expect(Marbles.diagram(recorded, values: ["a": 1, "b": 3], frame: 0.001, start: start) == "-a-b")
    }

    /// Diagrams that cannot be played stop with a message naming the problem, where a probe found them
    /// accepted (2026-11-30): an event past the end of virtual time (played at infinity, never sent), a
    /// start that is not a number, a value under a character the diagram reads as syntax (ignored when
    /// played, drawn as syntax), an input event later than a scheduler waits (played at 100 years).
    @Test func diagramsThatCannotBePlayedAreRefused() async {
        func standardError(_ result: ExitTest.Result?) -> String {
            return String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        }
        let pastTheEnd = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: [Recorded<Int, Never>] = Marbles.events("-a", values: ["a": 1], frame: 1e308)
        }
        #expect(standardError(pastTheEnd).contains("after the end of virtual time"))
        // The message names the caller's line, not the library's.
        #expect(standardError(pastTheEnd).contains("ProbeRegressionTests.swift"))
        let notANumber = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: [Recorded<Int, Never>] = Marbles.events("a", values: ["a": 1], start: .nan)
        }
        #expect(standardError(notANumber).contains("start must be a finite number"))
        let syntax = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: [Recorded<Int, Never>] = Marbles.events("a-|", values: ["a": 1, "-": 2])
        }
        #expect(standardError(syntax).contains("\"-\" is marble syntax"))
        let drawnSyntax = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let events: [Recorded<Int, Never>] = [.next(1, at: 0)]
            _ = Marbles.diagram(events, values: ["|": 1])
        }
        #expect(standardError(drawnSyntax).contains("\"|\" is marble syntax"))
        let tooLate = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: Signal<Int, NoError> = VirtualTimeScheduler().signal(marbles: "--a", values: ["a": 1], frame: 2e9)
        }
        #expect(standardError(tooLate).contains("later than the longest delay"))
        // Quiet frames past the end are harmless (a re-probe found them refused).
        let quietTail: [Recorded<Int, Never>] = Marbles.events("a--  ", values: ["a": 1], frame: 5e9)
        #expect(quietTail == [.next(1, at: 0)])
        let question = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: [Recorded<Int, Never>] = Marbles.events("a?", values: ["a": 1, "?": 9])
        }
        #expect(standardError(question).contains("what a drawing shows for a value it has no character for"))
        let noFrame = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let events: [Recorded<Int, Never>] = [.next(1, at: 0)]
            _ = Marbles.diagram(events, values: ["a": 1], frame: 0)
        }
        #expect(standardError(noFrame).contains("Marbles.diagram: frame must be a positive number"))
        let atTheEnd = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = VirtualTimeScheduler()
            scheduler.advance(to: VirtualTimeScheduler.maximumTime - 15)
            let signal: Signal<Int, NoError> = scheduler.signal(marbles: "a-b|", values: ["a": 1, "b": 2], frame: 10)
            _ = signal.start()
        }
        #expect(standardError(atTheEnd).contains("after the end of virtual time"))
        // Within a `Double`'s step of the end, which the check must not round away (a re-probe: three
        // events played at one instant).
        let withinAStep = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = VirtualTimeScheduler()
            scheduler.advance(to: VirtualTimeScheduler.maximumTime)
            let signal: Signal<Int, NoError> = scheduler.signal(marbles: "a-b|", values: ["a": 1, "b": 2], frame: 3e-7)
            _ = signal.start()
        }
        #expect(standardError(withinAStep).contains("after the end of virtual time"))
        // An event at the very end plays there.
        let atTheVeryEnd = VirtualTimeScheduler()
        atTheVeryEnd.advance(to: VirtualTimeScheduler.maximumTime)
        let last = SignalRecorder(atTheVeryEnd.signal(marbles: "a", values: ["a": 1]), scheduler: atTheVeryEnd)
        atTheVeryEnd.run()
        #expect(last.events.count == 1)
        // Up to 100 years plays as drawn.
        let scheduler = VirtualTimeScheduler()
        let recorder = SignalRecorder(scheduler.signal(marbles: "-a|", values: ["a": 1], frame: 1.5e9), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.mismatch(marbles: "-a|", values: ["a": 1], frame: 1.5e9) == nil)
    }

    /// `advance(to:)` given a `Duration` reaches the nanosecond a sleep on the clock is due at, however
    /// late: it went through `Double` seconds, which past about 104 days miss nanoseconds, and left the
    /// sleeper asleep (a probe, 2026-12-02).
    @Test func advancingToALateDurationReachesASleepersDeadlineExactly() async {
        let deadlines: [Int64] = [9_013_795_847_342_901, 123_456_789_012_345_679, Int64.max - 1]
        for nanoseconds in deadlines {
            let scheduler = VirtualTimeScheduler()
            let deadline = VirtualClock.Instant(offset: .nanoseconds(nanoseconds))
            let sleeping = Task { try await scheduler.clock.sleep(until: deadline) }
            await scheduler.waitUntilScheduled(1)
            scheduler.advance(to: deadline.offset)
            #expect(scheduler.scheduledActionCount == 0, "asleep after advance(to: \(nanoseconds) ns)")
            #expect(scheduler.clock.now == deadline)
            sleeping.cancel()
            _ = try? await sleeping.value
        }
    }

    @Test func advancingToADurationOutOfRangeIsAPreconditionFailure() async {
        let past = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = VirtualTimeScheduler()
            scheduler.advance(to: .seconds(2))
            scheduler.advance(to: .seconds(1))
        }
        let message = String(decoding: past?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("advance(to:): time must be"))
        await #expect(processExitsWith: .failure) {
            VirtualTimeScheduler().advance(to: .seconds(-1))
        }
        await #expect(processExitsWith: .failure) {
            VirtualTimeScheduler().advance(to: .seconds(Int64.max))
        }
    }

    /// Every marble API that takes a frame takes it as a `Duration` too, as the module's overview says.
    @Test func marbleFramesMayBeDurations() async throws {
        let events: [Recorded<Int, Never>] = Marbles.events("-a|", values: ["a": 1], frame: .milliseconds(100))
        #expect(events == Marbles.events("-a|", values: ["a": 1], frame: 0.1))
        #expect(Marbles.diagram(events, values: ["a": 1], frame: .milliseconds(100)) == "-a|")
        let scheduler = VirtualTimeScheduler()
        let mismatch = try await scheduler.run { () async -> RecordingMismatch? in
            let (oneValue, continuation) = AsyncStream<Int>.makeStream()
            continuation.yield(1)
            continuation.finish()
            let recorder = SequenceRecorder(oneValue, scheduler: scheduler)
            await recorder.finished()
            return recorder.mismatch(marbles: "(a|)", values: ["a": 1], frame: .milliseconds(100))
        }
        #expect(mismatch == nil)
    }

    /// A bad diagram given to the scheduler or a recorder names the test's line, as `Marbles.events`
    /// does, not a line inside the library (a probe, 2026-12-02).
    @Test func aBadDiagramNamesTheCallersLine() async {
        // One exit test per way in: an exit test's body captures nothing.
        let results = [
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await BadDiagram.signal.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await BadDiagram.signalWithDuration.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await BadDiagram.signalRecorder.run()
            },
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                await BadDiagram.sequenceRecorder.run()
            },
        ]
        for (index, result) in results.enumerated() {
            let namesThisFile = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
                .contains("ProbeRegressionTests.swift")
            #expect(namesThisFile, "way in \(index)")
        }
    }

    /// A wait that would end past the end of virtual time is due at its end, as a clock deadline is.
    @Test func aWaitPastTheEndOfVirtualTimeIsDueAtItsEnd() {
        let scheduler = VirtualTimeScheduler()
        scheduler.advance(to: VirtualTimeScheduler.maximumTime - 10)
        let firedAt = Atomic<Double?>(value: nil)
        let pending = scheduler.schedule(after: 1e300) { _ = firedAt.swap(scheduler.now) }
        scheduler.advance(by: 5)
        #expect(firedAt.with { $0 } == nil)
        scheduler.advance(to: VirtualTimeScheduler.maximumTime)
        #expect(firedAt.with { $0 } == VirtualTimeScheduler.maximumTime)
        pending.dispose()
    }

    /// A repeating timer whose every tick saturates at the end of virtual time is named as such, not
    /// as a timer with a period of 0 (a probe, 2026-12-02: its period was 100 years).
    @Test func aRepeatingTimerAtTheEndOfVirtualTimeIsNamedAsSuch() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = VirtualTimeScheduler()
            scheduler.advance(to: VirtualTimeScheduler.maximumTime - 10)
            let timer = SwiftSignalKit.Timer(timeout: 1e300, repeat: true, scheduler: scheduler) { _ in }
            timer.start()
            scheduler.advance(to: VirtualTimeScheduler.maximumTime)
            withExtendedLifetime(timer) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("at the end of virtual time"), "\(message)")
    }

    @Test func diagramsSortEventsAndDrawUnknownValuesAsQuestionMarks() {
        let events: [Recorded<Int, Never>] = [.next(2, at: 3), .next(1, at: 1), .next(9, at: 4)]
        #expect(Marbles.diagram(events, values: ["a": 1, "b": 2]) == "-a-b?")
    }

    /// Values whose descriptions are equal but which differ are marked as a difference.
    @Test func mismatchMarksLinesByValueNotByText() {
        struct Look: Equatable, Sendable, CustomStringConvertible {
            let id: Int
            var description: String { "same" }
        }
        let scheduler = VirtualTimeScheduler()
        let pipe = ValuePipe<Look>()
        let recorder = SignalRecorder(pipe.signal(), scheduler: scheduler)
        pipe.putNext(Look(id: 1))
        let mismatch = recorder.mismatch([.next(Look(id: 2), at: 0)])
        #expect(mismatch?.description.contains("✗") == true)
    }
}

@Suite struct VirtualClockStressTests {
    /// A deadline is absolute: while another thread moves time, sleepers registering their deadline
    /// must not have it postponed by the time that passed meanwhile. Each sleeper reports when it woke.
    @Test func deadlinesStayPutWhileAnotherThreadMovesTime() async {
        let scheduler = VirtualTimeScheduler()
        let deadline = VirtualClock.Instant(offset: .seconds(1_000_000))
        let stop = Atomic(value: false)
        let moverDone = DispatchSemaphore(value: 0)
        let mover = Thread {
            var moved = 0
            while !stop.with({ $0 }) && moved < 100_000 {
                scheduler.advance(by: 1)
                moved += 1
            }
            moverDone.signal()
        }
        mover.start()
        let wokenAt = await withTaskGroup(of: Double.self, returning: [Double].self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try? await scheduler.clock.sleep(until: deadline)
                    return scheduler.now
                }
            }
            await scheduler.waitUntilScheduled(20)
            _ = stop.swap(true)
            // Waited for on a thread of its own, so that no pool thread blocks.
            let moverStopped = await wait(moverDone, seconds: 60)
            #expect(moverStopped)
            scheduler.advance(to: 1_000_000)
            // A postponed deadline would be later than 1,000,000 s: run() would move time there.
            scheduler.run()
            var times: [Double] = []
            for await time in group { times.append(time) }
            return times
        }
        #expect(wokenAt.count == 200)
        #expect(wokenAt.allSatisfy { $0 == 1_000_000 }, "woken late: \(wokenAt.filter { $0 != 1_000_000 }.prefix(3))")
    }
}

/// The calls a bad diagram reaches through, each from this file.
enum BadDiagram: Sendable {
    case signal, signalWithDuration, signalRecorder, sequenceRecorder

    func run() async {
        let scheduler = VirtualTimeScheduler()
        switch self {
        case .signal:
            let _: Signal<Int, NoError> = scheduler.signal(marbles: "-#", values: [:])
        case .signalWithDuration:
            let _: Signal<Int, NoError> = scheduler.signal(marbles: "-#", values: [:], frame: .seconds(1))
        case .signalRecorder:
            let recorder = SignalRecorder(scheduler.signal(marbles: "|", values: [Character: Int]()), scheduler: scheduler)
            _ = recorder.mismatch(marbles: "-#", values: [:])
        case .sequenceRecorder:
            try? await scheduler.run {
                let recorder = SequenceRecorder(AsyncStream<Int> { $0.finish() }, scheduler: scheduler)
                await recorder.finished()
                _ = recorder.mismatch(marbles: "-#", values: [:], frame: .seconds(1))
            }
        }
    }
}
