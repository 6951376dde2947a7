// The hand-written baseline of the scaling suite: push pipelines of locked closures, one pthread mutex
// per stage, in their own heap objects. What a careful programmer writes without a library, and what the
// library must keep up with as threads are added.

import BaselineMutex

/// The baseline's lock: a pthread mutex at a stable heap address of its own.
typealias HandMutex = BaselineMutex

/// A stage: its callback behind its own mutex, read under the lock and called outside it.
final class HandStage<Input>: @unchecked Sendable {
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
}

/// A stage's state behind its own mutex, changed by a closure that runs under it.
final class HandState<State>: @unchecked Sendable {
    // Safe: `state` is read and written only with `lock` held.
    private let lock = HandMutex()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    @inline(__always)
    func update<R>(_ body: (inout State) -> R) -> R {
        self.lock.locked { body(&self.state) }
    }
}

/// A hot source: its subscribers' callbacks behind one mutex, copied under the lock and called outside it.
final class HandPipe<Value>: @unchecked Sendable {
    // Safe: `keys`, `callbacks` and `nextKey` are read and written only with `lock` held.
    private let lock = HandMutex()
    private var keys: [Int] = []
    private var callbacks: [@Sendable (Value) -> Void] = []
    private var nextKey = 0

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
