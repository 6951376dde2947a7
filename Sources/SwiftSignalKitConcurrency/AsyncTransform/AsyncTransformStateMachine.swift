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

/// The state of one subscription to an async operator (`mapAsync`, `filterAsync`, `compactMapAsync`),
/// and every decision about it: which value a transform takes next, which task runs it, when a result
/// goes to the subscriber, and when the subscription ends. ``AsyncTransformStorage`` holds it under its
/// lock and does what the returned ``Action`` says after unlocking, so that nothing is released,
/// resumed, cancelled or disposed under the lock.
///
/// The phases, each with its data:
///
/// ```
/// running --upstream fails, a transform fails, or upstream completes with nothing left--> ending
///    \                                                                                       |
///     \------------------------------------ dispose ------------------------------> disposed <
/// ```
///
/// Everything a running subscription holds (waiting values, commands, tasks, out-of-order results)
/// lives in ``Running``, so the end hands it all back at once (``Teardown``). The delivery queue and
/// the producers waiting for room stay beside the phase: the terminal event is delivered, and producers
/// are let go, after the end.
///
/// Unexpected events follow `CONTRIBUTING.md`: a value, an end, a finished transform or a started task
/// that races the end is a benign race (it does nothing and hands back what to release or cancel); two
/// workers waiting at once cannot happen and traps.
@usableFromInline struct AsyncTransformStateMachine<T: Sendable, R: Sendable, E: Error>: RoomWaitingState {
    @usableFromInline typealias Work = AsyncTransformWork<T>
    @usableFromInline typealias Command = AsyncTransformCommand<T>
    @usableFromInline typealias Outgoing = SignalEvent<R, E>
    @usableFromInline typealias Waiter = UnsafeContinuation<Command, Never>
    /// A runner task that began before the worker registered it, waiting to learn whether it may
    /// transform (true) or must leave (false).
    @usableFromInline typealias RunnerGate = UnsafeContinuation<Bool, Never>

    /// The key of the worker when it runs transforms itself (the serial policy).
    @inlinable static var workerKey: Int { -1 }

    /// The latest policy's one transform: the runner that runs it or is about to, whether a newer value
    /// has cancelled it, and the newest value, which starts when that runner has finished.
    @usableFromInline struct Latest: Sendable {
        @usableFromInline var current: Int?
        @usableFromInline var superseded = false
        @usableFromInline var pending: T?

        @inlinable init() {}
    }

    /// What a running subscription holds.
    @usableFromInline struct Running: Sendable {
        /// Values that no transform has taken yet, limited by `buffering`.
        @usableFromInline var waiting = ValueRing<T>()
        /// Commands the worker has not taken yet.
        @usableFromInline var commands = ValueRing<Command>()
        /// The worker, waiting for a command.
        @usableFromInline var waiter: Waiter?
        /// Transforms running or about to (a queued command).
        @usableFromInline var busy = 0
        /// Values taken for a transform whose result has not been handed to the subscriber (or dropped)
        /// yet: running, finished and waiting for an earlier result, or queued for the subscriber. At most
        /// `width`, so a slow consumer or a slow first value holds back the upstream's values in
        /// `waiting`, where the buffering policy applies, instead of piling up results.
        @usableFromInline var inFlight = 0
        /// The runner tasks, registered by the worker once it has made each one. A runner transforms
        /// only once registered (``runnerBegins(_:orWait:)``), so that the end of the subscription,
        /// which cancels the tasks registered here, cancels every transform.
        @usableFromInline var runners: [Int: Task<Void, Never>] = [:]
        /// Runners that began before their registration, waiting for it.
        @usableFromInline var gates: [Int: RunnerGate] = [:]
        @usableFromInline var nextRunner = 0
        @usableFromInline var latest = Latest()
        /// The position the next value taken gets.
        @usableFromInline var nextIndex = 0
        /// Ordered policies: the position of the next result to send, and results that wait for
        /// earlier ones (`nil` inside: the value was filtered out).
        @usableFromInline var nextIndexToSend = 0
        @usableFromInline var outOfOrder: [Int: R?] = [:]
        /// The upstream completed: the subscription ends when the last transform has finished.
        @usableFromInline var upstreamFinished = false
        @usableFromInline var upstream: Disposable?
        @usableFromInline var worker: Task<Void, Never>?

        @inlinable init() {}
    }

    @usableFromInline enum Phase: Sendable {
        /// Values are taken and transformed.
        case running(Running)
        /// A terminal event is queued for the subscriber: no more work starts.
        case ending
        /// Disposed: nothing is delivered.
        case disposed
        /// Only inside an event, while the running data is taken out to be changed without a copy.
        case modifying
    }

    /// Everything the end of a subscription lets go, to be stopped and released after unlocking.
    @usableFromInline struct Teardown: Sendable {
        /// Cancel these, in this order (the order the runners started, then the worker).
        @usableFromInline var tasks: [Task<Void, Never>] = []
        /// The worker waits for a command: resume it with `.stop`.
        @usableFromInline var waitingWorker: Waiter?
        /// Runners waiting for their registration: resume each with false, after the cancellations.
        @usableFromInline var waitingRunners: [RunnerGate] = []
        @usableFromInline var upstream: Disposable?
        /// Values no transform will take, and results no subscriber will get.
        @usableFromInline var values: [T?] = []
        @usableFromInline var results: [R?] = []
        @usableFromInline var outgoing = ValueRing<SerialDelivery<Outgoing>.Entry>()
        /// The terminal event was queued and this thread became the deliverer: deliver after the rest.
        @usableFromInline var deliver = false

        @inlinable init() {}
    }

    /// What the storage does after unlocking: every event's answer.
    @usableFromInline enum Action: Sendable {
        case none
        /// Resume the worker, which waits for a command, with this one.
        case resumeWorker(Waiter, Command)
        /// A result was queued and this thread became the deliverer: deliver the queued events.
        case deliver
        /// Both of the above: resume the worker first.
        case resumeWorkerAndDeliver(Waiter, Command)
        /// Release this value: the buffering policy dropped it, or it arrived after the end.
        case release(T)
        /// Release this value, then resume the worker.
        case releaseAndResumeWorker(T, Waiter, Command)
        /// The latest policy: a newer value cancels the running transform (its task, once registered)
        /// and replaces the value that waited for it, released here.
        case supersede(cancel: Task<Void, Never>?, release: T?)
        /// The subscription ended: stop and release everything it held.
        case end(Teardown)
    }

    /// What a runner does after its transform finished, or after it checked out.
    @usableFromInline enum RunnerStep: Sendable {
        /// Do `after`, then transform `work`.
        case transform(Work, after: Action)
        /// Do `after`, then check out (``runnerCheckOut(_:)``), still counted as busy, so that the room
        /// its own delivery makes goes to it rather than to a new task.
        case checkOut(after: Action)
        /// Do `after`, then leave.
        case leave(after: Action)
    }

    @usableFromInline let mode: AsyncTransformPolicy.Mode
    @usableFromInline let buffering: SignalBufferingPolicy
    /// Serial and concurrent policies: how many values may be in progress at once (taken for a
    /// transform and not yet handed to the subscriber). Values beyond it wait in `waiting`.
    @usableFromInline let width: Int
    @usableFromInline private(set) var phase = Phase.running(Running())
    /// Results and the terminal event on their way to the subscriber.
    @usableFromInline var delivery = SerialDelivery<Outgoing>(keepingStorage: true)
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

    // MARK: - Reading

    /// Whether a producer upstream may send one more value when at most `bound` values may wait: fewer
    /// wait, or none waits and a transform could take a value now, or no value will be taken any more
    /// (it is then dropped, and a producer must not wait for it).
    /// Whether no more values are taken: a terminal event is queued, or the subscription was disposed
    /// (see `SignalDemand.waitForRoom()`).
    @inlinable var hasStopped: Bool {
        switch self.phase {
        case .ending, .disposed:
            return true
        case .running, .modifying:
            return false
        }
    }

    @inlinable func hasInputRoom(bound: Int) -> Bool {
        guard case .running(let running) = self.phase, !running.upstreamFinished else { return true }
        if running.waiting.count < bound { return true }
        return running.waiting.isEmpty && running.busy < self.width && running.inFlight < self.width
    }

    @inlinable var isOrdered: Bool {
        switch self.mode {
        case .serial: return true
        case .latest: return false
        case .concurrent(_, let ordered): return ordered
        }
    }

    // MARK: - Setup

    /// The worker task was created: it is cancelled at once when the subscription has ended (a benign
    /// race).
    @inlinable mutating func workerStarted(_ task: Task<Void, Never>) -> RegistrationAction {
        guard case .running(var running) = self.phase else { return .cancel(task) }
        self.phase = .modifying
        running.worker = task
        self.phase = .running(running)
        return .none
    }

    /// The upstream subscription started: it is disposed at once when it is not needed (a benign race).
    @inlinable mutating func upstreamStarted(_ disposable: Disposable) -> RegistrationAction {
        guard case .running(var running) = self.phase else { return .dispose(disposable) }
        self.phase = .modifying
        running.upstream = disposable
        self.phase = .running(running)
        return .none
    }

    /// What the thread that registered a task (the worker, a runner's) or the upstream subscription does
    /// next, after unlocking.
    @usableFromInline enum RegistrationAction: Sendable {
        case none
        /// Cancel the task: the subscription has ended, or (the latest policy) a newer value has
        /// superseded its transform already.
        case cancel(Task<Void, Never>)
        /// Dispose the upstream subscription: the subscription ended while it started.
        case dispose(Disposable)
        /// The runner began before its registration and waits: cancel `cancelling` if given (superseded),
        /// then let the runner begin.
        case letBegin(RunnerGate, cancelling: Task<Void, Never>?)
    }

    /// The worker made the task of `runner`.
    @inlinable mutating func runnerStarted(_ runner: Int, task: Task<Void, Never>) -> RegistrationAction {
        guard case .running(var running) = self.phase else { return .cancel(task) }
        self.phase = .modifying
        running.runners[runner] = task
        let superseded = running.latest.current == runner && running.latest.superseded
        let gate = running.gates.removeValue(forKey: runner)
        self.phase = .running(running)
        if let gate { return .letBegin(gate, cancelling: superseded ? task : nil) }
        return superseded ? .cancel(task) : .none
    }

    /// What a runner task does as it begins.
    @usableFromInline enum BeginAction: Sendable {
        /// Transform: its task is registered, so the end of the subscription cancels it.
        case transform
        /// Leave: the subscription has ended.
        case leave
        /// Wait: its task is not registered yet. With a gate given, the gate was stored, and the
        /// registration or the end resumes it; without one, ask again with a gate.
        case wait
    }

    /// A runner task begins (see ``BeginAction``).
    @inlinable mutating func runnerBegins(_ runner: Int, orWait gate: RunnerGate?) -> BeginAction {
        guard case .running(var running) = self.phase else { return .leave }
        if running.runners[runner] != nil { return .transform }
        guard let gate else { return .wait }
        self.phase = .modifying
        running.gates[runner] = gate
        self.phase = .running(running)
        return .wait
    }

    // MARK: - Upstream events

    @inlinable mutating func valueArrived(_ value: T) -> Action {
        guard case .running(var running) = self.phase else { return .release(value) }
        self.phase = .modifying
        var resume: (Waiter, Command)?
        var released: T?
        switch self.mode {
        case .serial, .concurrent:
            // Straight to a transform only when nothing waits before it (input order) and there is room;
            // otherwise behind the waiting values, which a runner checking out or `fillRunners` takes.
            if running.waiting.isEmpty, running.inFlight < self.width, running.busy < self.width {
                self.start(self.take(value, &running), &running, resuming: &resume)
            } else {
                released = self.buffer(value, &running)
                self.fillRunners(&running, resuming: &resume)
            }
        case .latest:
            if let current = running.latest.current {
                // One transform at a time: the running one is cancelled, and the newest value waits for
                // it to finish (a transform slow to notice its cancellation does not pile up others).
                var cancel: Task<Void, Never>?
                if !running.latest.superseded {
                    running.latest.superseded = true
                    cancel = running.runners[current]
                }
                released = running.latest.pending.take()
                running.latest.pending = value
                self.phase = .running(running)
                return cancel == nil && released == nil ? .none : .supersede(cancel: cancel, release: released)
            }
            if running.inFlight < self.width {
                self.start(self.take(value, &running), &running, resuming: &resume)
            } else {
                // The last result still waits for the subscriber: the newest value starts after it.
                released = running.latest.pending.take()
                running.latest.pending = value
            }
        }
        self.phase = .running(running)
        switch (released, resume) {
        case (nil, nil): return .none
        case (let value?, nil): return .release(value)
        case (nil, let (waiter, command)?): return .resumeWorker(waiter, command)
        case (let value?, let (waiter, command)?): return .releaseAndResumeWorker(value, waiter, command)
        }
    }

    @inlinable mutating func upstreamFailed(_ error: E) -> Action {
        guard case .running(let running) = self.phase else { return .none }
        return .end(self.end(running, with: .Error(error)))
    }

    @inlinable mutating func upstreamCompleted() -> Action {
        guard case .running(var running) = self.phase else { return .none }
        self.phase = .modifying
        running.upstreamFinished = true
        return self.endIfIdle(running) ?? .none
    }

    // MARK: - Worker and runners

    /// What the worker does when it asks for its next command.
    @usableFromInline enum CommandAction: Sendable {
        /// Carry out this command.
        case take(Command)
        /// Wait: none is queued. With a waiter given, it was stored, to be resumed with the next command;
        /// without one, ask again with a waiter.
        case wait
    }

    /// The worker asks for its next command (see ``CommandAction``).
    @inlinable mutating func nextCommand(orWait waiter: Waiter?) -> CommandAction {
        guard case .running(var running) = self.phase else { return .take(.stop) }
        if !running.commands.isEmpty || waiter != nil {
            self.phase = .modifying
            defer { self.phase = .running(running) }
            if !running.commands.isEmpty { return .take(running.commands.removeFirst()) }
            if running.waiter != nil { preconditionFailure("AsyncTransform: two workers wait") }
            running.waiter = waiter
        }
        return .wait
    }

    /// A transform finished with `result`: what its runner does next.
    @inlinable mutating func transformFinished(runner: Int, index: Int, result: Result<R?, E>) -> RunnerStep {
        // After the end, the state keeps no runner: there is nothing to unregister.
        guard case .running(var running) = self.phase else { return .leave(after: .none) }
        self.phase = .modifying
        if case .latest = self.mode {
            return .leave(after: self.latestFinished(runner: runner, result: result, &running))
        }
        var deliver = false
        switch result {
        case .failure(let error):
            self.runnerExited(runner, &running)
            return .leave(after: .end(self.end(running, with: .Error(error))))
        case .success(let output):
            if self.isOrdered {
                deliver = self.sendInOrder(index: index, output, &running)
            } else if let output {
                deliver = self.delivery.post(.Next(output))
            } else {
                running.inFlight -= 1
            }
        }
        let after: Action = deliver ? .deliver : .none
        if running.inFlight < self.width, !running.waiting.isEmpty {
            let next = self.take(running.waiting.removeFirst(), &running)
            self.phase = .running(running)
            return .transform(next, after: after)
        }
        self.phase = .running(running)
        return .checkOut(after: after)
    }

    /// A runner with nothing to do: takes a waiting value if there is room now, or leaves.
    @inlinable mutating func runnerCheckOut(_ runner: Int) -> RunnerStep {
        guard case .running(var running) = self.phase else { return .leave(after: .none) }
        if case .latest = self.mode { return .leave(after: .none) }
        self.phase = .modifying
        if running.inFlight < self.width, !running.waiting.isEmpty {
            let next = self.take(running.waiting.removeFirst(), &running)
            self.phase = .running(running)
            return .transform(next, after: .none)
        }
        running.busy -= 1
        self.runnerExited(runner, &running)
        var resume: (Waiter, Command)?
        self.fillRunners(&running, resuming: &resume)
        if let (waiter, command) = resume {
            self.phase = .running(running)
            return .leave(after: .resumeWorker(waiter, command))
        }
        return .leave(after: self.endIfIdle(running) ?? .none)
    }

    // MARK: - Delivery

    /// What the deliverer does next (see ``SerialDelivery/step(resuming:)``).
    @usableFromInline enum OutgoingAction {
        /// Deliver this event; before that, `then` after unlocking: a result handed on makes room for
        /// another value, which may wake the worker.
        case deliver(Outgoing, then: Action)
        /// Return: a task on the scheduler takes over.
        case handOff
        /// Return: the queue is empty and the role is given up.
        case idle
    }

    /// The deliverer takes the next event to send.
    @inlinable mutating func nextOutgoing(resuming: Bool) -> OutgoingAction {
        let event: Outgoing
        switch self.delivery.step(resuming: resuming) {
        case .deliver(let next): event = next
        case .handOff: return .handOff
        case .idle: return .idle
        }
        guard case .Next = event, case .running(var running) = self.phase else { return .deliver(event, then: .none) }
        self.phase = .modifying
        running.inFlight -= 1
        var resume: (Waiter, Command)?
        self.fillRunners(&running, resuming: &resume)
        self.phase = .running(running)
        guard let (waiter, command) = resume else { return .deliver(event, then: .none) }
        return .deliver(event, then: .resumeWorker(waiter, command))
    }

    // MARK: - Disposal

    @inlinable mutating func dispose() -> Action {
        var teardown = Teardown()
        switch self.phase {
        case .running(let running):
            teardown = self.stop(running)
        case .ending:
            break
        case .disposed:
            return .none
        case .modifying:
            preconditionFailure("AsyncTransform: dispose() inside an event")
        }
        self.phase = .disposed
        teardown.outgoing = self.delivery.close()
        return .end(teardown)
    }

    // MARK: - Helpers (on the running data, taken out of the phase)

    @inlinable func take(_ value: T, _ running: inout Running) -> Work {
        let work = Work(index: running.nextIndex, value: value)
        running.nextIndex += 1
        running.inFlight += 1
        return work
    }

    /// Starts a transform of `work`: on the worker (serial) or on a new runner task.
    @inlinable func start(_ work: Work, _ running: inout Running, resuming resume: inout (Waiter, Command)?) {
        running.busy += 1
        let command: Command
        switch self.mode {
        case .serial:
            command = .run(work)
        case .concurrent:
            command = .spawn(runner: running.nextRunner, work)
            running.nextRunner += 1
        case .latest:
            running.latest.current = running.nextRunner
            running.latest.superseded = false
            command = .spawn(runner: running.nextRunner, work)
            running.nextRunner += 1
        }
        // Only the first command of an event can find the worker waiting; later ones queue behind it.
        if let waiter = running.waiter.take() {
            resume = (waiter, command)
        } else {
            running.commands.append(command)
        }
    }

    /// Starts transforms for waiting values while there is room (the latest policy: the pending value).
    @inlinable func fillRunners(_ running: inout Running, resuming resume: inout (Waiter, Command)?) {
        if case .latest = self.mode {
            if running.latest.current == nil, running.inFlight < self.width, let pending = running.latest.pending.take() {
                self.start(self.take(pending, &running), &running, resuming: &resume)
            }
            return
        }
        while running.busy < self.width, running.inFlight < self.width, !running.waiting.isEmpty {
            self.start(self.take(running.waiting.removeFirst(), &running), &running, resuming: &resume)
        }
    }

    /// Keeps `value` for a transform under the buffering policy; returns the value it dropped, if any.
    @inlinable func buffer(_ value: T, _ running: inout Running) -> T? {
        switch self.buffering {
        case .unbounded, .bounded, .endingWhenFull:
            // `.bounded` makes the producers upstream wait (see `AsyncTransformStorage.inputBound`);
            // `.endingWhenFull` is refused when the policy is made (see `AsyncTransformPolicy`).
            running.waiting.append(value)
            return nil
        case .bufferingNewest(let limit):
            if limit == 0 { return value }
            let dropped = running.waiting.count >= limit ? running.waiting.removeFirst() : nil
            running.waiting.append(value)
            return dropped
        case .bufferingOldest(let limit):
            if running.waiting.count >= limit { return value }
            running.waiting.append(value)
            return nil
        }
    }

    /// The latest policy's transform finished: its result goes on unless a newer value superseded it.
    @inlinable mutating func latestFinished(runner: Int, result: Result<R?, E>, _ running: inout Running) -> Action {
        self.runnerExited(runner, &running)
        running.busy -= 1
        running.latest.current = nil
        var deliver = false
        if running.latest.superseded {
            running.inFlight -= 1  // a superseded result does not count
        } else {
            switch result {
            case .failure(let error):
                return .end(self.end(running, with: .Error(error)))
            case .success(let output?):
                deliver = self.delivery.post(.Next(output))
            case .success(nil):
                running.inFlight -= 1
            }
        }
        var resume: (Waiter, Command)?
        self.fillRunners(&running, resuming: &resume)
        if resume == nil, let end = self.endIfIdle(running) {
            guard case .end(var teardown) = end else { return end }
            teardown.deliver = teardown.deliver || deliver
            return .end(teardown)
        }
        self.phase = .running(running)
        switch (deliver, resume) {
        case (false, nil): return .none
        case (true, nil): return .deliver
        case (false, let (waiter, command)?): return .resumeWorker(waiter, command)
        case (true, let (waiter, command)?): return .resumeWorkerAndDeliver(waiter, command)
        }
    }

    /// Ordered policies: queues results in input order; returns whether this thread became the deliverer.
    @inlinable mutating func sendInOrder(index: Int, _ output: R?, _ running: inout Running) -> Bool {
        guard index == running.nextIndexToSend else {
            running.outOfOrder[index] = output
            return false
        }
        var deliver = self.release(output, &running)
        running.nextIndexToSend += 1
        while let ready = running.outOfOrder.removeValue(forKey: running.nextIndexToSend) {
            deliver = self.release(ready, &running) || deliver
            running.nextIndexToSend += 1
        }
        return deliver
    }

    /// A result whose turn has come: queued for the subscriber, or out of the count when it was filtered
    /// out. Returns whether this thread became the deliverer.
    @inlinable mutating func release(_ output: R?, _ running: inout Running) -> Bool {
        guard let output else {
            running.inFlight -= 1
            return false
        }
        return self.delivery.post(.Next(output))
    }

    @inlinable func runnerExited(_ runner: Int, _ running: inout Running) {
        if runner == Self.workerKey { return }
        if running.runners.removeValue(forKey: runner) == nil {
            // A runner transforms only once registered (`runnerBegins`).
            preconditionFailure("AsyncTransform: runner \(runner) finished a transform without being registered")
        }
    }

    /// Completes the subscription when the upstream has completed and no work is left; otherwise puts
    /// `running` back and returns nil.
    @inlinable mutating func endIfIdle(_ running: Running) -> Action? {
        guard running.upstreamFinished, running.busy == 0, running.waiting.isEmpty, running.commands.isEmpty,
            running.latest.pending == nil
        else {
            self.phase = .running(running)
            return nil
        }
        return .end(self.end(running, with: .Completion))
    }

    /// Queues the terminal event and stops all work. A failure goes first: results not handed to the
    /// subscriber yet are dropped. Completion goes after them.
    @inlinable mutating func end(_ running: Running, with terminal: Outgoing) -> Teardown {
        self.phase = .ending
        var teardown = self.stop(running)
        if case .Error = terminal {
            teardown.outgoing = self.delivery.removeQueued()
        }
        teardown.deliver = self.delivery.post(terminal)
        return teardown
    }

    /// Everything `running` holds, to stop and release.
    @inlinable func stop(_ running: Running) -> Teardown {
        var running = running
        var teardown = Teardown()
        // In the order the runners started, not the dictionary's (seeded per process): on a virtual
        // timeline, the order of the cancellations is the order in which their tasks run next.
        teardown.tasks = running.runners.sorted { $0.key < $1.key }.map(\.value)
        if let worker = running.worker {
            teardown.tasks.append(worker)
        }
        teardown.waitingWorker = running.waiter
        teardown.waitingRunners = Array(running.gates.values)
        teardown.upstream = running.upstream
        teardown.values = running.waiting.removeAll()
        if let pending = running.latest.pending {
            teardown.values.append(pending)
        }
        for case let command? in running.commands.removeAll() {
            if case .run(let work) = command { teardown.values.append(work.value) }
            if case .spawn(_, let work) = command { teardown.values.append(work.value) }
        }
        teardown.results = Array(running.outOfOrder.values)
        return teardown
    }
}
