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
        let startClaimed1 = machine.startClaimed()
        #expect(startClaimed1)
        let subscribed2 = machine.subscribed(subscription)
        #expect(subscribed2.isKeep)
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
                guard case .resume(let waiter) = machine.received(-1) else {
                    Issue.record("a value must go to the waiting loop")
                    return
                }
                waiter.resume(returning: .success(-1))
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
        let startClaimed3 = machine.startClaimed()
        #expect(startClaimed3)
        let startClaimed4 = machine.startClaimed()
        #expect(!startClaimed4)
        #expect(Self.phase(machine) == "running(kept: 0, waits: false, first: true)")
        // Sent while the signal starts: kept for the first next(), whatever the bound.
        let received5 = machine.received(1)
        #expect(received5.isNone)
        #expect(Self.phase(machine) == "running(kept: 1, waits: false, first: false)")
        let subscribed6 = machine.subscribed(EmptyDisposable)
        #expect(subscribed6.isKeep)
        #expect(await Self.ready(&machine) == .success(1))
    }

    @Test func aWaitingLoopTakesTheValueAndAKeptValueGoesFirst() async throws {
        var machine = Self.started(.unbounded)
        let value = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            guard case .suspended = machine.loopWaits(continuation) else {
                Issue.record("nothing was kept, the loop must wait")
                return continuation.resume(returning: .success(nil))
            }
            guard case .resume(let waiter) = machine.received(7) else {
                Issue.record("a value must go to the waiting loop")
                return
            }
            waiter.resume(returning: .success(7))
        }
        #expect(value == .success(7))
        let received7 = machine.received(8)
        #expect(received7.isNone)
        let received8 = machine.received(9)
        #expect(received8.isNone)
        #expect(await Self.ready(&machine) == .success(8))
        var batch: [Int] = []
        let takeBuffered9 = machine.takeBuffered(into: &batch)
        #expect(takeBuffered9)
        #expect(batch == [9])
        let takeBuffered10 = machine.takeBuffered(into: &batch)
        #expect(!takeBuffered10)
    }

    @Test func bufferingPoliciesDropWhatTheyPromise() async {
        var newest = Self.started(.bufferingNewest(2))
        await Self.settle(&newest)
        let received11 = newest.received(1)
        #expect(received11.isNone)
        let received12 = newest.received(2)
        #expect(received12.isNone)
        let received13 = newest.received(3)
        #expect(received13.dropped == 1)
        #expect(await Self.ready(&newest) == .success(2))

        var none = Self.started(.bufferingNewest(0))
        await Self.settle(&none)
        let received14 = none.received(1)
        #expect(received14.dropped == 1)

        var oldest = Self.started(.bufferingOldest(1))
        await Self.settle(&oldest)
        let received15 = oldest.received(1)
        #expect(received15.isNone)
        let received16 = oldest.received(2)
        #expect(received16.dropped == 2)
        #expect(await Self.ready(&oldest) == .success(1))

        var batchOnlyUnbounded = Self.started(.bufferingOldest(4))
        await Self.settle(&batchOnlyUnbounded)
        let received17 = batchOnlyUnbounded.received(1)
        #expect(received17.isNone)
        var batch: [Int] = []
        let takeBuffered18 = batchOnlyUnbounded.takeBuffered(into: &batch)
        #expect(!takeBuffered18)
    }

    @Test func aLoopThatFallsBehindTakesWhatIsKeptThenEnds() async {
        let subscription = ActionDisposable {}
        var machine = Self.started(.endingWhenFull(1), subscription: subscription)
        await Self.settle(&machine)
        let received19 = machine.received(1)
        #expect(received19.isNone)
        guard case .endEarly(let dropped, let ended, let bound) = machine.received(2) else {
            Issue.record("the second value overflows")
            return
        }
        #expect(dropped == 2 && ended === subscription && bound == nil)
        #expect(Self.phase(machine) == "ending(kept: 1, fellBehind)")
        #expect(machine.endReason == nil)
        // Later events race the end: dropped, or nothing.
        let received20 = machine.received(3)
        #expect(received20.dropped == 3)
        let ended21 = machine.ended(.completed)
        #expect(ended21.isNone)
        #expect(await Self.ready(&machine) == .success(1))
        #expect(await Self.ready(&machine) == .success(nil))
        #expect(machine.endReason == .fellBehind)
    }

    @Test func underABoundOnlyAProducerThatWaitedMayOverfill() async {
        var machine = Self.started(.bounded(1))
        await Self.settle(&machine)
        let received22 = machine.received(1)
        #expect(received22.isNone)
        #expect(!machine.hasRoom(bound: 1))
        // Granted room at the same moment as another: its value is kept past the bound.
        machine.grantedRoom()
        #expect(machine.granted == 1)
        let received23 = machine.received(2)
        #expect(received23.isNone)
        #expect(machine.granted == 0)
        // A producer that did not wait: the iteration ends.
        guard case .endEarly(let dropped, _, let bound) = machine.received(3) else {
            Issue.record("a value past the bound from a producer that did not wait ends the loop")
            return
        }
        #expect(dropped == 3 && bound == 1)
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
        let ended24 = machine.ended(.completed)
        #expect(ended24.isNone)
    }

    @Test func anEndWithKeptValuesWaitsForTheLoopToTakeThem() async {
        var machine = Self.started(.unbounded)
        await Self.settle(&machine)
        let received25 = machine.received(1)
        #expect(received25.isNone)
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
        let received26 = machine.received(1)
        #expect(received26.isNone)
        guard case .stop(let waiter, let disposed, let kept, _) = machine.cancelled() else {
            Issue.record("a running iteration stops")
            return
        }
        #expect(waiter == nil && disposed === subscription && kept.count == 1)
        #expect(machine.endReason == .cancelled)
        let received27 = machine.received(2)
        #expect(received27.dropped == 2)
        let ended28 = machine.ended(.completed)
        #expect(ended28.isNone)
        guard case .none = machine.cancelled() else {
            Issue.record("a second cancellation does nothing")
            return
        }
        // A signal whose start returns after the cancellation: disposed at once.
        let subscribed29 = machine.subscribed(subscription)
        #expect(!subscribed29.isKeep)

        var ended = Self.started(.unbounded)
        _ = ended.ended(.completed)
        guard case .drop = ended.cancelled() else {
            Issue.record("an iteration whose source ended drops what it kept")
            return
        }
        #expect(ended.endReason == .cancelled)

        var told = Self.started(.unbounded)
        await Self.settle(&told)
        _ = told.ended(.completed)
        #expect(await Self.ready(&told) == .success(nil))
        _ = told.cancelled()
        #expect(told.endReason == .completed)
    }

    @Test func onlyTheFirstIteratorClaimsTheSubscription() {
        var machine = Self.started(.unbounded)
        let iteratorClaims30 = machine.iteratorClaims()
        #expect(iteratorClaims30)
        let iteratorClaims31 = machine.iteratorClaims()
        #expect(!iteratorClaims31)
    }

    @Test func aValueBeforeTheSubscriptionStartedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = SignalValuesStateMachine<Int, Never>(policy: .unbounded)
            _ = machine.received(1)
        }
    }
}

extension SignalValuesStateMachine.ReceiveAction {
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    var dropped: T? {
        if case .drop(let value) = self { return value }
        return nil
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
