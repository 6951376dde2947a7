// The shapes the memory suite measures, and what every implementation of one provides.

import Synchronization

/// One implementation of one shape: `count` live subscriptions held at once.
///
/// The initialiser allocates and touches everything the harness itself needs to keep them (the arrays
/// of handles and tasks), so that the measurement between `subscribe()` and the reading after it sees
/// only the subscriptions.
@MainActor protocol LiveSubscriptions: AnyObject {
    init(count: Int)
    /// Makes the subscriptions and returns when every one is live (for a task: subscribed and
    /// suspended in its wait).
    func subscribe() async
    /// Sends through every subscription and checks that each one received; returns what went wrong.
    func check() async -> String?
    /// Ends every subscription and returns when all of them are gone.
    func end() async
}

/// The implementations of one shape, by name.
struct Shape {
    let name: String
    let implementations: [String: @MainActor (Int) -> any LiveSubscriptions]
}

let allShapes: [Shape] = [
    Shape(
        name: "hot source through map",
        implementations: [
            "SignalKit": { HotMapSignalKit(count: $0) },
            "OpenCombine": { HotMapOpenCombine(count: $0) },
            "floor": { HotMapFloor(count: $0) },
        ]),
    Shape(
        name: "hot source through map, built per subscriber",
        implementations: [
            "SignalKit": { HotMapPerSubscriberSignalKit(count: $0) },
            "OpenCombine": { HotMapPerSubscriberOpenCombine(count: $0) },
        ]),
    Shape(
        name: "ValuePromise with one subscriber",
        implementations: [
            "SignalKit": { PromiseSignalKit(count: $0) },
            "OpenCombine": { PromiseOpenCombine(count: $0) },
            "floor": { PromiseFloor(count: $0) },
        ]),
    Shape(
        name: "idle three-stage chain",
        implementations: [
            "SignalKit": { IdleChainSignalKit(count: $0) },
            "OpenCombine": { IdleChainOpenCombine(count: $0) },
            "floor": { IdleChainFloor(count: $0) },
        ]),
    Shape(
        name: "idle three-stage chain, built per subscription",
        implementations: [
            "SignalKit": { IdleChainPerSubscriptionSignalKit(count: $0) },
            "OpenCombine": { IdleChainPerSubscriptionOpenCombine(count: $0) },
        ]),
    Shape(
        name: "combineLatest of two pipes",
        implementations: [
            "SignalKit": { CombineLatestSignalKit(count: $0) },
            "floor": { CombineLatestFloor(count: $0) },
        ]),
    Shape(
        name: "suspended for await over values",
        implementations: [
            "SignalKit": { ForAwaitSignalKit(count: $0) },
            "AsyncStream": { ForAwaitAsyncStream(count: $0) },
            "floor": { ForAwaitFloor(count: $0) },
        ]),
    Shape(
        name: "pending get()",
        implementations: [
            "SignalKit": { PendingGetSignalKit(count: $0) },
            "floor": { PendingGetFloor(count: $0) },
        ]),
    Shape(
        name: "QueueLocalActor",
        implementations: [
            "SignalKit": { QueueLocalActorSignalKit(count: $0) },
            "floor": { QueueLocalActorFloor(count: $0) },
        ]),
]

/// Counts what the subscriptions receive: one shared object, so that a callback capturing it
/// captures a single reference (no closure context) in every implementation alike.
final class Sink: Sendable {
    let received = Atomic<Int>(0)

    @inline(never)
    func receive(_ value: Int) {
        self.received.add(1, ordering: .relaxed)
    }

    var count: Int { self.received.load(ordering: .relaxed) }

    func expect(_ expected: Int, _ what: String) -> String? {
        let count = self.count
        return count == expected ? nil : "\(what): \(count) received, \(expected) expected"
    }
}

/// A fixed-size list that the harness fills while subscribing: allocated and touched up front.
final class Slots<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element?]
        var filled = 0
    }

    private let state: Mutex<State>

    init(count: Int) {
        self.state = Mutex(State(items: Array(repeating: nil, count: count)))
    }

    func append(_ item: Element) {
        self.state.withLock { state in
            state.items[state.filled] = item
            state.filled += 1
        }
    }

    var count: Int { self.state.withLock { $0.filled } }

    /// Takes every item out, leaving the slots in place.
    func takeAll() -> [Element] {
        self.state.withLock { state in
            let taken = state.items[0..<state.filled].map { $0! }
            for index in 0..<state.filled { state.items[index] = nil }
            state.filled = 0
            return taken
        }
    }

    func forEach(_ body: (Element) -> Void) {
        let items = self.state.withLock { state in Array(state.items[0..<state.filled]) }
        for item in items { body(item!) }
    }
}

/// The handles of live subscriptions (disposables, tasks, promises), one per index, in an array
/// allocated and touched when the shape is made, so that storing a handle allocates nothing.
struct Handles<Handle> {
    private var items: [Handle?]

    init(count: Int) {
        self.items = Array(repeating: nil, count: count)
    }

    subscript(index: Int) -> Handle {
        get { self.items[index]! }
        set { self.items[index] = newValue }
    }

    var all: [Handle] { self.items.map { $0! } }

    /// Ends each subscription with `end`, then lets its handle go.
    mutating func endAll(_ end: (Handle) -> Void) {
        for index in self.items.indices {
            end(self.items[index]!)
            self.items[index] = nil
        }
    }
}

/// Waits, without a timeout (the harness is watched from outside), until `condition` holds; then
/// lets the tasks that made it true reach their suspension point.
@MainActor func waitUntil(_ condition: () -> Bool) async {
    while !condition() {
        try? await Task.sleep(for: .milliseconds(1))
    }
    try? await Task.sleep(for: .milliseconds(50))
}
