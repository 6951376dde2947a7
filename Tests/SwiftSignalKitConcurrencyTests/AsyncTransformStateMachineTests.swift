import Testing

@testable import SwiftSignalKit
@testable import SwiftSignalKitConcurrency

/// The transitions of ``AsyncTransformStateMachine`` (`mapAsync` and its family), event by event,
/// without a signal or a transform: which value a transform takes, what each event hands back to do after
/// unlocking, and what the end lets go. No worker waits in these tests unless one says so, so commands
/// queue, and ``commands(_:)`` reads them.
@Suite struct AsyncTransformStateMachineTests {
    typealias Machine = AsyncTransformStateMachine<Int, String, TestError>

    struct TestError: Error, Equatable {}

    /// A machine whose worker and upstream subscription have started.
    static func started(_ policy: AsyncTransformPolicy, upstream: Disposable = EmptyDisposable) -> Machine {
        var machine = Machine(policy: policy)
        #expect(describe(machine.upstreamStarted(upstream)) == "none")
        return machine
    }

    static func describe(_ action: Machine.CommandAction) -> String {
        switch action {
        case .take(let command): return "take \(describe(command))"
        case .wait: return "wait"
        }
    }

    static func describe(_ command: Machine.Command) -> String {
        switch command {
        case .run(let work): return "run \(work.value)@\(work.index)"
        case .spawn(let runner, let work): return "spawn #\(runner) \(work.value)@\(work.index)"
        case .stop: return "stop"
        }
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: return "none"
        case .resumeWorker(_, let command): return "resume(\(describe(command)))"
        case .deliver: return "deliver"
        case .resumeWorkerAndDeliver(_, let command): return "resume(\(describe(command))), deliver"
        case .release(let value): return "release \(value)"
        case .releaseAndResumeWorker(let value, _, let command): return "release \(value), resume(\(describe(command)))"
        case .supersede(let task, let value):
            return "supersede(cancel: \(task == nil ? "none" : "task"), release: \(value.map(String.init) ?? "none"))"
        case .end(let teardown):
            return "end(tasks: \(teardown.tasks.count), values: \(teardown.values.compactMap { $0 }), "
                + "results: \(teardown.results.count), outgoing: \(teardown.outgoing.count), "
                + "upstream: \(teardown.upstream != nil), deliver: \(teardown.deliver))"
        }
    }

    static func describe(_ begin: Machine.BeginAction) -> String {
        switch begin {
        case .transform: return "transform"
        case .leave: return "leave"
        case .wait: return "wait"
        }
    }

    static func describe(_ registration: Machine.RegistrationAction) -> String {
        switch registration {
        case .none: return "none"
        case .cancel: return "cancel"
        case .letBegin(_, let superseded): return superseded == nil ? "let begin" : "let begin, cancelled"
        case .dispose: return "dispose"
        }
    }

    static func describe(_ step: Machine.RunnerStep) -> String {
        switch step {
        case .transform(let work, let after): return "transform \(work.value)@\(work.index) after \(describe(after))"
        case .checkOut(let after): return "check out after \(describe(after))"
        case .leave(let after): return "leave after \(describe(after))"
        }
    }

    /// Every command queued for the worker, taken; each runner's task registered as the worker does,
    /// unless `registering` is false (the test registers them itself).
    static func commands(_ machine: inout Machine, registering: Bool = true) -> [String] {
        var taken: [String] = []
        while case .take(let command) = machine.nextCommand(orWait: nil) {
            taken.append(describe(command))
            if registering, case .spawn(let runner, _) = command {
                let registration = describe(machine.runnerStarted(runner, task: idleTask))
                if registration != "none" { taken.append("registration: \(registration)") }
            }
            if case .stop = command { break }
        }
        return taken
    }

    /// Sends `values`, one by one; what each did.
    static func receive(_ values: [Int], into machine: inout Machine) -> [String] {
        return values.map { Self.describe(machine.valueArrived($0)) }
    }

    /// Every event the deliverer takes now, until the queue is empty.
    static func delivered(_ machine: inout Machine) -> [String] {
        var events: [String] = []
        while true {
            guard case .deliver(let event, let then) = machine.nextOutgoing(resuming: false) else { return events }
            switch event {
            case .Next(let value): events.append(value)
            case .Error: events.append("error")
            case .Completion: events.append("completed")
            }
            if case .none = then { continue }
            events.append(describe(then))
        }
    }

    static func finished(
        _ machine: inout Machine, runner: Int = Machine.workerKey, index: Int, _ result: Result<String?, TestError>
    ) -> String {
        return Self.describe(machine.transformFinished(runner: runner, index: index, result: result))
    }

    static let idleTask = Task<Void, Never> {}

    // MARK: - Serial

    @Test func serialRunsOneValueAtATimeOnTheWorkerInInputOrder() {
        var machine = Self.started(.serial)
        #expect(Self.receive([1, 2, 3], into: &machine) == ["none", "none", "none"])
        #expect(Self.commands(&machine) == ["run 1@0"])
        #expect(Self.finished(&machine, index: 0, .success("one")) == "check out after deliver")
        // The result waits for the subscriber: the next value waits for it, not only for the transform.
        #expect(Self.describe(machine.runnerCheckOut(Machine.workerKey)) == "leave after none")
        #expect(Self.commands(&machine) == [])
        #expect(Self.delivered(&machine) == ["one"])
        #expect(Self.commands(&machine) == ["run 2@1"])
    }

    @Test func aRunnerWhoseResultWasDeliveredTakesTheNextValueItself() {
        var machine = Self.started(.serial)
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, index: 0, .success("one")) == "check out after deliver")
        #expect(Self.delivered(&machine) == ["one"])
        // Still busy while it checks out, so the room its delivery made is its own.
        #expect(Self.commands(&machine) == [])
        #expect(Self.describe(machine.runnerCheckOut(Machine.workerKey)) == "transform 2@1 after none")
    }

    @Test func aValueFilteredOutFreesItsPlaceAtOnce() {
        var machine = Self.started(.serial)
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, index: 0, .success(nil)) == "transform 2@1 after none")
        #expect(Self.finished(&machine, index: 1, .success(nil)) == "check out after none")
        #expect(Self.describe(machine.runnerCheckOut(Machine.workerKey)) == "leave after none")
        #expect(Self.delivered(&machine) == [])
    }

    // MARK: - Buffering policies

    @Test func bufferingNewestDropsTheOldestWaitingValue() {
        var machine = Self.started(.serial(buffering: .bufferingNewest(1)))
        #expect(Self.receive([1, 2, 3, 4], into: &machine) == ["none", "none", "release 2", "release 3"])
        #expect(Self.commands(&machine) == ["run 1@0"])
    }

    @Test func bufferingOldestDropsTheNewValue() {
        var machine = Self.started(.serial(buffering: .bufferingOldest(1)))
        #expect(Self.receive([1, 2, 3, 4], into: &machine) == ["none", "none", "release 3", "release 4"])
    }

    @Test func bufferingNothingDropsEveryValueThatFindsTheTransformBusy() {
        var machine = Self.started(.serial(buffering: .bufferingNewest(0)))
        #expect(Self.receive([1, 2], into: &machine) == ["none", "release 2"])
        var bounded = Self.started(.serial(buffering: .bounded(1)))
        #expect(Self.receive([1, 2, 3], into: &bounded) == ["none", "none", "none"])
    }

    @Test func inputRoomCountsWaitingValuesAgainstTheBound() {
        var machine = Self.started(.serial(buffering: .bounded(1)))
        #expect(machine.hasInputRoom(bound: 1))
        _ = Self.receive([1], into: &machine)
        // One value transforms, none waits: one more may come.
        #expect(machine.hasInputRoom(bound: 1))
        #expect(!machine.hasInputRoom(bound: 0))
        _ = Self.receive([2], into: &machine)
        #expect(!machine.hasInputRoom(bound: 1))
        _ = machine.dispose()
        // Nothing will be taken any more: a producer must not wait for it.
        #expect(machine.hasInputRoom(bound: 1))
    }

    // MARK: - Latest

    @Test func aNewerValueCancelsTheRunningTransformOnceAndWaitsForIt() {
        var machine = Self.started(.latest)
        #expect(Self.receive([1], into: &machine) == ["none"])
        #expect(Self.commands(&machine, registering: false) == ["spawn #0 1@0"])
        #expect(Self.describe(machine.runnerStarted(0, task: Self.idleTask)) == "none")
        #expect(
            Self.receive([2, 3], into: &machine) == [
                "supersede(cancel: task, release: none)", "supersede(cancel: none, release: 2)",
            ])
        // The cancelled transform's result is dropped; the newest value starts after it.
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "leave after none")
        #expect(Self.commands(&machine) == ["spawn #1 3@1"])
        #expect(Self.delivered(&machine) == [])
    }

    @Test func aTransformSupersededBeforeItsTaskWasRegisteredIsCancelledWhenItIs() {
        var machine = Self.started(.latest)
        _ = Self.receive([1, 2], into: &machine)
        #expect(Self.describe(machine.runnerStarted(0, task: Self.idleTask)) == "cancel")
    }

    @Test func latestStartsTheNewestValueOnlyAfterTheLastResultWasDelivered() {
        var machine = Self.started(.latest)
        _ = Self.receive([1], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "leave after deliver")
        #expect(Self.receive([2, 3], into: &machine) == ["none", "release 2"])
        #expect(Self.commands(&machine) == [])
        #expect(Self.delivered(&machine) == ["one"])
        #expect(Self.commands(&machine) == ["spawn #1 3@1"])
    }

    // MARK: - Concurrent

    @Test func orderedResultsWaitForEarlierOnes() {
        var machine = Self.started(.concurrent(max: 2, ordered: true))
        _ = Self.receive([1, 2, 3], into: &machine)
        #expect(Self.commands(&machine) == ["spawn #0 1@0", "spawn #1 2@1"])
        #expect(Self.finished(&machine, runner: 1, index: 1, .success("two")) == "check out after none")
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "check out after deliver")
        #expect(Self.delivered(&machine) == ["one", "two"])
        #expect(Self.describe(machine.runnerCheckOut(0)) == "transform 3@2 after none")
        #expect(Self.describe(machine.runnerCheckOut(1)) == "leave after none")
    }

    @Test func unorderedResultsGoOnAsTheyFinish() {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, runner: 1, index: 1, .success("two")) == "check out after deliver")
        #expect(Self.delivered(&machine) == ["two"])
    }

    @Test func aPlaceIsHeldUntilTheResultIsHandedOn() {
        var machine = Self.started(.concurrent(max: 1, ordered: false))
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "check out after deliver")
        // The runner left before the delivery: the delivery's room starts a new runner.
        #expect(Self.describe(machine.runnerCheckOut(0)) == "leave after none")
        #expect(Self.delivered(&machine) == ["one"])
        #expect(Self.commands(&machine) == ["spawn #1 2@1"])
    }

    @Test func aRunnerTransformsOnlyOnceItsTaskIsRegistered() async {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        _ = Self.receive([1, 2], into: &machine)
        #expect(Self.commands(&machine, registering: false) == ["spawn #0 1@0", "spawn #1 2@1"])
        #expect(Self.describe(machine.runnerStarted(0, task: Self.idleTask)) == "none")
        #expect(Self.describe(machine.runnerBegins(0, orWait: nil)) == "transform")
        // Runner 1 begins before the worker registered it: it waits, and the registration lets it go.
        #expect(Self.describe(machine.runnerBegins(1, orWait: nil)) == "wait")
        let answer = await withUnsafeContinuation { (gate: Machine.RunnerGate) in
            #expect(Self.describe(machine.runnerBegins(1, orWait: gate)) == "wait")
            switch machine.runnerStarted(1, task: Self.idleTask) {
            case .letBegin(let waiting, nil):
                waiting.resume(returning: true)
            case let other:
                Issue.record("expected the waiting runner let go, got \(Self.describe(other))")
                gate.resume(returning: false)
            }
        }
        #expect(answer)
    }

    @Test func theEndLetsGoOfARunnerWaitingForItsRegistration() async {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        _ = Self.receive([1], into: &machine)
        _ = Self.commands(&machine, registering: false)
        let answer = await withUnsafeContinuation { (gate: Machine.RunnerGate) in
            #expect(Self.describe(machine.runnerBegins(0, orWait: gate)) == "wait")
            guard case .end(let teardown) = machine.dispose(), teardown.waitingRunners.count == 1 else {
                Issue.record("dispose() did not hand back the waiting runner")
                gate.resume(returning: true)
                return
            }
            teardown.waitingRunners[0].resume(returning: false)
        }
        #expect(!answer)
        // Its task, made after the end, is cancelled at once, and a runner that begins now leaves.
        #expect(Self.describe(machine.runnerStarted(0, task: Self.idleTask)) == "cancel")
        #expect(Self.describe(machine.runnerBegins(0, orWait: nil)) == "leave")
    }

    @Test func aRunnerSupersededBeforeItsRegistrationBeginsCancelled() async {
        var machine = Self.started(.latest)
        _ = Self.receive([1], into: &machine)
        _ = Self.commands(&machine, registering: false)
        let answer = await withUnsafeContinuation { (gate: Machine.RunnerGate) in
            #expect(Self.describe(machine.runnerBegins(0, orWait: gate)) == "wait")
            #expect(Self.receive([2], into: &machine) == ["none"])
            switch machine.runnerStarted(0, task: Self.idleTask) {
            case .letBegin(let waiting, .some):
                waiting.resume(returning: true)
            case let other:
                Issue.record("expected the runner let go with its task cancelled, got \(Self.describe(other))")
                gate.resume(returning: false)
            }
        }
        #expect(answer)
    }

    @Test func aRunnerFinishingWithoutItsRegistrationTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = AsyncTransformStateMachine<Int, Int, Never>(policy: .concurrent(max: 1, ordered: false))
            _ = machine.valueArrived(1)
            _ = machine.transformFinished(runner: 0, index: 0, result: .success(nil))
            _ = machine.runnerCheckOut(0)
        }
    }

    // MARK: - The end

    @Test func completionWaitsForTheLastTransformAndGoesAfterItsResult() {
        var machine = Self.started(.serial)
        _ = Self.receive([1], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.describe(machine.upstreamCompleted()) == "none")
        #expect(Self.finished(&machine, index: 0, .success("one")) == "check out after deliver")
        #expect(
            Self.describe(machine.runnerCheckOut(Machine.workerKey))
                == "leave after end(tasks: 0, values: [], results: 0, outgoing: 0, upstream: true, deliver: false)")
        #expect(Self.delivered(&machine) == ["one", "completed"])
        #expect(Self.commands(&machine) == ["stop"])
    }

    @Test func completionWithNothingRunningEndsAtOnce() {
        var machine = Self.started(.serial)
        #expect(
            Self.describe(machine.upstreamCompleted())
                == "end(tasks: 0, values: [], results: 0, outgoing: 0, upstream: true, deliver: true)")
        #expect(Self.delivered(&machine) == ["completed"])
    }

    @Test func latestCompletesAfterTheSupersedingValueRan() {
        var machine = Self.started(.latest)
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.describe(machine.upstreamCompleted()) == "none")
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "leave after none")
        #expect(Self.commands(&machine) == ["spawn #1 2@1"])
        #expect(
            Self.finished(&machine, runner: 1, index: 1, .success("two"))
                == "leave after end(tasks: 0, values: [], results: 0, outgoing: 0, upstream: true, deliver: true)")
        #expect(Self.delivered(&machine) == ["two", "completed"])
    }

    @Test func aFailureOvertakesQueuedResultsAndHandsBackEverythingHeld() {
        var machine = Self.started(.concurrent(max: 2, ordered: true))
        _ = Self.receive([1, 2, 3, 4], into: &machine)
        #expect(Self.commands(&machine) == ["spawn #0 1@0", "spawn #1 2@1"])
        #expect(Self.describe(machine.runnerStarted(0, task: Task {})) == "none")
        #expect(Self.describe(machine.runnerStarted(1, task: Task {})) == "none")
        _ = machine.workerStarted(Task {})
        #expect(Self.finished(&machine, runner: 1, index: 1, .success("two")) == "check out after none")
        #expect(
            Self.describe(machine.upstreamFailed(TestError()))
                == "end(tasks: 3, values: [3, 4], results: 1, outgoing: 0, upstream: true, deliver: true)")
        #expect(Self.delivered(&machine) == ["error"])
    }

    @Test func aFailedTransformDropsResultsNotHandedOnYet() {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        _ = Self.receive([1, 2], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("one")) == "check out after deliver")
        // The deliverer has not taken "one" yet: the failure goes first, and "one" is handed back.
        #expect(
            Self.finished(&machine, runner: 1, index: 1, .failure(TestError()))
                == "leave after end(tasks: 1, values: [], results: 0, outgoing: 1, upstream: true, deliver: false)")
        #expect(Self.delivered(&machine) == ["error"])
    }

    @Test func eventsAfterTheEndAreBenignAndHandBackWhatTheyBring() {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        _ = Self.receive([1], into: &machine)
        _ = Self.commands(&machine)
        _ = machine.upstreamFailed(TestError())
        #expect(Self.receive([5], into: &machine) == ["release 5"])
        #expect(Self.describe(machine.upstreamCompleted()) == "none")
        #expect(Self.describe(machine.upstreamFailed(TestError())) == "none")
        #expect(Self.finished(&machine, runner: 0, index: 0, .success("late")) == "leave after none")
        #expect(Self.describe(machine.runnerCheckOut(0)) == "leave after none")
        #expect(Self.describe(machine.runnerStarted(0, task: Self.idleTask)) == "cancel")
        #expect(Self.describe(machine.workerStarted(Self.idleTask)) == "cancel")
        #expect(Self.describe(machine.upstreamStarted(EmptyDisposable)) == "dispose")
        #expect(Self.commands(&machine) == ["stop"])
        #expect(Self.delivered(&machine) == ["error"])
    }

    @Test func disposalHandsBackEverythingAndDeliversNothing() {
        var machine = Self.started(.serial)
        _ = Self.receive([1, 2, 3], into: &machine)
        _ = Self.commands(&machine)
        #expect(Self.finished(&machine, index: 0, .success("one")) == "check out after deliver")
        #expect(
            Self.describe(machine.dispose())
                == "end(tasks: 0, values: [2, 3], results: 0, outgoing: 1, upstream: true, deliver: false)")
        #expect(Self.describe(machine.dispose()) == "none")
        #expect(Self.delivered(&machine) == [])
        #expect(Self.commands(&machine) == ["stop"])
    }

    @Test func disposalAfterTheEndHandsBackTheUndeliveredTerminal() {
        var machine = Self.started(.serial)
        _ = machine.upstreamCompleted()
        #expect(
            Self.describe(machine.dispose())
                == "end(tasks: 0, values: [], results: 0, outgoing: 1, upstream: false, deliver: false)")
    }

    @Test func cancellationsFollowTheOrderTheRunnersStarted() {
        var machine = Self.started(.concurrent(max: 8, ordered: false))
        _ = Self.receive(Array(0..<8), into: &machine)
        let tasks = (0..<8).map { _ in Task<Void, Never> {} }
        for (runner, task) in tasks.enumerated().reversed() {
            #expect(Self.describe(machine.runnerStarted(runner, task: task)) == "none")
        }
        guard case .end(let teardown) = machine.dispose() else {
            Issue.record("dispose() did not end the subscription")
            return
        }
        #expect(teardown.tasks == tasks)
    }

    // MARK: - The worker

    @Test func aWaitingWorkerIsResumedWithTheFirstCommandAndLaterOnesQueue() async {
        var machine = Self.started(.concurrent(max: 2, ordered: false))
        let command = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            #expect(Self.describe(machine.nextCommand(orWait: continuation)) == "wait")
            switch machine.valueArrived(1) {
            case .resumeWorker(let waiter, let command):
                waiter.resume(returning: command)
            case let other:
                Issue.record("expected the worker resumed, got \(Self.describe(other))")
                continuation.resume(returning: .stop)
            }
        }
        #expect(Self.describe(command) == "spawn #0 1@0")
        #expect(Self.receive([2], into: &machine) == ["none"])
        #expect(Self.commands(&machine) == ["spawn #1 2@1"])
    }

    @Test func theEndStopsAWaitingWorker() async {
        var machine = Self.started(.serial)
        let command = await withUnsafeContinuation { (continuation: Machine.Waiter) in
            #expect(Self.describe(machine.nextCommand(orWait: continuation)) == "wait")
            guard case .end(let teardown) = machine.dispose(), let waiter = teardown.waitingWorker else {
                Issue.record("dispose() did not hand back the waiting worker")
                continuation.resume(returning: .run(AsyncTransformWork(index: 0, value: 0)))
                return
            }
            waiter.resume(returning: .stop)
        }
        #expect(Self.describe(command) == "stop")
    }

    @Test func twoWorkersWaitingAtOnceTraps() async {
        await #expect(processExitsWith: .failure) {
            let box = TwoWorkersBox()
            _ = await withUnsafeContinuation { (first: TwoWorkersBox.Machine.Waiter) in
                _ = box.machine.nextCommand(orWait: first)
                Task {
                    _ = await withUnsafeContinuation { second in
                        _ = box.machine.nextCommand(orWait: second)
                    }
                }
            }
        }
    }
}

/// The machine of ``AsyncTransformStateMachineTests/twoWorkersWaitingAtOnceTraps()``, shared by the
/// exit test's two waits.
// @unchecked Sendable: only the exit test's child process uses it, from its body and then from the one
// task that body starts, never at the same time (the body is suspended when the task runs).
final class TwoWorkersBox: @unchecked Sendable {
    typealias Machine = AsyncTransformStateMachine<Int, Int, Never>
    var machine = Machine(policy: .serial)
}
