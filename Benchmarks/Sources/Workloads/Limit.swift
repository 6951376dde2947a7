// The "limit": hand-written push pipelines with exactly one pthread mutex lock/unlock per stage and
// nothing else: no terminal events, no disposal protocol, no re-entrancy bookkeeping. A locked push
// library cannot do less work per stage, so each workload's limit is its floor.

import BaselineMutex

/// The limit's lock: the baselines' pthread mutex at a stable heap address.
typealias LimitMutex = BaselineMutex

/// A stage a fan-out can deliver to and close.
protocol PushStage<Input>: AnyObject, Sendable {
    associatedtype Input
    func push(_ value: Input)
    func close()
}

/// One stage: lock, look at its own state, unlock, call the next closure.
final class LimitStage<Input>: PushStage, @unchecked Sendable {
    // Safe: `isOpen` is read and written only under `mutex`; `next` is immutable.
    private let mutex = LimitMutex()
    private var isOpen = true
    private let next: (Input) -> Void

    init(_ next: @escaping (Input) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Input) {
        self.mutex.lock()
        let open = self.isOpen
        self.mutex.unlock()
        if open { self.next(value) }
    }

    func close() {
        self.mutex.lock()
        self.isOpen = false
        self.mutex.unlock()
    }
}

/// A mutex-guarded registry of stages: what a multicast source must at least do.
final class LimitFanOut<Stage: PushStage>: @unchecked Sendable {
    typealias Value = Stage.Input
    // Safe: `stages` and `nextKey` are read and written only under `mutex`.
    private let mutex = LimitMutex()
    private var stages: [Int: Stage] = [:]
    private var order: [Stage] = []
    private var nextKey = 0

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
        self.order = self.stages.keys.sorted().map { self.stages[$0]! }
        self.mutex.unlock()
    }

    @inline(__always)
    func push(_ value: Value) {
        self.mutex.lock()
        let stages = self.order
        self.mutex.unlock()
        for stage in stages {
            stage.push(value)
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

/// The least a stage must do to keep this library's subscriber contract, for comparison with the limit:
/// after `dispose()` returns no callback may start, and `dispose()` releases the callbacks without
/// waiting for a callback in progress, so each delivery takes its own reference to the callback under
/// the lock. That is the limit's one lock round trip plus a retain and a release per stage.
final class ContractStage<Input>: PushStage, @unchecked Sendable {
    // Safe: `next` is read and written only under `mutex`.
    private let mutex = LimitMutex()
    private var next: ((Input) -> Void)?

    init(_ next: @escaping (Input) -> Void) {
        self.next = next
    }

    @inline(__always)
    func push(_ value: Input) {
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
