// The scaling suite's scenarios, each in three forms in one binary: the library, and the two hand-written
// baselines of HandWritten.swift (the tight floor, and closable stages) doing the same work.

import Dispatch
import Foundation
import SwiftSignalKit
import Synchronization

/// Which implementation a run measures.
enum Form: String, CaseIterable, Sendable {
    /// SwiftSignalKit.
    case library
    /// The tight floor: immutable callbacks, not copied per value (HandWritten.swift).
    case tight
    /// Closable stages: optional callbacks read under each stage's lock (HandWritten.swift).
    case closable
}

/// What the subscriber's callback at the end of a pipeline does with a value.
enum Sink: Sendable {
    /// Counts in the sending thread's own tally, which the callback captures: the callback's context
    /// is an object no other thread uses.
    case ownTally
    /// Counts through one object that every pipeline's callback captures (a logger, a metrics
    /// registry, the server's state), in the slot of the sending thread: the callback's context is an
    /// object every thread uses.
    case sharedObject
}

/// A scenario run on `threads` threads; returns the operations it did (values delivered, or
/// subscriptions made and ended).
struct Scenario: Sendable {
    let name: String
    /// What one operation is, for the table.
    let unit: String
    /// Builds what the threads share (on the calling thread), then returns the work of thread `index`.
    let prepare: @Sendable (_ form: Form, _ threads: Int, _ operations: Int) -> Prepared
}

/// What a prepared scenario runs: `work(index)` on each thread, then `check()` once they have all
/// returned, which returns the operations done and stops the run if the work went wrong.
struct Prepared: Sendable {
    let work: @Sendable (Int) -> Void
    let check: @Sendable () -> Int
}

let scenarios: [Scenario] = [
    // Each thread drives a pipeline of its own: nothing is shared between threads.
    Scenario(name: "independent pipelines", unit: "values") { form, threads, operations in
        // `filter` passes every other value.
        pipelinesOfTheirOwn(threads, operations, delivering: operations / 2, sink: .ownTally) {
            independentPipeline(form, counting: $0)
        }
    },
    // As above, but every pipeline's callback captures one object that all threads use.
    Scenario(name: "independent pipelines, callback capturing a shared object", unit: "values") { form, threads, operations in
        pipelinesOfTheirOwn(threads, operations, delivering: operations / 2, sink: .sharedObject) {
            independentPipeline(form, counting: $0)
        }
    },
    // Each thread drives a pipeline of its own through operators that keep state per subscription
    // (`distinctUntilChanged`, then the serialising `scan`): before they were inlinable, each value
    // looked types up in the runtime's shared tables, and two threads ran slower than one.
    Scenario(name: "independent stateful pipelines", unit: "values") { form, threads, operations in
        // Every value differs from the one before, so each passes.
        pipelinesOfTheirOwn(threads, operations, delivering: operations, sink: .ownTally) { statefulPipeline(form, counting: $0) }
    },
    // Pipelines all built by the calling thread before the run, one after another, and handed out to
    // the threads in turn (pipeline i to thread i % T), as a server's acceptor hands connections to its
    // event loops; each thread then sends its values to its pipelines in turn. Objects that one thread
    // allocates in a row are neighbours in memory, so consecutive pipelines, driven by different threads,
    // show whether the locks of unrelated subscriptions share cache lines.
    Scenario(name: "independent pipelines built on one thread", unit: "values") { form, threads, operations in
        let perThread = 16
        let tallies = (0..<threads).map { _ in PaddedTally() }
        var drivers: [Driver] = []
        for index in 0..<threads * perThread {
            drivers.append(independentPipeline(form, counting: counter(.ownTally, tallies, index % threads)))
        }
        let built = UnsafeTransfer(drivers)
        return Prepared(
            work: { thread in
                let mine = stride(from: thread, to: threads * perThread, by: threads).map { built.value[$0] }
                var next = 0
                for value in 0..<operations {
                    mine[next].send(value)
                    next = next == perThread - 1 ? 0 : next + 1
                }
                for driver in mine { driver.end() }
            },
            check: {
                let delivered = tallies.reduce(0) { $0 + $1.count }
                precondition(delivered == threads * (operations / 2), "independent pipelines lost values")
                return threads * operations
            })
    },
    // Every thread sends into one pipe with one subscriber.
    Scenario(name: "one shared pipe, one subscriber", unit: "values") { form, threads, operations in
        sharedFeed(form, threads: threads, operations: operations, subscribers: 1)
    },
    // Every thread sends into one pipe with 64 subscribers, whose callbacks all capture one object that
    // counts in the sending thread's slot; an operation is one delivery.
    Scenario(name: "one shared pipe, 64 subscribers", unit: "deliveries") { form, threads, operations in
        sharedFeed(form, threads: threads, operations: operations, subscribers: 64)
    },
    // As above, but each subscriber's callback has a context of its own (it captures its index beside
    // the shared object): retaining and releasing the callback then writes no memory another thread
    // writes. The difference from the scenario above is what a per-value copy of the callback costs.
    Scenario(name: "one shared pipe, 64 subscribers, callbacks with contexts of their own", unit: "deliveries") {
        form, threads, operations in
        sharedFeed(form, threads: threads, operations: operations, subscribers: 64, contextsOfTheirOwn: true)
    },
    // Every thread subscribes to one pipe and ends the subscription, over and over.
    Scenario(name: "subscribe and dispose on one shared pipe", unit: "subscriptions") { form, threads, operations in
        let pipe = ValuePipe<Int>()
        let handPipe = HandPipe<Int>()
        let rounds = operations / 16
        return Prepared(
            work: { _ in
                for _ in 0..<rounds {
                    switch form {
                    case .library:
                        pipe.signal().start(next: { _ in }).dispose()
                    case .tight, .closable:
                        handPipe.unsubscribe(handPipe.subscribe { _ in })
                    }
                }
            },
            check: { threads * rounds })
    },
]

/// A counter owned by one thread (plain stores), alone in its 128 bytes of memory: two threads' tallies
/// never share a cache line (or a pair of them), so the benchmark adds no contention of its own.
final class PaddedTally: @unchecked Sendable {
    // Safe: each tally is written by one thread, and read after that thread has ended (the run's join
    // orders the accesses).
    private var padding: (Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0)
    var count = 0
    private var tail: (Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0)
}

/// The objects behind `Sink.sharedObject`: one per run, used by every thread, with a tally per thread.
final class SharedCounter: Sendable {
    let tallies: [PaddedTally]

    init(_ tallies: [PaddedTally]) {
        self.tallies = tallies
    }

    /// Counts `value` in the tally of the thread that sent it, whose index is in its bits from
    /// `threadShift` up (see ``sent(_:by:)``).
    @inline(__always)
    func record(_ value: Int) {
        self.tallies[value >> threadShift].count &+= 1
    }
}

/// Where a sent value carries the index of the thread that sent it, so that a callback shared by all
/// threads can count in that thread's own tally: the pipelines' `map` and `filter` leave these bits.
let threadShift = 40

/// The `value`th value that thread `index` sends.
@inline(__always)
func sent(_ value: Int, by index: Int) -> Int {
    return index << threadShift | value
}

/// The callback at the end of a pipeline of thread `index`, for `sink`.
func counter(_ sink: Sink, _ tallies: [PaddedTally], _ index: Int, shared: SharedCounter? = nil) -> @Sendable (Int) -> Void {
    switch sink {
    case .ownTally:
        let tally = tallies[index]
        return { _ in tally.count &+= 1 }
    case .sharedObject:
        // Captures only the shared object, which is then the closure's context.
        let shared = shared ?? SharedCounter(tallies)
        return { shared.record($0) }
    }
}

/// What a thread does with one of its pipelines: send it a value, and end it after the run.
struct Driver {
    let send: (Int) -> Void
    let end: () -> Void
}

/// One pipeline of the independent-pipelines scenarios, `map { $0 + 1 } |> filter { even }` into a
/// subscriber whose callback is `count`: the library's, or a hand-written one.
func independentPipeline(_ form: Form, counting count: @escaping @Sendable (Int) -> Void) -> Driver {
    switch form {
    case .library:
        let pipe = ValuePipe<Int>()
        let subscription = (pipe.signal() |> map { $0 &+ 1 } |> filter { $0 & 1 == 0 }).start(next: count)
        return Driver(send: { pipe.putNext($0) }, end: { subscription.dispose() })
    case .tight: return handWrittenPipeline(TightPipe.self, counting: count)
    case .closable: return handWrittenPipeline(HandPipe<Int>.self, counting: count)
    }
}

/// ``independentPipeline(_:counting:)`` written by hand, with the stages and pipe of one baseline: one
/// stage that maps, filters and counts, as the library runs `map`, `filter` and the callback in one
/// subscriber. (Until 2026-11-30 the hand-written forms had a second stage for the callback.)
func handWrittenPipeline<Pipe: HandWrittenPipe>(_: Pipe.Type, counting count: @escaping @Sendable (Int) -> Void) -> Driver
where Pipe.Stage.Input == Int {
    let pipe = Pipe()
    let stage = Pipe.Stage { value in
        let mapped = value &+ 1
        if mapped & 1 == 0 { count(mapped) }
    }
    pipe.attach(stage)
    return Driver(send: { pipe.push($0) }, end: { stage.terminate() })
}

/// `threads` threads each build a pipeline of their own with `build`, given the callback that counts for
/// `sink`, and send it `operations` values, of which `delivering` reach the callback.
func pipelinesOfTheirOwn(
    _ threads: Int, _ operations: Int, delivering: Int, sink: Sink,
    build: @escaping @Sendable (@escaping @Sendable (Int) -> Void) -> Driver
) -> Prepared {
    let tallies = (0..<threads).map { _ in PaddedTally() }
    let shared = SharedCounter(tallies)
    return Prepared(
        work: { index in
            let pipeline = build(counter(sink, tallies, index, shared: shared))
            for value in 0..<operations { pipeline.send(sent(value, by: index)) }
            pipeline.end()
        },
        check: {
            let delivered = tallies.reduce(0) { $0 + $1.count }
            precondition(delivered == threads * delivering, "pipelines of their own lost values")
            return threads * operations
        })
}

/// One pipeline of the stateful scenario: drops a repeat of the value before, then sends a running sum.
/// The hand-written forms keep each stage's state behind the stage's own mutex.
func statefulPipeline(_ form: Form, counting count: @escaping @Sendable (Int) -> Void) -> Driver {
    switch form {
    case .library:
        let pipe = ValuePipe<Int>()
        let subscription = (pipe.signal() |> distinctUntilChanged |> scan(0, { $0 &+ $1 })).start(next: count)
        return Driver(send: { pipe.putNext($0) }, end: { subscription.dispose() })
    case .tight: return fusedStatefulPipeline(counting: count)
    case .closable: return handWrittenStatefulPipeline(HandPipe<Int>.self, counting: count)
    }
}

/// ``statefulPipeline(_:counting:)`` as the tight floor writes it: one stage that drops a repeat and adds
/// to the sum, with both values behind one mutex, and counts. (Until 2026-11-30 it was three stages and
/// two mutexes, as the closable stages still are.)
func fusedStatefulPipeline(counting count: @escaping @Sendable (Int) -> Void) -> Driver {
    let pipe = TightPipe()
    let state = HandState<(last: Int?, sum: Int)>((nil, 0))
    let stage = TightStage { value in
        let total = state.update { state -> Int? in
            guard state.last != value else { return nil }
            state.last = value
            state.sum &+= value
            return state.sum
        }
        if let total { count(total) }
    }
    pipe.attach(stage)
    return Driver(send: { pipe.push($0) }, end: { stage.terminate() })
}

/// ``statefulPipeline(_:counting:)`` written by hand, with the stages and pipe of one baseline.
func handWrittenStatefulPipeline<Pipe: HandWrittenPipe>(
    _: Pipe.Type, counting count: @escaping @Sendable (Int) -> Void
) -> Driver where Pipe.Stage.Input == Int {
    let pipe = Pipe()
    let sink = Pipe.Stage(count)
    let sum = HandState(0)
    let summing = Pipe.Stage { value in
        let total = sum.update { total in
            total &+= value
            return total
        }
        sink.push(total)
    }
    let last = HandState<Int?>(nil)
    let distinct = Pipe.Stage { value in
        let changed = last.update { previous in
            defer { previous = value }
            return previous != value
        }
        if changed { summing.push(value) }
    }
    pipe.attach(distinct)
    return Driver(
        send: { pipe.push($0) },
        end: {
            distinct.terminate()
            summing.terminate()
            sink.terminate()
        })
}

/// A value moved into a `@Sendable` closure that only reads it: the closures inside are used by one
/// thread each at a time (each driver by the thread it was handed to).
struct UnsafeTransfer<Value>: @unchecked Sendable {
    // Safe: see the type's comment; the array is read only after it is built.
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A counter that threads add to at once: one atomic word.
final class SharedTally: Sendable {
    private let count = Synchronization.Atomic<Int>(0)
    var value: Int { self.count.load(ordering: .relaxed) }
    func add(_ amount: Int = 1) { self.count.wrappingAdd(amount, ordering: .relaxed) }
}

/// `threads` threads send `operations` deliveries' worth of values into one feed of `subscribers`, whose
/// callbacks all capture one object that counts in the sending thread's tally: as their only capture
/// (the object is then the callback's context), or beside a value of their own (the callback then has
/// a context of its own).
func sharedFeed(_ form: Form, threads: Int, operations: Int, subscribers: Int, contextsOfTheirOwn: Bool = false) -> Prepared {
    let tallies = (0..<threads).map { _ in PaddedTally() }
    let shared = SharedCounter(tallies)
    let values = operations / subscribers
    let pipe = ValuePipe<Int>()
    let tightPipe = TightPipe()
    let handPipe = HandPipe<Int>()
    var subscriptions: [Disposable] = []
    for subscriber in 0..<subscribers {
        let count: @Sendable (Int) -> Void
        if contextsOfTheirOwn {
            count = { value in
                withExtendedLifetime(subscriber) {}
                shared.record(value)
            }
        } else {
            count = { shared.record($0) }
        }
        switch form {
        case .library:
            subscriptions.append(pipe.signal().start(next: count))
        case .tight:
            tightPipe.attach(TightStage(count))
        case .closable:
            let sink = HandStage<Int>(count)
            _ = handPipe.subscribe { sink.push($0) }
        }
    }
    let kept = subscriptions
    return Prepared(
        work: { index in
            for value in 0..<values {
                switch form {
                case .library: pipe.putNext(sent(value, by: index))
                case .tight: tightPipe.push(sent(value, by: index))
                case .closable: handPipe.push(sent(value, by: index))
                }
            }
        },
        check: {
            withExtendedLifetime(kept) {}
            let total = tallies.reduce(0) { $0 + $1.count }
            precondition(total == threads * values * subscribers, "the shared feed lost deliveries")
            return total
        })
}

/// Runs `prepared.work` on `threads` threads started together; returns operations per second.
func measure(_ prepared: Prepared, threads: Int) -> Double {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for index in 0..<threads {
        let thread = Thread {
            ready.signal()
            go.wait()
            prepared.work(index)
            done.signal()
        }
        thread.start()
    }
    for _ in 0..<threads { ready.wait() }
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<threads { go.signal() }
    for _ in 0..<threads { done.wait() }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return Double(prepared.check()) / seconds
}
