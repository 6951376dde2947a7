import Testing

@testable import SwiftSignalKit
@testable import SwiftSignalKitConcurrency

/// The transitions of ``SignalValuesStateMachine``, event by event, without a signal or a task: what
/// each event does to the phase and what it hands back to do after unlocking.
@Suite struct SignalValuesStateMachineTests {
    typealias Machine = SignalValuesStateMachine<Int, TestError>

    struct TestError: Error, Equatable {}

    /// A machine whose subscription has started, and whose `start` returned `subscription`.
    static func started(_ policy: SignalBufferingPolicy, subscription: Disposable = EmptyDisposable) -> Machine {
        var machine = Machine(policy: policy)
        let claimed = machine.startClaimed()
        #expect(claimed == .take)
        let subscribed = machine.subscribed(subscription)
        #expect(subscribed.isKeep)
        return machine
    }

    static func phase(_ machine: Machine) -> String {
        switch machine.phase {
        case .idle: return "idle"
        case .running(let running):
            return "running(kept: \(running.kept.count), waits: \(running.waiter != nil), first: \(running.firstNextPending))"
        case .ending(let kept, let terminal): return "ending(kept: \(kept.count), \(terminal.reason))"
        case .finished(let reason): return "finished(\(reason))"
        case .modifying: return "modifying"
        }
    }

    /// Sends `values`, one by one, and says what each did: `kept`, `dropped N`, `to the loop`, or
    /// `ends, dropping N` (with `, bound N` under `.bounded`).
    static func receive(_ values: [Int], into machine: inout Machine) -> [String] {
        return values.map { value in
            switch machine.received(value) {
            case .none: return "kept"
            case .drop(let dropped): return "dropped \(dropped)"
            case .resume(let waiter):
                waiter.resume(returning: .success(value))
                return "to the loop"
            case .endEarly(let dropped, _, let bound):
                return "ends, dropping \(dropped)" + (bound.map { ", bound \($0)" } ?? "")
            }
        }
    }

    /// What the loop gets when it waits now; nil when nothing is ready, and then the wait is ended at
    /// once with a value of -1, so that the machine is left running, with no loop waiting and its
    /// first `next()` no longer pending.
    static func ready(_ machine: inout Machine) async -> Result<Int?, TestError>? {
        var ready: Result<Int?, TestError>?
        _ = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            switch machine.loopWaits(continuation) {
            case .resume(let result, _):
                ready = result
                continuation.resume(returning: result)
            case .suspended:
                #expect(Self.receive([-1], into: &machine) == ["to the loop"])
            }
        }
        return ready
    }

    /// Leaves a started machine with its first `next()` past (see ``ready(_:)``).
    static func settle(_ machine: inout Machine) async {
        #expect(await Self.ready(&machine) == nil)
    }

    @Test func theSubscriptionStartsOnceAndTheFirstValueWaitsForTheFirstNext() async {
        var machine = Machine(policy: .bounded(1))
        #expect(Self.phase(machine) == "idle")
        #expect(machine.hasRoom(bound: 1))
        let first = machine.startClaimed()
        let second = machine.startClaimed()
        #expect(first == .take && second == .none)
        #expect(Self.phase(machine) == "running(kept: 0, waits: false, first: true)")
        // Sent while the signal starts: kept for the first next(), whatever the bound.
        #expect(Self.receive([1], into: &machine) == ["kept"])
        #expect(Self.phase(machine) == "running(kept: 1, waits: false, first: false)")
        let subscribed = machine.subscribed(EmptyDisposable)
        #expect(subscribed.isKeep)
        #expect(await Self.ready(&machine) == .success(1))
    }

    @Test func aWaitingLoopTakesTheValueAndAKeptValueGoesFirst() async throws {
        var machine = Self.started(.unbounded)
        let value = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            guard case .suspended = machine.loopWaits(continuation) else {
                Issue.record("nothing was kept, the loop must wait")
                return continuation.resume(returning: .success(nil))
            }
            #expect(Self.receive([7], into: &machine) == ["to the loop"])
        }
        #expect(value == .success(7))
        #expect(Self.receive([8, 9], into: &machine) == ["kept", "kept"])
        #expect(await Self.ready(&machine) == .success(8))
        var batch: [Int] = []
        let tookOnce = machine.takeBuffered(into: &batch)
        let tookTwice = machine.takeBuffered(into: &batch)
        #expect(tookOnce == .take && tookTwice == .none)
        #expect(batch == [9])
    }

    @Test func bufferingPoliciesDropWhatTheyPromise() async {
        var newest = Self.started(.bufferingNewest(2))
        await Self.settle(&newest)
        #expect(Self.receive([1, 2, 3], into: &newest) == ["kept", "kept", "dropped 1"])
        #expect(await Self.ready(&newest) == .success(2))

        var none = Self.started(.bufferingNewest(0))
        await Self.settle(&none)
        #expect(Self.receive([1], into: &none) == ["dropped 1"])

        var oldest = Self.started(.bufferingOldest(1))
        await Self.settle(&oldest)
        #expect(Self.receive([1, 2], into: &oldest) == ["kept", "dropped 2"])
        #expect(await Self.ready(&oldest) == .success(1))

        // Only the unbounded policy hands over its buffer at once: another's limit holds value by value.
        var bounded = Self.started(.bufferingOldest(4))
        await Self.settle(&bounded)
        #expect(Self.receive([1], into: &bounded) == ["kept"])
        var batch: [Int] = []
        let took = bounded.takeBuffered(into: &batch)
        #expect(took == .none)
    }

    @Test func aLoopThatFallsBehindTakesWhatIsKeptThenEnds() async {
        let subscription = ActionDisposable {}
        var machine = Self.started(.endingWhenFull(1), subscription: subscription)
        await Self.settle(&machine)
        #expect(Self.receive([1], into: &machine) == ["kept"])
        guard case .endEarly(let dropped, let ended, let bound) = machine.received(2) else {
            Issue.record("the second value overflows")
            return
        }
        #expect(dropped == 2 && ended === subscription && bound == nil)
        #expect(Self.phase(machine) == "ending(kept: 1, fellBehind)")
        #expect(machine.endReason == nil)
        // Later events race the end: dropped, or nothing.
        #expect(Self.receive([3], into: &machine) == ["dropped 3"])
        let ended2 = machine.ended(.completed)
        #expect(ended2.isNone)
        #expect(await Self.ready(&machine) == .success(1))
        #expect(await Self.ready(&machine) == .success(nil))
        #expect(machine.endReason == .fellBehind)
    }

    @Test func underABoundOnlyAProducerThatWaitedMayOverfill() async {
        var machine = Self.started(.bounded(1))
        await Self.settle(&machine)
        #expect(Self.receive([1], into: &machine) == ["kept"])
        #expect(!machine.hasRoom(bound: 1))
        // Granted room at the same moment as another: its value is kept past the bound.
        machine.grantedRoom()
        #expect(machine.granted == 1)
        #expect(Self.receive([2], into: &machine) == ["kept"])
        #expect(machine.granted == 0)
        // A producer that did not wait: the iteration ends.
        #expect(Self.receive([3], into: &machine) == ["ends, dropping 3, bound 1"])
        #expect(machine.hasRoom(bound: 1))
        #expect(await Self.ready(&machine) == .success(1))
        #expect(await Self.ready(&machine) == .success(2))
        #expect(await Self.ready(&machine) == .success(nil))
        #expect(machine.endReason == .producerCouldNotWait)
    }

    @Test func grantedRoomIsCapped() {
        var machine = Self.started(.bounded(1))
        for _ in 0..<(Machine.creditLimit + 10) { machine.grantedRoom() }
        #expect(machine.granted == Machine.creditLimit)
    }

    @Test func anEndWhileTheLoopWaitsResumesIt() async {
        let subscription = ActionDisposable {}
        var machine = Self.started(.unbounded, subscription: subscription)
        await Self.settle(&machine)
        let result = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            _ = machine.loopWaits(continuation)
            guard case .resume(let waiter, let result, let released, let producers) = machine.ended(.failed(TestError())) else {
                Issue.record("the waiting loop is resumed with the end")
                return continuation.resume(returning: .success(nil))
            }
            #expect(released === subscription && producers.isEmpty)
            waiter.resume(returning: result)
        }
        #expect(result == .failure(TestError()))
        #expect(machine.endReason == .failed)
        let again = machine.ended(.completed)
        #expect(again.isNone)
    }

    @Test func anEndWithKeptValuesWaitsForTheLoopToTakeThem() async {
        var machine = Self.started(.unbounded)
        await Self.settle(&machine)
        #expect(Self.receive([1], into: &machine) == ["kept"])
        guard case .release = machine.ended(.failed(TestError())) else {
            Issue.record("with no loop waiting, the end is kept")
            return
        }
        #expect(Self.phase(machine) == "ending(kept: 1, failed)")
        #expect(machine.hasRoom(bound: 1))
        #expect(await Self.ready(&machine) == .success(1))
        #expect(await Self.ready(&machine) == .failure(TestError()))
        #expect(await Self.ready(&machine) == .success(nil))
        #expect(machine.endReason == .failed)
    }

    @Test func cancellingStopsEverythingOnceAndKeepsTheFirstReason() async {
        let subscription = ActionDisposable {}
        var machine = Self.started(.unbounded, subscription: subscription)
        #expect(Self.receive([1], into: &machine) == ["kept"])
        guard case .stop(let waiter, let disposed, let kept, _) = machine.cancelled() else {
            Issue.record("a running iteration stops")
            return
        }
        #expect(waiter == nil && disposed === subscription && kept.count == 1)
        #expect(machine.endReason == .cancelled)
        #expect(Self.receive([2], into: &machine) == ["dropped 2"])
        let ended = machine.ended(.completed)
        #expect(ended.isNone)
        guard case .none = machine.cancelled() else {
            Issue.record("a second cancellation does nothing")
            return
        }
        // A signal whose start returns after the cancellation: disposed at once.
        let late = machine.subscribed(subscription)
        #expect(!late.isKeep)

        var endedFirst = Self.started(.unbounded)
        _ = endedFirst.ended(.completed)
        #expect(endedFirst.endReason == nil, "set when the loop is told, not when the source ends")
        guard case .drop = endedFirst.cancelled() else {
            Issue.record("an iteration whose source ended drops what it kept")
            return
        }
        #expect(endedFirst.endReason == .cancelled)

        var told = Self.started(.unbounded)
        await Self.settle(&told)
        _ = told.ended(.completed)
        #expect(await Self.ready(&told) == .success(nil))
        _ = told.cancelled()
        #expect(told.endReason == .completed)
    }

    @Test func onlyTheFirstIteratorClaimsTheSubscription() {
        var machine = Self.started(.unbounded)
        let first = machine.iteratorClaims()
        let second = machine.iteratorClaims()
        #expect(first == .take && second == .none)
    }

    @Test func aValueBeforeTheSubscriptionStartedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = SignalValuesStateMachine<Int, Never>(policy: .unbounded)
            _ = machine.received(1)
        }
    }
}

extension SignalValuesStateMachine.SubscribedAction {
    var isKeep: Bool {
        if case .keep = self { return true }
        return false
    }
}

extension SignalValuesStateMachine.EndAction {
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}
