// The hand-written floor of each shape: the least a correct program that does the same job by hand
// keeps per subscription. Callbacks live in a mutex-guarded array of slots, reused through a list of
// free ones; a subscription is a token (a struct: the registry and the slot) that empties its slot. No
// terminal events, no disposal protocol beyond that, no operators.
//
// Until 2026-11-30 the callbacks lived in a dictionary by key and the token was an object: a review
// found both above the least (a dictionary of 100,000 entries has just grown to 262,144 buckets, and
// the token was an allocation of its own), which flattered the library's ratios to the floor.

import SwiftSignalKit
import Synchronization

/// A mutex-guarded registry of callbacks, with an optional current value that a new callback gets first.
final class FloorRegistry: Sendable {
    private struct State {
        var callbacks: [(@Sendable (Int) -> Void)?] = []
        /// Slots emptied by a cancel, reused before the array grows.
        var free: [Int] = []
        var current: Int?
    }

    private let state: Mutex<State>

    init(current: Int? = nil) {
        self.state = Mutex(State(current: current))
    }

    func add(_ callback: @escaping @Sendable (Int) -> Void) -> FloorToken {
        let (slot, current) = self.state.withLock { state in
            let slot: Int
            if let reused = state.free.popLast() {
                slot = reused
                state.callbacks[slot] = callback
            } else {
                slot = state.callbacks.count
                state.callbacks.append(callback)
            }
            return (slot, state.current)
        }
        if let current { callback(current) }
        return FloorToken(registry: self, slot: slot)
    }

    func remove(_ slot: Int) {
        let removed = self.state.withLock { state in
            defer {
                state.callbacks[slot] = nil
                state.free.append(slot)
            }
            return state.callbacks[slot]
        }
        withExtendedLifetime(removed) {}
    }

    func send(_ value: Int) {
        let callbacks = self.state.withLock { state in
            state.current = state.current.map { _ in value }
            return state.callbacks
        }
        for case let callback? in callbacks { callback(value) }
    }
}

/// A subscription to a ``FloorRegistry``: cancelling empties its slot. Cancel once: the slot may be
/// reused afterwards (the harness cancels each token once; a generation number would make a second
/// cancel harmless, at 8 more bytes a subscription).
struct FloorToken: Sendable {
    let registry: FloorRegistry
    let slot: Int

    func cancel() {
        self.registry.remove(self.slot)
    }
}

final class HotMapFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let registry = FloorRegistry()
    var held: Handles<FloorToken>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = self.registry.add { sink.receive($0 + 1) }
        }
    }

    func check() async -> String? {
        self.registry.send(1)
        return self.sink.expect(self.count, "values")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}

final class PromiseFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var registries: Handles<FloorRegistry>
    var held: Handles<FloorToken>

    init(count: Int) {
        self.count = count
        self.registries = Handles(count: count)
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            let registry = FloorRegistry(current: 0)
            self.registries[index] = registry
            self.held[index] = registry.add { sink.receive($0) }
        }
    }

    func check() async -> String? {
        for registry in self.registries.all { registry.send(1) }
        return self.sink.expect(2 * self.count, "the initial value and one send per value")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
        self.registries.endAll { _ in }
    }
}

/// An idle chain by hand: the stages composed into one callback, which cancelling releases.
final class FloorSubscription: Sendable {
    let callback: Mutex<(@Sendable (Int) -> Void)?>

    init(_ callback: @escaping @Sendable (Int) -> Void) {
        self.callback = Mutex(callback)
    }

    func cancel() {
        let callback = self.callback.withLock { callback in
            defer { callback = nil }
            return callback
        }
        withExtendedLifetime(callback) {}
    }
}

final class IdleChainFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    var held: Handles<FloorSubscription>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        let sink = self.sink
        for index in 0..<self.count {
            self.held[index] = FloorSubscription { value in
                let mapped = value + 1
                if mapped > 0 { sink.receive(mapped) }
            }
        }
    }

    func check() async -> String? {
        return self.sink.expect(0, "values")
    }

    func end() async {
        self.held.endAll { $0.cancel() }
    }
}

/// combineLatest by hand: a pair of latest values per subscription, fed by two registries.
final class FloorPair: Sendable {
    let latest = Mutex<(Int?, Int?)>((nil, nil))
    let sink: Sink

    init(sink: Sink) {
        self.sink = sink
    }

    func update(_ change: (inout (Int?, Int?)) -> Void) {
        let pair = self.latest.withLock { latest -> (Int, Int)? in
            change(&latest)
            guard let first = latest.0, let second = latest.1 else { return nil }
            return (first, second)
        }
        if let (first, second) = pair { self.sink.receive(first + second) }
    }
}

final class CombineLatestFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let first = FloorRegistry()
    let second = FloorRegistry()
    var held: Handles<(FloorToken, FloorToken)>

    init(count: Int) {
        self.count = count
        self.held = Handles(count: count)
    }

    func subscribe() async {
        for index in 0..<self.count {
            let pair = FloorPair(sink: self.sink)
            let firstToken = self.first.add { value in pair.update { $0.0 = value } }
            let secondToken = self.second.add { value in pair.update { $0.1 = value } }
            self.held[index] = (firstToken, secondToken)
        }
    }

    func check() async -> String? {
        self.first.send(1)
        self.second.send(2)
        return self.sink.expect(self.count, "pairs")
    }

    func end() async {
        self.held.endAll { tokens in
            tokens.0.cancel()
            tokens.1.cancel()
        }
    }
}

/// The least a suspended consumer holds: a task waiting on a continuation kept in a list. An unsafe
/// continuation, as the library's bridges use: a checked one adds a box per waiter (the floor until
/// 2026-11-30).
final class ForAwaitFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let waiting: Slots<UnsafeContinuation<Int?, Never>>
    var tasks: Handles<Task<Void, Never>>

    init(count: Int) {
        self.count = count
        self.waiting = Slots(count: count)
        self.tasks = Handles(count: count)
    }

    func subscribe() async {
        let (sink, waiting) = (self.sink, self.waiting)
        for index in 0..<self.count {
            self.tasks[index] = Task.detached {
                while let value = await withUnsafeContinuation({ waiting.append($0) }) {
                    sink.receive(value)
                }
            }
        }
        await waitUntil { self.waiting.count == self.count }
    }

    func check() async -> String? {
        for continuation in self.waiting.takeAll() { continuation.resume(returning: 1) }
        await waitUntil { self.waiting.count == self.count }
        return self.sink.expect(self.count, "values")
    }

    func end() async {
        for continuation in self.waiting.takeAll() { continuation.resume(returning: nil) }
        for task in self.tasks.all { await task.value }
        self.tasks.endAll { _ in }
    }
}

/// The least a pending `get()` holds: a task waiting on an unsafe continuation kept in a list.
final class PendingGetFloor: LiveSubscriptions {
    let count: Int
    let sink = Sink()
    let waiting: Slots<UnsafeContinuation<Int, Never>>
    var tasks: Handles<Task<Void, Never>>

    init(count: Int) {
        self.count = count
        self.waiting = Slots(count: count)
        self.tasks = Handles(count: count)
    }

    func subscribe() async {
        let (sink, waiting) = (self.sink, self.waiting)
        for index in 0..<self.count {
            self.tasks[index] = Task.detached {
                sink.receive(await withUnsafeContinuation { waiting.append($0) })
            }
        }
        await waitUntil { self.waiting.count == self.count }
    }

    func check() async -> String? {
        for continuation in self.waiting.takeAll() { continuation.resume(returning: 1) }
        for task in self.tasks.all { await task.value }
        return self.sink.expect(self.count, "values awaited")
    }

    func end() async {
        self.tasks.endAll { _ in }
    }
}

/// A plain actor holding the same value.
actor PlainActor {
    var value: Int

    init(value: Int) {
        self.value = value
    }

    func bump() -> Int {
        self.value += 1
        return 1
    }
}

final class QueueLocalActorFloor: LiveSubscriptions {
    let count: Int
    var actors: Handles<PlainActor>

    init(count: Int) {
        self.count = count
        self.actors = Handles(count: count)
    }

    func subscribe() async {
        for index in 0..<self.count {
            self.actors[index] = PlainActor(value: index)
        }
    }

    func check() async -> String? {
        var total = 0
        for actor in self.actors.all { total += await actor.bump() }
        return total == self.count ? nil : "\(total) actors answered, \(self.count) expected"
    }

    func end() async {
        self.actors.endAll { _ in }
    }
}
