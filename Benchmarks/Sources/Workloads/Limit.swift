// The "limit": hand-written push pipelines that do the least a correct closable stage can do, and
// nothing else: no terminal events, no disposal protocol, no re-entrancy bookkeeping. Per value and
// stage, one acquiring load of an atomic flag (a plain load on x86-64) and a call of an immutable
// closure, which is not copied, in a stage that is not generic (no reabstraction thunk per call).
// Until 2026-11-30 each stage locked a pthread mutex to read that flag, and was generic: a review found
// the limit no faster than the library, which the fastest correct code a careful programmer writes
// must be (Benchmarks/README.md, "The baselines, rebuilt").
//
// The fan-out (`LimitFanOut`) still copies its array of stages under a mutex per value: a source that
// stages join and leave from other threads needs that lock or something like it (a retain of a snapshot
// under a lock), and the library's sources do no less. It delivers to the stages `freeze()` last put in
// order: a workload that adds or removes stages freezes again before it pushes.

import BaselineMutex
import Synchronization

/// The limit's lock, where it needs one (the fan-out, the combiner, the contract floor): the baselines'
/// pthread mutex at a stable heap address.
typealias LimitMutex = BaselineMutex

/// A stage a fan-out can deliver to and close.
protocol PushStage<Input>: AnyObject, Sendable {
    associatedtype Input
    func push(_ value: Input)
    func close()
}

/// One stage of `Int`s: an immutable callback and an atomic flag that says whether the stage is still
/// open. Per value: an acquiring load of the flag (a plain load on x86-64; on arm64 a load-acquire, where
/// a relaxed load would do, since the flag publishes nothing), then the callback, called without
/// copying it. `close()` stores the flag with release ordering: a value pushed after `close()` returns
/// (ordered after it by the caller) sees it and is dropped; one whose load came first may still call
/// the callback, as a delivery already under way may with the library.
///
/// Not generic: a closure stored in a generic class is kept in its most general form, so each call
/// went through a reabstraction thunk (about 16 instructions per value), which the library's code,
/// specialised for the client's types, does not pay. A careful programmer writing an `Int` pipeline
/// writes this. ``LimitStageOf`` is the same stage for other types.
final class LimitStage: PushStage, @unchecked Sendable {
    // Safe: `isOpen` is atomic and `next` immutable. `next` is not `@Sendable`: the workloads'
    // callbacks write a `Sum` from one thread at a time, or synchronise themselves.
    private let isOpen = Atomic<Bool>(true)
    private let next: (Int) -> Void

    /// Not inlined, so that the optimiser cannot see the callback through the stage and delete the
    /// pipeline: a program builds its stages where it sets the pipeline up, not where it pushes.
    @inline(never)
    init(_ next: @escaping (Int) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Int) {
        if self.isOpen.load(ordering: .acquiring) { self.next(value) }
    }

    func close() {
        self.isOpen.store(false, ordering: .releasing)
    }
}

/// ``LimitStage`` for values of another type (W4's arrays), where the thunk is paid.
final class LimitStageOf<Input>: PushStage, @unchecked Sendable {
    // Safe: as `LimitStage`.
    private let isOpen = Atomic<Bool>(true)
    private let next: (Input) -> Void

    /// Not inlined, as `LimitStage`'s.
    @inline(never)
    init(_ next: @escaping (Input) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Input) {
        if self.isOpen.load(ordering: .acquiring) { self.next(value) }
    }

    func close() {
        self.isOpen.store(false, ordering: .releasing)
    }
}

/// A mutex-guarded registry of stages: what a multicast source must at least do. Per value: a lock
/// round trip to copy the delivery order (one retain and release of its buffer), then each stage's
/// `push` outside the lock, reached at +0 through its address (the copy owns the stages meanwhile), so
/// that delivering costs no retain and release per stage; the library's broadcast does the same.
final class LimitFanOut<Stage: PushStage>: @unchecked Sendable {
    typealias Value = Stage.Input
    // Safe: `stages`, `order` and `nextKey` are read and written only under `mutex`; a copy of `order`
    // owns its stages, so the addresses in it stay valid while the copy lives.
    private let mutex = LimitMutex()
    private var stages: [Int: Stage] = [:]
    private var order: [Entry] = []
    private var nextKey = 0

    /// A stage in delivery order, with its address for calls at +0.
    private struct Entry {
        let stage: Stage
        let address: UnsafeMutableRawPointer

        init(_ stage: Stage) {
            self.stage = stage
            self.address = Unmanaged.passUnretained(stage).toOpaque()
        }
    }

    func add(_ stage: Stage) -> Int {
        self.mutex.lock()
        let key = self.nextKey
        self.nextKey += 1
        self.stages[key] = stage
        self.mutex.unlock()
        return key
    }

    func remove(_ key: Int) {
        self.mutex.lock()
        let removed = self.stages.removeValue(forKey: key)
        self.mutex.unlock()
        removed?.close()
    }

    /// Freezes the current stages into delivery order (done once, outside the measured delivery loop,
    /// as a copy-on-write snapshot would be).
    func freeze() {
        self.mutex.lock()
        self.order = self.stages.keys.sorted().map { Entry(self.stages[$0]!) }
        self.mutex.unlock()
    }

    @inline(__always)
    func push(_ value: Value) {
        self.mutex.lock()
        let entries = self.order
        self.mutex.unlock()
        entries.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                Unmanaged<Stage>.fromOpaque(entries[index].address)._withUnsafeGuaranteedRef { $0.push(value) }
            }
        }
    }
}

/// The floor of `combineLatest`: one mutex guarding the latest value of every source.
final class LimitCombiner: @unchecked Sendable {
    // Safe: `latest`, `present` and `missing` are read and written only under `mutex`; `scratch` is
    // written under `mutex` and read by the single pushing thread before its next push.
    private let mutex = LimitMutex()
    private let latest: UnsafeMutableBufferPointer<Int>
    private let scratch: UnsafeMutableBufferPointer<Int>
    private var present: [Bool]
    private var missing: Int
    private let next: (UnsafeMutableBufferPointer<Int>) -> Void

    init(arity: Int, next: @escaping (UnsafeMutableBufferPointer<Int>) -> Void) {
        self.latest = .allocate(capacity: arity)
        self.latest.initialize(repeating: 0)
        self.scratch = .allocate(capacity: arity)
        self.scratch.initialize(repeating: 0)
        self.present = Array(repeating: false, count: arity)
        self.missing = arity
        self.next = next
    }

    deinit {
        self.latest.deallocate()
        self.scratch.deallocate()
    }

    @inline(__always)
    func push(_ value: Int, at index: Int) {
        self.mutex.lock()
        self.latest[index] = value
        if !self.present[index] {
            self.present[index] = true
            self.missing -= 1
        }
        let ready = self.missing == 0
        if ready {
            for i in 0..<self.latest.count { self.scratch[i] = self.latest[i] }
        }
        self.mutex.unlock()
        if ready { self.next(self.scratch) }
    }

    /// The array form must hand out a fresh array per emission, so its floor copies one.
    @inline(__always)
    func pushCopyingArray(_ value: Int, at index: Int, into sink: ([Int]) -> Void) {
        self.mutex.lock()
        self.latest[index] = value
        if !self.present[index] {
            self.present[index] = true
            self.missing -= 1
        }
        let snapshot: [Int]? = self.missing == 0 ? Array(self.latest) : nil
        self.mutex.unlock()
        if let snapshot { sink(snapshot) }
    }
}

/// What a stage written the plain way does to keep this library's subscriber contract, for comparison
/// with the limit: after `dispose()` returns no callback may start, and `dispose()` releases the
/// callbacks without waiting for a callback in progress, so each delivery takes its own reference to the
/// callback under a lock. Per value and stage: a mutex lock and unlock, a retain and a release, where the
/// limit has one atomic load. It is not the least the contract needs: the library keeps it without a
/// lock or a retain per value (a gate that counts deliveries in flight, and the callbacks released by
/// whichever of `dispose()` and the last delivery comes second).
///
/// Of `Int`s, not generic, for the reason ``LimitStage`` gives.
final class ContractStage: PushStage, @unchecked Sendable {
    // Safe: `next` is read and written only under `mutex`.
    private let mutex = LimitMutex()
    private var next: ((Int) -> Void)?

    /// Not inlined, so that the optimiser cannot see the callback through the stage and delete the
    /// pipeline: a program builds its stages where it sets the pipeline up, not where it pushes.
    @inline(never)
    init(_ next: @escaping (Int) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Int) {
        self.mutex.lock()
        let callback = self.next
        self.mutex.unlock()
        // `consume`: binding the optional would copy the closure, a second retain and release.
        guard let callback = consume callback else { return }
        callback(value)
    }

    /// Drops the callback; it is released after the lock is let go.
    func close() {
        self.mutex.lock()
        let callback = self.next
        self.next = nil
        self.mutex.unlock()
        withExtendedLifetime(callback) {}
    }
}
