// Runtime type look-ups per value, operator by operator, and per subscription to a promise: run through Scripts/lookups.sh, which loads
// Scripts/lookup-counter.c into the process. See Benchmarks/README.md, "Threads".
//
// Generic code that the compiler did not specialise for the client's types asks the Swift runtime for
// type metadata (`SignalEvent<T, E>`, a tuple, a state machine) each time it runs. The runtime answers
// from process-wide caches, and each look-up writes their reader count: on a per-value path, threads
// that share no object contend on that cache line. `--ci` fails when a chain makes such a look-up per
// value. Dynamic casts to a concrete type are counted and shown, not failed: they read type metadata
// and write nothing shared.

import Foundation
import SwiftSignalKit
import SwiftSignalKitConcurrency
import Synchronization

typealias ReadCounter = @convention(c) (Int32) -> Int
guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "lookup_counter_read") else {
    print("lookups: the counter is not loaded; run Benchmarks/Scripts/lookups.sh")
    exit(2)
}
let readCounter = unsafeBitCast(symbol, to: ReadCounter.self)
let ci = CommandLine.arguments.contains("--ci")

struct Counts {
    var generic: Int
    var tuple: Int
    var cast: Int

    static func now() -> Counts {
        Counts(generic: readCounter(0), tuple: readCounter(1), cast: readCounter(2))
    }
}

/// An error for `catch` to catch.
enum Failure: Error {
    case failed
}

let warmUp = 200
let measured = 1_000
let scheduler = Queue(name: "lookups")
var failures: [String] = []

print("| chain | type look-ups per value | tuple look-ups per value | casts per value |")
print("|---|---:|---:|---:|")

/// Sends values through `make(pipe.signal())` and reports the look-ups made per value once warm.
@MainActor func check(_ name: String, _ make: (Signal<Int, NoError>) -> Signal<Int, NoError>) {
    measure(name) { make($0).start(next: { _ in }) }
}

/// ``check(_:_:)`` for a chain whose values are dropped on the way (a `Signal<Never, NoError>`).
@MainActor func checkValueless(_ name: String, _ make: (Signal<Int, NoError>) -> Signal<Never, NoError>) {
    measure(name) { make($0).start() }
}

/// Subscribes with `subscribe` to a pipe, sends it values and reports the look-ups made per value once
/// warm.
@MainActor func measure(_ name: String, _ subscribe: (Signal<Int, NoError>) -> Disposable) {
    let pipe = ValuePipe<Int>()
    let subscription = subscribe(pipe.signal())
    for value in 0..<warmUp { pipe.putNext(value) }
    let before = Counts.now()
    for value in warmUp..<(warmUp + measured) { pipe.putNext(value) }
    let after = Counts.now()
    subscription.dispose()
    report(name, before, after)
}

/// Values that reached a subscriber on another thread, counted so that the main thread knows when a
/// batch has gone through.
final class Arrivals: Sendable {
    let count = Synchronization.Atomic<Int>(0)
    let reached = DispatchSemaphore(value: 0)
    let target = Synchronization.Atomic<Int>(0)

    func arrived() {
        if self.count.add(1, ordering: .relaxed).newValue == self.target.load(ordering: .relaxed) {
            self.reached.signal()
        }
    }

    /// Sends `values` with `send`, and returns once they have all arrived; stops the check when they
    /// have not after a minute (a chain that loses values).
    func send(_ values: Range<Int>, _ send: (Int) -> Void) {
        self.target.store(self.count.load(ordering: .relaxed) + values.count, ordering: .relaxed)
        for value in values { send(value) }
        if self.reached.wait(timeout: .now() + 60) == .timedOut {
            print("lookups: \(self.count.load(ordering: .relaxed)) values arrived of \(self.target.load(ordering: .relaxed))")
            exit(1)
        }
    }
}

/// The same as ``check(_:_:)`` for a chain that hands values to tasks (the `mapAsync` family): waits,
/// after the warm-up and after the measured values, until every value has reached the subscriber. The
/// counts include what the concurrency runtime looks up to run the tasks, on every thread.
///
/// Those include the runtime's own, now and then: on a fresh clone, `mapAsync(.concurrent(max: 4,
/// ordered: true))` once counted 0.295 per value in one batch where six other runs counted 0.001 at most.
/// So a batch over the limit is measured again, up to three batches in all, and the chain fails only if
/// every one is over: a chain that looks a type up per value is over in each.
@MainActor func checkAsync(_ name: String, _ make: (Signal<Int, NoError>) -> Signal<Int, NoError>) {
    let pipe = ValuePipe<Int>()
    let arrivals = Arrivals()
    let subscription = make(pipe.signal()).start(next: { _ in arrivals.arrived() })
    arrivals.send(0..<warmUp) { pipe.putNext($0) }
    var next = warmUp
    for attempt in 1...3 {
        let before = Counts.now()
        arrivals.send(next..<(next + measured)) { pipe.putNext($0) }
        let after = Counts.now()
        next += measured
        if attempt == 3 || !over(before, after) {
            report(attempt == 1 ? name : "\(name), batch \(attempt)", before, after)
            break
        }
        print("(`\(name)`: batch \(attempt) over the limit; measuring again)")
    }
    subscription.dispose()
}

/// The same for a hot source that sends by itself: `send(value)` for each value.
@MainActor func checkSource(_ name: String, _ send: (Int) -> Void) {
    for value in 0..<warmUp { send(value) }
    let before = Counts.now()
    for value in warmUp..<(warmUp + measured) { send(value) }
    report(name, before, Counts.now())
}

/// Subscribes `measured` times with `subscribe`, after a warm-up, and reports the look-ups made per
/// subscription (in the per-value columns); the subscriptions are disposed after counting.
@MainActor func checkSubscriptions(_ name: String, _ subscribe: () -> Disposable) {
    var subscriptions: [Disposable] = []
    subscriptions.reserveCapacity(warmUp + measured)
    for _ in 0..<warmUp { subscriptions.append(subscribe()) }
    let before = Counts.now()
    for _ in 0..<measured { subscriptions.append(subscribe()) }
    let after = Counts.now()
    for subscription in subscriptions { subscription.dispose() }
    report("\(name), per subscription", before, after)
}

/// Subscribes and disposes at once, `measured` times after a warm-up, and reports the look-ups made per
/// round: the join, the replay and the departure. A subscription's disposable is reached through the
/// `Disposable` existential, so its `dispose()` must not be a generic class's method (see
/// `FanOutMembership`).
@MainActor func checkSubscriptionRounds(_ name: String, _ subscribe: () -> Disposable) {
    for _ in 0..<warmUp { subscribe().dispose() }
    let before = Counts.now()
    for _ in 0..<measured { subscribe().dispose() }
    report("\(name), subscribed and disposed, per round", before, Counts.now())
}

/// Whether a batch looked types up at least once in a hundred values (see ``report(_:_:_:)``).
func over(_ before: Counts, _ after: Counts) -> Bool {
    return Double(after.generic - before.generic + after.tuple - before.tuple) / Double(measured) >= 0.01
}

@MainActor func report(_ name: String, _ before: Counts, _ after: Counts) {
    let perValue = { (count: Int) in Double(count) / Double(measured) }
    let generic = perValue(after.generic - before.generic)
    let tuple = perValue(after.tuple - before.tuple)
    let cast = perValue(after.cast - before.cast)
    print("| `\(name)` | \(generic) | \(tuple) | \(cast) |")
    // A look-up in a hundred values is a buffer growing now and then; one per value is the defect.
    if over(before, after) { failures.append(name) }
}

check("map") { $0 |> map { $0 &+ 1 } }
check("map |> filter") { $0 |> map { $0 &+ 1 } |> filter { $0 > 0 } }
check("take |> skip") { $0 |> take(Int.max) |> skip(1) }
check("take(until:)") { $0 |> take(until: { _ in SignalTakeAction(passthrough: true, complete: false) }) }
check("distinctUntilChanged") { $0 |> distinctUntilChanged }
check("distinctUntilChanged(isEqual:)") { $0 |> distinctUntilChanged(isEqual: { $0 == $1 }) }
check("scan") { $0 |> scan(0, { $0 &+ $1 }) }
check("distinct") { $0 |> distinct }
check("buffer(count:) |> map") { $0 |> buffer(count: 2) |> map { $0.count } }
check("reduceLeft(value:f:)") { $0 |> reduceLeft(value: 0, f: { $0 &+ $1 }) }
check("combineLatest") { combineLatest($0, .single(1)) |> map { $0 &+ $1 } }
check("combineLatest of three") { combineLatest($0, $0, $0) |> map { $0 &+ $1 &+ $2 } }
check("zip") { zip($0, $0) |> map { $0 &+ $1 } }
check("zip of three") { zip($0, $0, $0) |> map { $0 &+ $1 &+ $2 } }
check("mapToSignal") { $0 |> mapToSignal { .single($0) } }
check("switchToLatest") { $0 |> map { Signal<Int, NoError>.single($0) } |> switchToLatest }
check("mapToQueue") { $0 |> mapToQueue { .single($0) } }
check("mapToThrottled") { $0 |> mapToThrottled { .single($0) } }
check("share()") { $0 |> share() }
check("share(replay: .latest)") { $0 |> share(replay: .latest) }
check("startWith |> then") { $0 |> startWith(1) |> then(.complete()) }
check("merge") { merge([$0, .never()]) }
check("afterNext |> beforeNext") { $0 |> afterNext { _ in } |> beforeNext { _ in } }
check("dematerialize |> materialize") { materialize(signal: dematerialize(signal: $0)) }
check("catch") { $0 |> castError(Failure.self) |> `catch` { _ in .complete() } }
check("castError |> mapError") { $0 |> castError(Failure.self) |> mapError { _ in Failure.failed } |> `catch` { _ in .complete() } }
check("flatMap (optional)") { $0 |> map { Optional($0) } |> flatMap { $0 &+ 1 } |> map { $0 ?? 0 } }
check("withState") { withState($0, { 0 }, next: { _, _ in }) }
checkValueless("ignoreValues |> then") { ignoreValues($0) |> then(.complete()) }
check("last") { last(signal: $0) |> map { $0 ?? 0 } }
check("timeout(perValue:)") { $0 |> timeout(perValue: 1_000, scheduler: scheduler, alternate: .never()) }
check("deliverOn(queue)") { $0 |> deliverOn(scheduler) }
check("debounce") { $0 |> debounce(1_000, scheduler: scheduler) }
check("throttle") { $0 |> throttle(1_000, scheduler: scheduler) }
check("delay") { $0 |> delay(1_000, scheduler: scheduler) }
check("timeout with an alternate") { $0 |> timeout(1_000, scheduler: scheduler, alternate: .never()) }
check("suspendAwareDelay") { $0 |> suspendAwareDelay(0, queue: scheduler) }
check("Multicast.get") { Multicast<Int>().get(key: "feed", signal: $0) }
checkAsync("mapAsync") { $0 |> mapAsync { $0 &+ 1 } }
checkAsync("mapAsync(.concurrent(max: 4, ordered: true))") { $0 |> mapAsync(.concurrent(max: 4, ordered: true)) { $0 &+ 1 } }
checkAsync("mapAsync |> filterAsync") { $0 |> mapAsync { $0 &+ 1 } |> filterAsync { $0 > 0 } }

let promise = ValuePromise<Int>(0, ignoreRepeated: true)
let promised = (promise.get() |> map { $0 &+ 1 }).start(next: { _ in })
checkSource("ValuePromise.set |> map") { promise.set($0) }
promised.dispose()
let plainPromise = Promise<Int>(0)
let plainPromised = plainPromise.get().start(next: { _ in })
checkSource("Promise.set") { plainPromise.set(.single($0)) }
plainPromised.dispose()

// Subscribing to a promise: its join and replay run once per subscription, not per value, but they go
// through several generic layers of the fan-out engine, and unspecialised they looked up a type at
// nearly every step (22,881 instructions a subscription, 5,957 specialised; see CONTRIBUTING.md,
// "Which code is `@inlinable`"). The disposal is counted too, in rounds of subscribing and disposing:
// it comes through the `Disposable` existential, where a generic class's method runs unspecialised
// whatever is inlinable (a promise's disposal looked types up there until 2026-11-29). So is a
// subscription to a share that is already connected, which joins and leaves the same engine.
checkSubscriptions("ValuePromise.get().start") { promise.get().start(next: { _ in }) }
checkSubscriptions("Promise.get().start") { plainPromise.get().start(next: { _ in }) }
let replaying = ReplayingValuePipe<Int>()
replaying.putNext(0)
checkSubscriptions("ReplayingValuePipe.signal().start") { replaying.signal().start(next: { _ in }) }
checkSubscriptionRounds("ValuePromise.get().start") { promise.get().start(next: { _ in }) }
checkSubscriptionRounds("Promise.get().start") { plainPromise.get().start(next: { _ in }) }
checkSubscriptionRounds("ReplayingValuePipe.signal().start") { replaying.signal().start(next: { _ in }) }
let sharedFeed = ValuePipe<Int>()
let shared = sharedFeed.signal() |> share()
let sharedLatest = sharedFeed.signal() |> share(replay: .latest)
let connections = [shared.start(), sharedLatest.start()]
sharedFeed.putNext(0)
checkSubscriptionRounds("share() joined while connected") { shared.start(next: { _ in }) }
checkSubscriptionRounds("share(replay: .latest) joined while connected") { sharedLatest.start(next: { _ in }) }
for connection in connections { connection.dispose() }

// A hot source's `values` subscribes when it is made: what its pipe sends meanwhile is kept for the loop.
let feed = ValuePipe<Int>()
let kept = feed.values
checkSource("ValuePipe.values, kept for a loop") { feed.putNext($0) }
let keptNewest = feed.signal().startValues(bufferingPolicy: .bufferingNewest(16))
checkSource("startValues(bufferingPolicy: .bufferingNewest(16))") { feed.putNext($0) }
withExtendedLifetime((kept, keptNewest)) {}

print("")
if failures.isEmpty {
    print("No chain looks a type up per value.")
} else {
    print("Look-ups per value (or per subscription) in: \(failures.joined(separator: ", "))")
    if ci { exit(1) }
}
