import Testing

@testable import SwiftSignalKit

/// The trampoline that keeps synchronous restarts off the stack, and the two state machines that use
/// it (`retry`/`restart` and `queue`/`throttled`), event by event.
@Suite struct StartTrampolineTests {
    @Test func aStartAskedForWhileStartingRunsAfterTheStartReturns() {
        var trampoline = StartTrampoline()
        #expect(!trampoline.isStarting)
        let r1 = trampoline.ask()
        #expect(r1)  // the caller starts
        #expect(trampoline.isStarting)
        let r2 = trampoline.ask()
        #expect(!r2)  // recorded for the starter
        let r3 = trampoline.ask()
        #expect(!r3)  // still one: starts are not counted
        let r4 = trampoline.startReturned()
        #expect(r4)  // the starter starts again
        #expect(trampoline.isStarting)
        let r5 = trampoline.startReturned()
        #expect(!r5)  // nothing asked meanwhile: it stops being the starter
        #expect(!trampoline.isStarting)
        let r6 = trampoline.ask()
        #expect(r6)
    }

    @Test func endingForgetsWhatWasAskedFor() {
        var trampoline = StartTrampoline()
        trampoline.begin()
        trampoline.askAgain()
        trampoline.end()
        #expect(!trampoline.isStarting)
        let r7 = trampoline.ask()
        #expect(r7)
    }

    @Test func aStartReturningWhileNoThreadStartsStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            var trampoline = StartTrampoline()
            _ = trampoline.startReturned()
        }
    }
}

extension RestartLoopStateMachine.Action {
    /// What the action disposes, in order.
    var disposed: [Disposable] {
        switch self {
        case .none, .start: return []
        case .dispose(let first, let second): return [first, second].compactMap { $0 }
        case .disposeThenStart(let unwanted): return [unwanted].compactMap { $0 }
        }
    }

    /// Whether the action starts a subscription.
    var starts: Bool {
        switch self {
        case .none, .dispose: return false
        case .start, .disposeThenStart: return true
        }
    }
}

@Suite struct RestartLoopStateMachineTests {
    @Test func aRestartAskedForWhileStartingIsRunByTheStarter() {
        var machine = RestartLoopStateMachine()
        let r8 = machine.restartRequested()
        #expect(r8.starts && r8.disposed.isEmpty)
        let r9 = machine.restartRequested()
        #expect(!r9.starts)  // the source ended inside its own start
        let first = ActionDisposable {}
        let made = machine.subscriptionMade(first)
        #expect(made.disposed.isEmpty)
        #expect(made.starts)
        let second = ActionDisposable {}
        let madeAgain = machine.subscriptionMade(second)
        #expect(madeAgain.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(first)])  // replaced
        #expect(!madeAgain.starts)
        let r10 = machine.restartRequested()
        #expect(r10.starts)  // idle again: the next caller starts
    }

    @Test func stoppingHandsBackTheWaitThenTheSubscription() {
        var machine = RestartLoopStateMachine()
        _ = machine.restartRequested()
        let subscription = ActionDisposable {}
        _ = machine.subscriptionMade(subscription)
        let wait = ActionDisposable {}
        let r11 = machine.waitScheduled(wait, forRetry: 1)
        #expect(r11.disposed.isEmpty && !r11.starts)
        let stopped = machine.stopped()
        #expect(stopped.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(wait), ObjectIdentifier(subscription)])
        #expect(!stopped.starts)
        let r12 = machine.stopped()
        #expect(r12.disposed.isEmpty)  // once
    }

    @Test func afterAStopEverythingIsRefusedOrHandedBack() {
        var machine = RestartLoopStateMachine()
        _ = machine.stopped()
        let r13 = machine.restartRequested()
        #expect(!r13.starts)
        let late = ActionDisposable {}
        let made = machine.subscriptionMade(late)
        #expect(made.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(late)])
        #expect(!made.starts)
        let wait = ActionDisposable {}
        let r14 = machine.waitScheduled(wait, forRetry: 1)
        #expect(r14.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(wait)])
        // A failure racing the stop: no retry, and no give-up either (nothing is sent any more).
        let r15 = machine.failed(growingWaitBy: 1, upTo: 5, maxRetries: .max)
        #expect(r15 == .none)
        let r16 = machine.failed(growingWaitBy: 0, upTo: 0, maxRetries: 0)
        #expect(r16 == .none)
    }

    @Test func theRetryWaitGrowsUpToItsMaximum() {
        var machine = RestartLoopStateMachine()
        let r17 = machine.failed(growingWaitBy: 2, upTo: 5, maxRetries: .max)
        #expect(r17 == .retry(number: 1, after: 2))
        let r18 = machine.failed(growingWaitBy: 2, upTo: 5, maxRetries: .max)
        #expect(r18 == .retry(number: 2, after: 4))
        let r19 = machine.failed(growingWaitBy: 2, upTo: 5, maxRetries: .max)
        #expect(r19 == .retry(number: 3, after: 5))
        // A caller with its own waits (the backoff) passes 0 and reads the number.
        let r20 = machine.failed(growingWaitBy: 0, upTo: 0, maxRetries: .max)
        #expect(r20 == .retry(number: 4, after: 0))
    }

    /// A wait whose disposable comes back after the next retry's wait was stored has fired (that is how
    /// the next retry came about): it is handed back, and the later wait stays, to be disposed by a stop.
    @Test func aWaitStoredAfterTheNextRetrysWaitIsHandedBack() {
        var machine = RestartLoopStateMachine()
        let second = ActionDisposable {}
        let late = ActionDisposable {}
        #expect(machine.waitScheduled(second, forRetry: 2).disposed.isEmpty)
        let r21 = machine.waitScheduled(late, forRetry: 1)
        #expect(r21.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(late)])
        let third = ActionDisposable {}
        let r22 = machine.waitScheduled(third, forRetry: 3)
        #expect(r22.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(second)], "a later wait replaces an earlier one")
        let stopped = machine.stopped()
        #expect(stopped.disposed.map(ObjectIdentifier.init) == [ObjectIdentifier(third)])
    }

    @Test func theFailureAfterTheLastRetryGivesUp() {
        var machine = RestartLoopStateMachine()
        #expect(machine.failed(growingWaitBy: 1, upTo: 1, maxRetries: 2) == .retry(number: 1, after: 1))
        #expect(machine.failed(growingWaitBy: 1, upTo: 1, maxRetries: 2) == .retry(number: 2, after: 1))
        #expect(machine.failed(growingWaitBy: 1, upTo: 1, maxRetries: 2) == .giveUp)
        // No retries allowed: the first failure gives up.
        var never = RestartLoopStateMachine()
        #expect(never.failed(growingWaitBy: 1, upTo: 1, maxRetries: 0) == .giveUp)
        var negative = RestartLoopStateMachine()
        #expect(negative.failed(growingWaitBy: 1, upTo: 1, maxRetries: -3) == .giveUp)
    }
}

@Suite struct QueueOperatorStateMachineTests {
    typealias Machine = QueueOperatorStateMachine<Int, NoError>

    /// The value of a `.single` signal, to tell signals apart.
    static func value(_ signal: Signal<Int, NoError>?) -> Int? {
        guard let signal else { return nil }
        let box = Atomic<Int?>(value: nil)
        signal.start(next: { value in box.swap(value) }).dispose()
        return box.with { $0 }
    }

    static func started(_ action: Machine.Action) -> Int? {
        guard case .start(let signal) = action else { return nil }
        return Self.value(signal)
    }

    /// The values of the signals an action releases.
    static func released(_ action: Machine.Action) -> [Int] {
        guard case .release(let dropped) = action else { return [] }
        return dropped.compactMap(Self.value)
    }

    @Test func innerSignalsRunOneAtATimeInOrder() {
        var machine = Machine(mode: .queue)
        let r21 = machine.outerSent(.single(1))
        #expect(Self.started(r21) == 1)  // starts now
        let r22 = machine.outerSent(.single(2))
        #expect(r22 == .none)  // waits
        let r23 = machine.outerSent(.single(3))
        #expect(r23 == .none)
        let r24 = machine.startReturned()
        #expect(r24 == .none)  // 1 runs
        let r25 = machine.innerCompleted()
        #expect(Self.started(r25) == 2)
        let r26 = machine.startReturned()
        #expect(r26 == .none)
        let r27 = machine.innerCompleted()
        #expect(Self.started(r27) == 3)
        let r28 = machine.startReturned()
        #expect(r28 == .none)
        let r29 = machine.innerCompleted()
        #expect(r29 == .none)  // idle
        let r30 = machine.outerSent(.single(4))
        #expect(Self.started(r30) == 4)  // starts at once again
    }

    @Test func throttleKeepsOnlyTheLatestWaitingSignal() {
        var machine = Machine(mode: .throttle)
        _ = machine.outerSent(.single(1))
        _ = machine.outerSent(.single(2))
        let dropped = machine.outerSent(.single(3))
        #expect(Self.released(dropped) == [2])
        _ = machine.startReturned()
        let r31 = machine.innerCompleted()
        #expect(Self.started(r31) == 3)
    }

    @Test func aSignalCompletingInsideItsStartIsFollowedByTheStarter() {
        var machine = Machine(mode: .queue)
        _ = machine.outerSent(.single(1))
        _ = machine.outerSent(.single(2))
        // 1 completes inside its own start: the completion does not start 2 on this stack.
        let r32 = machine.innerCompleted()
        #expect(r32 == .none)
        let r33 = machine.startReturned()
        #expect(Self.started(r33) == 2)  // the starter does, when start returns
        let r34 = machine.innerCompleted()
        #expect(r34 == .none)  // 2 completes inside its start too
        let r35 = machine.startReturned()
        #expect(r35 == .none)  // nothing waits: idle
        let r36 = machine.outerSent(.single(3))
        #expect(Self.started(r36) == 3)
    }

    @Test func theResultCompletesAfterTheLastInnerSignal() {
        var machine = Machine(mode: .queue)
        _ = machine.outerSent(.single(1))
        _ = machine.startReturned()
        let r37 = machine.outerCompletedEvent()
        #expect(r37 == .none)  // 1 still runs
        let r38 = machine.innerCompleted()
        #expect(r38 == .complete)
        let r39 = machine.outerSent(.single(2))
        #expect(r39 == .none)  // ended
        var idle = Machine(mode: .queue)
        let r40 = idle.outerCompletedEvent()
        #expect(r40 == .complete)  // nothing runs: completes at once
        let r41 = idle.outerCompletedEvent()
        #expect(r41 == .none)
    }

    @Test func terminatingHandsBackTheWaitingSignalsAndLaterEventsDoNothing() {
        var machine = Machine(mode: .queue)
        _ = machine.outerSent(.single(1))
        _ = machine.outerSent(.single(2))
        _ = machine.outerSent(.single(3))
        let r42 = machine.terminate()
        #expect(Self.released(r42) == [2, 3])
        let r43 = machine.startReturned()
        #expect(r43 == .none)
        let r44 = machine.innerCompleted()
        #expect(r44 == .none)
        let r45 = machine.outerCompletedEvent()
        #expect(r45 == .none)
        let r46 = machine.outerSent(.single(4))
        #expect(r46 == .none)
        let r47 = machine.terminate()
        #expect(r47 == .none)
    }

    @Test func anInnerSignalCompletingWhileNoneRunsStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            var machine = QueueOperatorStateMachine<Int, NoError>(mode: .queue)
            _ = machine.innerCompleted()
        }
    }
}

extension QueueOperatorStateMachine.Action: Equatable {
    /// Equal when both start (whatever signal), release (whatever signals), complete, or do nothing: the
    /// tests compare the signals by their values.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.start, .start), (.release, .release), (.complete, .complete), (.none, .none): return true
        default: return false
        }
    }
}
