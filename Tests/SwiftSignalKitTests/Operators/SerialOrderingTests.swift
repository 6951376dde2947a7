import Foundation
import SwiftSignalKitTesting
import Testing

@testable import SwiftSignalKit

/// Records what a subscriber's callbacks see, and whether two of them ever ran at once.
final class OrderingProbe: Sendable {
    private struct State {
        var log: [String] = []
        var inside = 0
        var overlaps = 0
    }

    private let state = LockedState(State())

    func record(_ entry: String) {
        self.state.withLock { state in
            state.inside += 1
            if state.inside > 1 { state.overlaps += 1 }
        }
        // Widen the window in which a second thread could enter.
        yieldProcessor()
        self.state.withLock { state in
            state.log.append(entry)
            state.inside -= 1
        }
    }

    var log: [String] { self.state.withLock { $0.log } }
    var overlaps: Int { self.state.withLock { $0.overlaps } }
    var isFinished: Bool { self.state.withLock { $0.log.last == "c" || $0.log.last?.hasPrefix("e") == true } }

    func start<T>(_ signal: Signal<T, NoError>) -> Disposable {
        return signal.start(next: { self.record("n\($0)") }, completed: { self.record("c") })
    }
}

/// A source whose subscriber the test's threads call directly; `started` says when it has been
/// subscribed (for operators that subscribe later).
final class DirectSource: Sendable {
    let subscriber = LockedState<Subscriber<Int, NoError>?>(nil)

    var signal: Signal<Int, NoError> {
        return Signal { subscriber in
            self.subscriber.withLock { $0 = subscriber }
            return EmptyDisposable
        }
    }

    var started: Bool { self.subscriber.withLock { $0 != nil } }
    func send(_ value: Int) { self.subscriber.withLock { $0 }?.putNext(value) }
    func complete() { self.subscriber.withLock { $0 }?.putCompletion() }
}

/// A pipe's signal that says when it has been subscribed (for operators that subscribe later).
func announcedSignal(_ pipe: ValuePipe<Int>, started: LockedState<Bool>) -> Signal<Int, NoError> {
    return Signal { subscriber in
        let subscription = pipe.signal().start(next: { subscriber.putNext($0) })
        started.withLock { $0 = true }
        return subscription
    }
}

/// Serialized: each case keeps four sending threads and a delivering one busy; run side by side, the
/// cases took the machine from the rest of the suite.
@Suite(.serialized) struct SerialOrderingTests {
    /// The operators that promise serial delivery, fed by four threads at once through one pipe.
    enum Operator: String, CaseIterable, Sendable {
        case timeoutPerValue, timeout, delay, suspendAwareDelay, combineLatest, scan, buffer, distinct, share, valuePromise

        func apply(_ signal: Signal<Int, NoError>, scheduler: Queue) -> Signal<Int, NoError> {
            switch self {
            case .timeoutPerValue:
                return signal |> SwiftSignalKit.timeout(perValue: 60, scheduler: scheduler, alternate: Signal<Int, NoError>.single(-1))
            case .timeout:
                return signal |> SwiftSignalKit.timeout(60, scheduler: scheduler, alternate: Signal<Int, NoError>.single(-1))
            case .delay:
                return signal |> SwiftSignalKit.delay(0, scheduler: scheduler)
            case .combineLatest:
                return SwiftSignalKit.combineLatest(signal, Signal<Int, NoError>.single(0)) |> map { value, _ in value }
            case .scan:
                return signal |> SwiftSignalKit.scan(0) { (_: Int, value: Int) in value }
            case .suspendAwareDelay:
                return signal |> SwiftSignalKit.suspendAwareDelay(0, queue: scheduler)
            case .buffer:
                return signal |> SwiftSignalKit.buffer(count: 1) |> map { $0[0] }
            case .distinct:
                return signal |> SwiftSignalKit.distinct
            case .share:
                return signal |> SwiftSignalKit.share()
            case .valuePromise:
                return Signal { subscriber in
                    let promise = ValuePromise<Int>(ignoreRepeated: false)
                    let feeding = signal.start(next: { promise.set($0) }, completed: { subscriber.putCompletion() })
                    let reading = promise.get().start(next: { subscriber.putNext($0) })
                    return ActionDisposable {
                        feeding.dispose()
                        reading.dispose()
                    }
                }
            }
        }
    }

    @Test(arguments: Operator.allCases)
    func fourSendingThreadsNeverEnterTheCallbackTogether(_ op: Operator) async {
        let pipe = ValuePipe<Int>()
        let started = LockedState(false)
        let probe = OrderingProbe()
        let subscription = probe.start(op.apply(announcedSignal(pipe, started: started), scheduler: Queue.concurrentDefaultQueue()))
        #expect(await spin(until: { started.withLock { $0 } }))
        await concurrently(4) { thread in
            for value in 0..<1_000 {
                pipe.putNext(thread * 1_000_000 + value)
            }
        }
        // A hand-off may still be delivering on a Dispatch thread.
        #expect(await spin(until: { probe.log.count == 4_000 }), "\(op): \(probe.log.count) of 4000")
        #expect(probe.overlaps == 0, "\(op): the callback ran on two threads at once \(probe.overlaps) times")
        // Each thread's values arrive in the order that thread sent them.
        var last: [Int: Int] = [:]
        for entry in probe.log {
            let value = Int(entry.dropFirst())!
            let thread = value / 1_000_000
            #expect(last[thread, default: -1] < value, "\(op): \(value) after \(last[thread, default: -1])")
            last[thread] = value
        }
        subscription.dispose()
    }

    /// (A promise never completes: the case's completion would bypass it.)
    @Test(arguments: Operator.allCases.filter { $0 != .valuePromise })
    func aCompletionRacingValuesComesLastAndOnce(_ op: Operator) async {
        let source = DirectSource()
        let probe = OrderingProbe()
        let subscription = probe.start(op.apply(source.signal, scheduler: Queue.concurrentDefaultQueue()))
        #expect(await spin(until: { source.started }))
        await concurrently(4) { thread in
            for value in 0..<(thread == 3 ? 300 : 1_000) {
                source.send(thread * 1_000_000 + value)
            }
            if thread == 3 { source.complete() }
        }
        #expect(await spin(until: { probe.isFinished }), "\(op): no completion")
        let log = probe.log
        #expect(log.filter { $0 == "c" }.count == 1, "\(op)")
        #expect(log.last == "c", "\(op): \(log.suffix(3))")
        #expect(probe.overlaps == 0, "\(op): the callback ran on two threads at once \(probe.overlaps) times")
        subscription.dispose()
    }

    /// The failure a user reported: two threads send into `timeout(perValue: 0)` while its timer fires; a
    /// source value reached the callback after the alternate's value and after the completion.
    @Test func aSourceValueNeverFollowsTheAlternateOrTheCompletion() async {
        await onThread {
            for _ in 0..<1_000 {
                let pipe = ValuePipe<Int>()
                let probe = OrderingProbe()
                let subscription = probe.start(
                    pipe.signal() |> timeout(perValue: 0, scheduler: Queue.concurrentDefaultQueue(), alternate: .single(-1)))
                let threads = (0..<2).map { thread in
                    Thread {
                        for value in 0..<100 { pipe.putNext(thread * 1_000 + value) }
                    }
                }
                threads.forEach { $0.start() }
                blockingSpin(until: { threads.allSatisfy(\.isFinished) && probe.isFinished })
                let log = probe.log
                if let alternate = log.firstIndex(of: "n-1") {
                    #expect(Array(log[alternate...]) == ["n-1", "c"], "\(log.suffix(6))")
                } else {
                    #expect(log.last == "c")
                }
                #expect(log.filter { $0 == "c" }.count == 1)
                subscription.dispose()
            }
        }
    }

    /// `combineLatest`'s job is "the latest of each": the last combination delivered must hold each
    /// source's last value, also when both sources send from their own threads at once.
    @Test func combineLatestDeliversTheLatestCombinationLast() async {
        await onThread {
            for _ in 0..<100 {
                let a = ValuePipe<Int>()
                let b = ValuePipe<Int>()
                let last = LockedState<(Int, Int)?>(nil)
                let subscription = combineLatest(a.signal(), b.signal()).start(next: { pair in
                    yieldProcessor()
                    last.withLock { $0 = pair }
                })
                a.putNext(0)
                b.putNext(0)
                let threads = [a, b].map { pipe in
                    Thread {
                        for value in 1...200 { pipe.putNext(value) }
                    }
                }
                threads.forEach { $0.start() }
                blockingSpin(until: { threads.allSatisfy(\.isFinished) && last.withLock { $0 } ?? (0, 0) == (200, 200) }, limit: 2_000_000)
                let final = last.withLock { $0 }
                #expect(final.map { $0 == (200, 200) } == true, "the last combination was \(String(describing: final))")
                subscription.dispose()
            }
        }
    }
}
