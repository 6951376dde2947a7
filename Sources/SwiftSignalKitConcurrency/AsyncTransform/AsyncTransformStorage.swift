import SwiftSignalKit

/// One subscription to an async operator: the upstream subscription, a worker task and the runner tasks
/// it starts, and the state machine that orders them. It is also the subscription's disposable.
///
/// Tasks: the worker is created when the subscription starts, so it takes the priority given to the
/// operator or else that of the task that started the subscription, and that task's task-local values.
/// Runner tasks are created by the worker, so they inherit the same. Under the serial policy the worker
/// runs the transforms itself.
///
/// Delivery: results and the terminal event go through the library's ``SerialDelivery``, so the
/// subscriber is never called from two threads at once; the subscriber drops whatever arrives after
/// `dispose()` returned.
///
/// Flow control (see `SignalDemand`): when a consumer downstream paces its producers, a transform's
/// result waits for its room before it is handed on, so no new transform starts while the output is
/// full; and the storage paces its own producers upstream (``inputBound``), so values do not pile up in
/// `waiting` meanwhile.
@usableFromInline
final class AsyncTransformStorage<T: Sendable, R: Sendable, E: Error>: Disposable, SerialDeliveryHost,
    SignalDemand
{
    @usableFromInline typealias Machine = AsyncTransformStateMachine<T, R, E>
    @usableFromInline typealias Transform = @Sendable (T) async throws(E) -> R?

    @usableFromInline let subscriber: Subscriber<R, E>
    @usableFromInline let transform: Transform
    @usableFromInline let priority: TaskPriority?
    @usableFromInline let state: LockedState<Machine>
    /// The room of the consumer downstream, when one paces this subscription.
    @usableFromInline let downstreamDemand: (any SignalDemand)?
    /// How many values may wait for a transform before producers upstream that can wait do so: the
    /// bound of a `.bounded` policy; 0 (a value waits only for a transform about to take it) when the
    /// policy keeps every value and a consumer downstream paces; nil (never wait) otherwise.
    @usableFromInline let inputBound: Int?

    @inlinable init(subscriber: Subscriber<R, E>, policy: AsyncTransformPolicy, priority: TaskPriority?, transform: @escaping Transform) {
        self.subscriber = subscriber
        self.transform = transform
        self.priority = priority
        self.state = LockedState(Machine(policy: policy))
        // Found here, where the chain below the subscriber is complete.
        let downstreamDemand = subscriber.demand
        self.downstreamDemand = downstreamDemand
        switch policy.buffering {
        case .bounded(let bound): self.inputBound = bound
        case .unbounded: self.inputBound = downstreamDemand == nil ? nil : 0
        case .bufferingNewest, .bufferingOldest, .endingWhenFull: self.inputBound = nil
        }
    }

    /// Starts the worker, then the upstream subscription.
    @inlinable func start(_ upstream: Signal<T, E>) {
        let worker = TimelineExecutor.startTask(priority: self.priority) {
            await self.work()
        }
        self.register(self.state.withLock { $0.workerStarted(worker) })
        // The upstream subscriber knows this storage as its consumer (see `SignalDemand`), whether or not
        // it paces: a loop inside the generator above (`restart` of a synchronous signal) runs before the
        // subscription below exists, and learns that this subscription has ended only by asking.
        let subscription = upstream.start(
            next: { value in self.perform(self.state.withLock { $0.valueArrived(value) }) },
            error: { error in self.perform(self.state.withLock { $0.upstreamFailed(error) }) },
            completed: { self.perform(self.state.withLock { $0.upstreamCompleted() }) },
            pacedBy: self
        )
        self.register(self.state.withLock { $0.upstreamStarted(subscription) })
    }

    @inlinable func dispose() {
        self.perform(self.state.withLock { $0.dispose() })
    }

    // MARK: - Tasks

    @inlinable func work() async {
        while true {
            switch await self.nextCommand() {
            case .stop:
                return
            case .run(let work):
                await self.run(work, as: Machine.workerKey)
            case .spawn(let runner, let work):
                let task = TimelineExecutor.startTask(priority: self.priority) {
                    guard await self.mayBegin(runner) else { return }
                    await self.run(work, as: runner)
                }
                self.register(self.state.withLock { $0.runnerStarted(runner, task: task) })
            }
        }
    }

    /// Runs what a registration asks, after unlocking.
    @inlinable func register(_ action: Machine.RegistrationAction) {
        switch action {
        case .none:
            break
        case .cancel(let task):
            task.cancel()
        case .dispose(let upstream):
            upstream.dispose()
        case .letBegin(let gate, let superseded):
            superseded?.cancel()
            gate.resume(returning: true)
        }
    }

    @inlinable func nextCommand() async -> AsyncTransformCommand<T> {
        if case .take(let ready) = self.state.withLock({ $0.nextCommand(orWait: nil) }) {
            return ready
        }
        return await withUnsafeContinuation { continuation in
            if case .take(let ready) = self.state.withLock({ $0.nextCommand(orWait: continuation) }) {
                continuation.resume(returning: ready)
            }
        }
    }

    /// Whether runner task `runner` may transform: it waits until the worker has registered it, so that
    /// ending the subscription, which cancels the registered tasks, cancels every transform. False when
    /// the subscription ended first.
    @inlinable func mayBegin(_ runner: Int) async -> Bool {
        switch self.state.withLock({ $0.runnerBegins(runner, orWait: nil) }) {
        case .transform: return true
        case .leave: return false
        case .wait: break
        }
        return await withUnsafeContinuation { gate in
            switch self.state.withLock({ $0.runnerBegins(runner, orWait: gate) }) {
            case .transform: gate.resume(returning: true)
            case .leave: gate.resume(returning: false)
            case .wait: break
            }
        }
    }

    /// Transforms `work`, then every value the state hands this runner next. A value taken after the
    /// subscription ended (its task is cancelled) is not transformed: the end cancels the tasks before
    /// `dispose()` returns, so no transform starts after it.
    @inlinable func run(_ work: AsyncTransformWork<T>, as runner: Int) async {
        var current = work
        while true {
            let result: Result<R?, E>
            if Task.isCancelled {
                // Ended, or superseded (the latest policy): its result would be dropped.
                result = .success(nil)
            } else {
                do throws(E) {
                    result = .success(try await self.transform(current.value))
                } catch {
                    result = .failure(error)
                }
            }
            if let demand = self.downstreamDemand, case .success(.some) = result {
                // The output is full: hold this result, and with it this transform's place, until the
                // consumer has room, so that no further transform starts meanwhile.
                _ = await demand.waitForRoom()
            }
            var step = self.state.withLock { $0.transformFinished(runner: runner, index: current.index, result: result) }
            if case .checkOut(let after) = step {
                self.perform(after)
                step = self.state.withLock { $0.runnerCheckOut(runner) }
            }
            switch step {
            case .transform(let next, let after):
                self.perform(after)
                current = next
            case .leave(let after), .checkOut(let after):
                // (`runnerCheckOut` answers `.transform` or `.leave`; `.checkOut` is here for the switch.)
                self.perform(after)
                return
            }
        }
    }

    // MARK: - Actions

    /// Does what the state machine decided, after unlocking. The values and results the action hands
    /// back are released when the caller lets go of it, after this.
    @inlinable func perform(_ action: Machine.Action) {
        var deliver = false
        switch action {
        case .none, .release:
            break
        case .resumeWorker(let waiter, let command), .releaseAndResumeWorker(_, let waiter, let command):
            waiter.resume(returning: command)
        case .deliver:
            deliver = true
        case .resumeWorkerAndDeliver(let waiter, let command):
            waiter.resume(returning: command)
            deliver = true
        case .supersede(let task, _):
            task?.cancel()
        case .end(let teardown):
            teardown.waitingWorker?.resume(returning: .stop)
            for task in teardown.tasks {
                task.cancel()
            }
            for gate in teardown.waitingRunners {
                gate.resume(returning: false)
            }
            teardown.upstream?.dispose()
            deliver = teardown.deliver
        }
        self.letProducersGo()
        if deliver {
            self.drain()
        }
    }

    /// Every change of the state may have made room upstream (a value taken for a transform, the end of
    /// the subscription): resumes the producers waiting for it. At the end, after disposing the upstream,
    /// so that a producer task that the end cancelled sees its cancellation when it wakes, and reads no
    /// more.
    @inlinable func letProducersGo() {
        guard let bound = self.inputBound else { return }
        RoomWaiters.resume(
            self.state.withLock { state in
                state.producers.isEmpty || !state.hasInputRoom(bound: bound) ? [] : state.producers.takeAll()
            })
    }

    /// Sends the queued events to the subscriber (``SerialDeliveryHost``).
    @inlinable func drain() {
        self.deliverQueued()
    }

    @inlinable func nextDelivery(resuming: Bool) -> SerialDeliveryStep<SignalEvent<R, E>> {
        switch self.state.withLock({ $0.nextOutgoing(resuming: resuming) }) {
        case .deliver(let event, let then):
            self.perform(then)
            return .deliver(event)
        case .handOff:
            return .handOff
        case .idle:
            return .idle
        }
    }

    @inlinable func deliver(_ event: SignalEvent<R, E>) {
        self.subscriber.put(event)
    }

    // MARK: - Flow control

    /// Suspends a producer upstream while ``inputBound`` values wait for a transform (see
    /// `SignalDemand`).
    /// Producers upstream wait only under an input bound (see ``inputBound``).
    @usableFromInline package var pacesProducers: Bool {
        return self.inputBound != nil
    }

    /// Whether no more values are taken: a terminal event is queued, the subscription was disposed, or
    /// the subscriber below has ended (its disposal of this subscription may not have landed yet).
    @usableFromInline package var consumerHasGone: Bool {
        return self.state.withLock { $0.hasStopped } || self.subscriber.isTerminated
    }

    @usableFromInline package func waitForRoom() async -> Bool {
        guard let bound = self.inputBound else { return true }
        return await self.state.waitForRoom(hasRoom: { $0.hasInputRoom(bound: bound) }, hasGone: { $0.hasStopped })
    }
}
