// The hand-written baselines of the scaling suite: push pipelines in their own heap objects. What a
// careful programmer writes without a library, and what the library must keep up with as threads are
// added.
//
// - The tight floor (`TightStage`, `TightPipe`): the fastest correct pipeline a careful programmer
//   writes. Per value and stage: an acquiring load of an atomic `terminated` flag (a plain load on
//   x86-64; nothing is written, so threads that share a stage share its line only for reading), then
//   a call of an immutable closure, which is not copied (no retain or release of its context), in a
//   stage that is not generic (no reabstraction thunk). Per value, the pipe copies its array of stages under its mutex (one retain and release of
//   the array's buffer) and calls each stage outside it. Until 2026-11-30 each stage locked a mutex to
//   read the flag, which wrote the stage's line twice per value and made the floor slower than the
//   library (README.md, "The baselines, rebuilt").
// - Closable stages (`HandStage`, `HandPipe`): each stage's callback is optional and read under the
//   lock, as a stage that can be closed and release its callback keeps it, so the callback's context is
//   retained and released per stage per value; the pipe copies an array of closures.

import BaselineMutex
import Synchronization

/// The baseline's lock: a pthread mutex at a stable heap address of its own.
typealias HandMutex = BaselineMutex

/// A stage of either hand-written baseline, so that a scenario builds its pipeline once for both.
protocol HandWrittenStage<Input>: AnyObject, Sendable {
    associatedtype Input
    init(_ next: @escaping @Sendable (Input) -> Void)
    func push(_ value: Input)
    /// Ends the stage: values pushed afterwards are dropped.
    func terminate()
}

/// A hot source of either hand-written baseline, for its kind of stage.
protocol HandWrittenPipe<Stage>: AnyObject, Sendable {
    associatedtype Stage: HandWrittenStage
    init()
    func attach(_ stage: Stage)
    func push(_ value: Stage.Input)
}

/// A stage: its callback behind its own mutex, read under the lock and called outside it.
final class HandStage<Input>: HandWrittenStage, @unchecked Sendable {
    // Safe: `next` is read only with `lock` held. (Mutable, as a stage that can be closed keeps it: the
    // baseline pays the lock that such a stage needs.)
    private let lock = HandMutex()
    private var next: (@Sendable (Input) -> Void)?

    init(_ next: @escaping @Sendable (Input) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Input) {
        if let next = self.lock.locked({ self.next }) { next(value) }
    }

    /// Closes the stage: its callback is released, outside the lock.
    func terminate() {
        let next = self.lock.locked { () -> (@Sendable (Input) -> Void)? in
            defer { self.next = nil }
            return self.next
        }
        withExtendedLifetime(next) {}
    }
}

/// A stage's state behind its own mutex, changed by a closure that runs under it.
final class HandState<State>: @unchecked Sendable {
    // Safe: `state` is read and written only with `lock` held. `@exclusivity(unchecked)`: the lock orders
    // every access, so the runtime's dynamic check (`swift_beginAccess`, about 76 instructions) is not
    // needed on each one.
    private let lock = HandMutex()
    @exclusivity(unchecked) private var state: State

    init(_ state: State) {
        self.state = state
    }

    @inline(__always)
    func update<R>(_ body: (inout State) -> R) -> R {
        self.lock.locked { body(&self.state) }
    }
}

/// A hot source: its subscribers' callbacks behind one mutex, copied under the lock and called outside it.
final class HandPipe<Value>: HandWrittenPipe, @unchecked Sendable {
    // Safe: `keys`, `callbacks` and `nextKey` are read and written only with `lock` held.
    private let lock = HandMutex()
    private var keys: [Int] = []
    private var callbacks: [@Sendable (Value) -> Void] = []
    private var nextKey = 0

    init() {}

    /// Subscribes a closable stage.
    func attach(_ stage: HandStage<Value>) {
        _ = self.subscribe { stage.push($0) }
    }

    /// Adds `callback`; returns the key that removes it.
    func subscribe(_ callback: @escaping @Sendable (Value) -> Void) -> Int {
        self.lock.locked {
            defer { self.nextKey += 1 }
            self.keys.append(self.nextKey)
            self.callbacks.append(callback)
            return self.nextKey
        }
    }

    func unsubscribe(_ key: Int) {
        let removed: (@Sendable (Value) -> Void)? = self.lock.locked {
            guard let index = self.keys.firstIndex(of: key) else { return nil }
            self.keys.remove(at: index)
            return self.callbacks.remove(at: index)
        }
        withExtendedLifetime(removed) {}
    }

    @inline(__always)
    func push(_ value: Value) {
        let targets = self.lock.locked { self.callbacks }
        for target in targets { target(value) }
    }
}

/// A fan-out to `AsyncStream`s, one per consumer: the hand-written way to give each `for await` loop
/// every value of one producer.
final class HandBroadcaster<Value: Sendable>: @unchecked Sendable {
    // Safe: `continuations` is read and written only with `lock` held.
    private let lock = HandMutex()
    private var continuations: [AsyncStream<Value>.Continuation] = []

    /// A stream of every value sent from now on.
    func makeStream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        self.lock.locked { self.continuations.append(continuation) }
        return stream
    }

    func send(_ value: Value) {
        let targets = self.lock.locked { self.continuations }
        for target in targets { target.yield(value) }
    }
}

/// A stage of the tight floor: an immutable callback, and an atomic flag that says whether the stage
/// has ended. Per value: an acquiring load of the flag, then the callback, called without copying it.
/// `terminate()` stores the flag with release ordering; a value whose load came first may still be
/// delivered, as one already under way may with the library. Of `Int`s, not generic: a closure stored
/// in a generic class is kept in its most general form, and each call went through a reabstraction
/// thunk, which the library's specialised code does not pay.
final class TightStage: HandWrittenStage, Sendable {
    private let terminated = Atomic<Bool>(false)
    private let next: @Sendable (Int) -> Void

    /// Not inlined, so that the optimiser cannot see the callback through the stage: a program builds its
    /// stages where it sets the pipeline up, not where it pushes.
    @inline(never)
    init(_ next: @escaping @Sendable (Int) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Int) {
        if !self.terminated.load(ordering: .acquiring) { self.next(value) }
    }

    func terminate() {
        self.terminated.store(true, ordering: .releasing)
    }
}

/// A hot source of the tight floor: an array of its stages behind its mutex, copied under the lock and
/// called outside it. Each stage is reached at +0 through its address (the copy owns the stages
/// meanwhile), as the library's broadcast does: a retain and a release per stage and value would write
/// each stage's reference count, a line every thread pushing into the pipe shares.
final class TightPipe: HandWrittenPipe, @unchecked Sendable {
    // Safe: `stages` is read and written only with `lock` held; a copy of it owns its stages, so the
    // addresses in it stay valid while the copy lives.
    // `@exclusivity(unchecked)`: the lock orders every access (see `HandState`).
    private let lock = HandMutex()
    @exclusivity(unchecked) private var stages: [Entry] = []

    /// A stage, with its address for calls at +0.
    private struct Entry {
        let stage: TightStage
        let address: UnsafeMutableRawPointer
    }

    init() {}

    func attach(_ stage: TightStage) {
        let entry = Entry(stage: stage, address: Unmanaged.passUnretained(stage).toOpaque())
        self.lock.locked { self.stages.append(entry) }
    }

    @inline(__always)
    func push(_ value: Int) {
        let stages = self.lock.locked { self.stages }
        stages.withUnsafeBufferPointer { stages in
            for index in stages.indices {
                Unmanaged<TightStage>.fromOpaque(stages[index].address)._withUnsafeGuaranteedRef {
                    $0.push(value)
                }
            }
        }
    }
}
