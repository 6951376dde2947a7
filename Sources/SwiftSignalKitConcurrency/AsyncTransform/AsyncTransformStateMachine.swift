import SwiftSignalKit

/// A value taken for transforming, with its position in the input.
@usableFromInline struct AsyncTransformWork<T: Sendable>: Sendable {
    @usableFromInline let index: Int
    @usableFromInline let value: T

    @inlinable init(index: Int, value: T) {
        self.index = index
        self.value = value
    }
}

/// What the worker task of a subscription does next.
@usableFromInline enum AsyncTransformCommand<T: Sendable>: Sendable {
    /// Transform this value itself (the serial policy: the worker is the only runner).
    case run(AsyncTransformWork<T>)
    /// Start a runner task for this value (the latest and concurrent policies).
    case spawn(runner: Int, AsyncTransformWork<T>)
    /// The subscription ended.
    case stop
}

/// The state of one subscription to an async operator; every event returns what to do after
/// unlocking (``Effects``). Values, results and continuations leave the state in the effects, so that
/// nothing is released, resumed, cancelled or disposed under the lock.
@usableFromInline struct AsyncTransformStateMachine<T: Sendable, R: Sendable, E: Error>: RoomWaitingState {
    @usableFromInline typealias Work = AsyncTransformWork<T>
    @usableFromInline typealias Command = AsyncTransformCommand<T>
    @usableFromInline typealias Outgoing = SignalEvent<R, E>
    @usableFromInline typealias Waiter = UnsafeContinuation<Command, Never>

    /// The key of the worker when it runs transforms itself (the serial policy).
    @inlinable static var workerKey: Int { -1 }

    @usableFromInline enum Phase: Sendable {
        /// Values are taken and transformed.
        case running
        /// A terminal event is queued for the subscriber: no more work starts.
        case ending
        /// Disposed: nothing is delivered.
        case disposed
    }

    /// What the storage does once it has unlocked. Every field is optional work.
    @usableFromInline struct Effects: Sendable {
        /// Resume the waiting worker with this command.
        @usableFromInline var resume: (Waiter, Command)?
        /// Deliver the queued events: this thread became the deliverer.
        @usableFromInline var drain = false
        /// Cancel these tasks.
        @usableFromInline var cancel: [Task<Void, Never>] = []
        /// Dispose the upstream subscription.
        @usableFromInline var upstream: Disposable?
        /// Values dropped by the buffering policy or the end of the subscription, released here.
        @usableFromInline var dropped: [T?] = []
        /// Results dropped by the end of the subscription, released here.
        @usableFromInline var droppedResults: [R?] = []
        @usableFromInline var droppedOutgoing = ValueRing<SerialDelivery<Outgoing>.Entry>()

        @inlinable init() {}
    }

    @usableFromInline let mode: AsyncTransformPolicy.Mode
    @usableFromInline let buffering: SignalBufferingPolicy
    /// Serial and concurrent policies: how many values may be in progress at once (taken for a
    /// transform and not yet handed to the subscriber). Values beyond it wait in `waiting`.
    @usableFromInline let width: Int
    @usableFromInline var phase = Phase.running
    /// Values that no transform has taken yet, limited by `buffering`.
    @usableFromInline var waiting = ValueRing<T>()
    /// Commands the worker has not taken yet.
    @usableFromInline var commands = ValueRing<Command>()
    @usableFromInline var waiter: Waiter?
    /// Transforms running or about to (a queued command).
    @usableFromInline var busy = 0
    /// Values taken for a transform whose result has not been handed to the subscriber (or dropped) yet:
    /// running, finished and waiting for an earlier result, or queued for the subscriber. At most `width`, so
    /// a slow consumer or a slow first value holds back the upstream's values in `waiting`, where the
    /// buffering policy applies, instead of piling up results.
    @usableFromInline var inFlight = 0
    @usableFromInline var runners: [Int: Task<Void, Never>] = [:]
    /// Runners that finished before the worker registered their task.
    @usableFromInline var exitedUnregistered: Set<Int> = []
    @usableFromInline var nextRunner = 0
    /// The latest policy: the runner that runs or is about to; whether a newer value has cancelled it;
    /// and the newest value, which starts when that runner has finished.
    @usableFromInline var latestCurrent: Int?
    @usableFromInline var latestSuperseded = false
    @usableFromInline var latestPending: T?
    @usableFromInline var nextIndex = 0
    /// Ordered policies: the index of the next result to send, and results that wait for earlier ones
    /// (`nil` inside: the value was filtered out).
    @usableFromInline var nextIndexToSend = 0
    @usableFromInline var outOfOrder: [Int: R?] = [:]
    /// Results and the terminal event on their way to the subscriber.
    @usableFromInline var delivery = SerialDelivery<Outgoing>(keepingStorage: true)
    /// A post made this thread the deliverer; the effects tell it to deliver after unlocking.
    @usableFromInline var mustDeliver = false
    @usableFromInline var upstreamFinished = false
    @usableFromInline var upstream: Disposable?
    @usableFromInline var worker: Task<Void, Never>?
    /// Producers upstream waiting for room in `waiting`, when the storage paces its input (see
    /// `AsyncTransformStorage.inputBound`).
    @usableFromInline var producers = RoomWaiters()

    @inlinable init(policy: AsyncTransformPolicy) {
        self.mode = policy.mode
        self.buffering = policy.buffering
        switch policy.mode {
        case .serial, .latest: self.width = 1
        case .concurrent(let max, _): self.width = max
        }
    }

    /// Whether a producer upstream may send one more value when at most `bound` values may wait: fewer
    /// wait, or none waits and a transform could take a value now, or no value will be taken any more
    /// (it is then dropped, and a producer must not wait for it).
    @inlinable func hasInputRoom(bound: Int) -> Bool {
        guard case .running = self.phase, !self.upstreamFinished else { return true }
        if self.waiting.count < bound { return true }
        return self.waiting.isEmpty && self.busy < self.width && self.inFlight < self.width
    }

    @inlinable var isOrdered: Bool {
        switch self.mode {
        case .serial: return true
        case .latest: return false
        case .concurrent(_, let ordered): return ordered
        }
    }

    // MARK: - Setup

    /// The worker task was created; returns it to be cancelled at once when the subscription has ended.
    @inlinable mutating func workerStarted(_ task: Task<Void, Never>) -> Task<Void, Never>? {
        if case .disposed = self.phase { return task }
        self.worker = task
        return nil
    }

    /// The upstream subscription started; returns it to be disposed at once when it is not needed.
    @inlinable mutating func upstreamStarted(_ disposable: Disposable) -> Disposable? {
        if case .running = self.phase {
            self.upstream = disposable
            return nil
        }
        return disposable
    }

    // MARK: - Upstream events

    @inlinable mutating func valueArrived(_ value: T) -> Effects {
        var effects = Effects()
        guard case .running = self.phase else {
            effects.dropped.append(value)
            return effects
        }
        switch self.mode {
        case .serial, .concurrent:
            // Straight to a transform only when nothing waits before it (input order) and there is room;
            // otherwise behind the waiting values, which a runner checking out or `fillRunners` takes.
            if self.waiting.isEmpty, self.inFlight < self.width, self.busy < self.width {
                self.start(self.take(value), into: &effects)
            } else {
                self.buffer(value, into: &effects)
                self.fillRunners(into: &effects)
            }
        case .latest:
            guard let current = self.latestCurrent else {
                if self.inFlight < self.width {
                    self.start(self.take(value), into: &effects)
                } else {
                    // The last result still waits for the subscriber: the newest value starts after it.
                    if let older = self.latestPending.take() {
                        effects.dropped.append(older)
                    }
                    self.latestPending = value
                }
                return effects
            }
            // One transform at a time: the running one is cancelled, and the newest value waits for it
            // to finish (a transform slow to notice its cancellation does not pile up others).
            if !self.latestSuperseded {
                self.latestSuperseded = true
                if let task = self.runners[current] {
                    effects.cancel.append(task)
                }
            }
            if let older = self.latestPending.take() {
                effects.dropped.append(older)
            }
            self.latestPending = value
        }
        return effects
    }

    @inlinable mutating func upstreamFailed(_ error: E) -> Effects {
        var effects = Effects()
        guard case .running = self.phase else { return effects }
        self.end(with: .Error(error), into: &effects)
        return effects
    }

    @inlinable mutating func upstreamCompleted() -> Effects {
        var effects = Effects()
        guard case .running = self.phase else { return effects }
        self.upstreamFinished = true
        self.completeIfIdle(into: &effects)
        return effects
    }

    // MARK: - Worker and runners

    /// The worker asks for its next command: returns it, or nil after storing `waiter` to be resumed.
    @inlinable mutating func nextCommand(orWait waiter: Waiter?) -> Command? {
        if case .running = self.phase {
            if !self.commands.isEmpty { return self.commands.removeFirst() }
            if let waiter {
                if self.waiter != nil { preconditionFailure("AsyncTransform: two workers wait") }
                self.waiter = waiter
            }
            return nil
        }
        return .stop
    }

    /// The worker started the task of `runner`; returns it to be cancelled when the subscription ended
    /// or a newer value has superseded it.
    @inlinable mutating func runnerStarted(_ runner: Int, task: Task<Void, Never>) -> Task<Void, Never>? {
        if self.exitedUnregistered.remove(runner) != nil { return nil }
        guard case .running = self.phase else { return task }
        self.runners[runner] = task
        if case .latest = self.mode, self.latestCurrent == runner, self.latestSuperseded { return task }
        return nil
    }

    /// A transform finished. Returns the effects, and the next value for the same runner; with nil,
    /// the runner performs the effects and then checks out (``runnerCheckOut(_:)``), still counted as
    /// busy, so that the room its own delivery makes goes to it rather than to a new task.
    @inlinable mutating func transformFinished(runner: Int, index: Int, result: Result<R?, E>) -> (Effects, Work?) {
        var effects = Effects()
        // After the end, the state keeps no runner: there is nothing to unregister.
        guard case .running = self.phase else { return (effects, nil) }
        if case .latest = self.mode {
            self.latestFinished(runner: runner, result: result, into: &effects)
            return (effects, nil)
        }
        switch result {
        case .failure(let error):
            self.runnerExited(runner)
            self.end(with: .Error(error), into: &effects)
            return (effects, nil)
        case .success(let output):
            if self.isOrdered {
                self.sendInOrder(index: index, output)
            } else if let output {
                self.post(.Next(output))
            } else {
                self.inFlight -= 1
            }
        }
        var next: Work?
        if self.inFlight < self.width, !self.waiting.isEmpty {
            next = self.take(self.waiting.removeFirst())
        }
        self.startDrainingIfNeeded(into: &effects)
        return (effects, next)
    }

    /// A runner with nothing to do after its effects: takes a waiting value if there is room now, or
    /// leaves (nil).
    @inlinable mutating func runnerCheckOut(_ runner: Int) -> (Effects, Work?) {
        var effects = Effects()
        guard case .running = self.phase else { return (effects, nil) }
        if case .latest = self.mode { return (effects, nil) }
        if self.inFlight < self.width, !self.waiting.isEmpty {
            return (effects, self.take(self.waiting.removeFirst()))
        }
        self.busy -= 1
        self.runnerExited(runner)
        self.fillRunners(into: &effects)
        self.completeIfIdle(into: &effects)
        self.startDrainingIfNeeded(into: &effects)
        return (effects, nil)
    }

    // MARK: - Delivery

    /// The deliverer takes the next event to send (see ``SerialDelivery/step(resuming:)``), with what to
    /// do after unlocking.
    @inlinable mutating func nextOutgoing(resuming: Bool) -> (SerialDeliveryStep<Outgoing>, Effects) {
        var effects = Effects()
        let step = self.delivery.step(resuming: resuming)
        if case .deliver(.Next) = step, case .running = self.phase {
            // Handed to the subscriber: room for another value.
            self.inFlight -= 1
            self.fillRunners(into: &effects)
        }
        return (step, effects)
    }

    // MARK: - Disposal

    @inlinable mutating func dispose() -> Effects {
        var effects = Effects()
        if case .disposed = self.phase { return effects }
        self.phase = .disposed
        self.stopEverything(into: &effects)
        effects.droppedOutgoing = self.delivery.close()
        return effects
    }

    // MARK: - Helpers

    @inlinable mutating func newRunner() -> Int {
        let runner = self.nextRunner
        self.nextRunner += 1
        return runner
    }

    @inlinable mutating func take(_ value: T) -> Work {
        let work = Work(index: self.nextIndex, value: value)
        self.nextIndex += 1
        self.inFlight += 1
        return work
    }

    /// Starts a transform of `work`: on the worker (serial) or on a new runner task.
    @inlinable mutating func start(_ work: Work, into effects: inout Effects) {
        self.busy += 1
        switch self.mode {
        case .serial:
            self.issue(.run(work), into: &effects)
        case .concurrent:
            self.issue(.spawn(runner: self.newRunner(), work), into: &effects)
        case .latest:
            let runner = self.newRunner()
            self.latestCurrent = runner
            self.latestSuperseded = false
            self.issue(.spawn(runner: runner, work), into: &effects)
        }
    }

    /// Serial and concurrent policies: starts transforms for waiting values while there is room.
    @inlinable mutating func fillRunners(into effects: inout Effects) {
        guard case .running = self.phase else { return }
        if case .latest = self.mode {
            if self.latestCurrent == nil, self.inFlight < self.width, let pending = self.latestPending.take() {
                self.start(self.take(pending), into: &effects)
            }
            return
        }
        while self.busy < self.width, self.inFlight < self.width, !self.waiting.isEmpty {
            self.start(self.take(self.waiting.removeFirst()), into: &effects)
        }
    }

    @inlinable mutating func latestFinished(runner: Int, result: Result<R?, E>, into effects: inout Effects) {
        self.runnerExited(runner)
        self.busy -= 1
        self.latestCurrent = nil
        if self.latestSuperseded {
            self.inFlight -= 1  // a superseded result does not count
        } else {
            switch result {
            case .failure(let error):
                self.end(with: .Error(error), into: &effects)
                return
            case .success(let output?):
                self.post(.Next(output))
            case .success(nil):
                self.inFlight -= 1
            }
        }
        self.fillRunners(into: &effects)
        self.completeIfIdle(into: &effects)
        self.startDrainingIfNeeded(into: &effects)
    }

    @inlinable mutating func issue(_ command: Command, into effects: inout Effects) {
        if let waiter = self.waiter {
            self.waiter = nil
            effects.resume = (waiter, command)
        } else {
            self.commands.append(command)
        }
    }

    @inlinable mutating func buffer(_ value: T, into effects: inout Effects) {
        switch self.buffering {
        case .unbounded, .bounded, .endingWhenFull:
            // `.bounded` makes the producers upstream wait (see `AsyncTransformStorage.inputBound`);
            // `.endingWhenFull` is refused when the policy is made (see `AsyncTransformPolicy`).
            self.waiting.append(value)
        case .bufferingNewest(let limit):
            if limit == 0 {
                effects.dropped.append(value)
                return
            }
            if self.waiting.count >= limit {
                effects.dropped.append(self.waiting.removeFirst())
            }
            self.waiting.append(value)
        case .bufferingOldest(let limit):
            if self.waiting.count >= limit {
                effects.dropped.append(value)
            } else {
                self.waiting.append(value)
            }
        }
    }

    @inlinable mutating func sendInOrder(index: Int, _ output: R?) {
        guard index == self.nextIndexToSend else {
            self.outOfOrder[index] = output
            return
        }
        self.release(output)
        self.nextIndexToSend += 1
        while let ready = self.outOfOrder.removeValue(forKey: self.nextIndexToSend) {
            self.release(ready)
            self.nextIndexToSend += 1
        }
    }

    /// A result whose turn has come: queued for the subscriber, or out of the count when it was filtered out.
    @inlinable mutating func release(_ output: R?) {
        if let output {
            self.post(.Next(output))
        } else {
            self.inFlight -= 1
        }
    }

    @inlinable mutating func runnerExited(_ runner: Int) {
        if runner == Self.workerKey { return }
        if self.runners.removeValue(forKey: runner) == nil {
            self.exitedUnregistered.insert(runner)
        }
    }

    @inlinable mutating func completeIfIdle(into effects: inout Effects) {
        guard case .running = self.phase, self.upstreamFinished, self.busy == 0, self.waiting.isEmpty,
            self.commands.isEmpty, self.latestPending == nil
        else { return }
        self.end(with: .Completion, into: &effects)
    }

    /// Queues the terminal event and stops all work. A failure goes first: results not handed to the
    /// subscriber yet are dropped. Completion goes after them.
    @inlinable mutating func end(with terminal: Outgoing, into effects: inout Effects) {
        self.phase = .ending
        self.stopEverything(into: &effects)
        if case .Error = terminal {
            effects.droppedOutgoing = self.delivery.removeQueued()
        }
        self.post(terminal)
        self.startDrainingIfNeeded(into: &effects)
    }

    @inlinable mutating func stopEverything(into effects: inout Effects) {
        // In the order the runners started, not the dictionary's (seeded per process): on a virtual
        // timeline, the order of the cancellations is the order in which their tasks run next.
        effects.cancel.append(contentsOf: self.runners.sorted { $0.key < $1.key }.map(\.value))
        self.runners.removeAll()
        if let worker = self.worker.take() {
            effects.cancel.append(worker)
        }
        if let waiter = self.waiter.take() {
            effects.resume = (waiter, .stop)
        }
        effects.upstream = self.upstream.take()
        effects.dropped.append(contentsOf: self.waiting.removeAll())
        if let pending = self.latestPending.take() {
            effects.dropped.append(pending)
        }
        for case let command? in self.commands.removeAll() {
            if case .run(let work) = command { effects.dropped.append(work.value) }
            if case .spawn(_, let work) = command { effects.dropped.append(work.value) }
        }
        effects.droppedResults.append(contentsOf: self.outOfOrder.values)
        self.outOfOrder.removeAll()
        self.busy = 0
        self.latestCurrent = nil
    }

    @inlinable mutating func post(_ event: Outgoing) {
        if self.delivery.post(event) {
            self.mustDeliver = true
        }
    }

    @inlinable mutating func startDrainingIfNeeded(into effects: inout Effects) {
        if self.mustDeliver {
            self.mustDeliver = false
            effects.drain = true
        }
    }
}
