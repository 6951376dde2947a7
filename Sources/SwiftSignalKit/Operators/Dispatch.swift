/// Delivers every event on `queue`, in the order the events were sent when `queue` is serial.
///
/// On a concurrent queue (a global queue) the events run in parallel and may complete in any order,
/// a completion before a value; use a serial queue when order matters.
///
/// An event sent from another thread is enqueued on `queue`. An event sent on `queue` itself runs inline,
/// without a hop, where ``Queue/async(_:)`` would run work inline (a queue made by `Queue(name:)`, or
/// ``Queue/mainQueue()``), but only when no earlier event of the same subscription is still waiting in
/// the queue; otherwise it is enqueued behind them, so a completion sent on the queue never overtakes a
/// value sent from another thread just before it. On a global queue or a wrapped one (`Queue(queue:)`,
/// which may be concurrent) every event is enqueued, as in the original library.
///
/// ```swift
/// let disposable = (download(url) |> deliverOn(uiQueue)).start(next: { render($0) })
/// ```
///
/// - Parameter queue: Where callbacks run.
/// - Returns: An operator for `|>`.
@inlinable public func deliverOn<T: Sendable, E: Sendable>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    return deliverOnQueue(queue, gate: NeverBusy())
}

/// Delivers every event through `scheduler`, in the order the events were sent: each is scheduled with
/// ``SignalScheduler/schedule(_:)``, whose actions for one time run in the order they were scheduled.
///
/// The form to write in code that tests run on virtual time: take the scheduler as an argument, a
/// ``Queue`` in production, and a test passes its `VirtualTimeScheduler`, on whose timeline the events
/// then arrive, after the work that was runnable when they were sent.
///
/// ```swift
/// func updates(from feed: Signal<Quote, NoError>, scheduler: some SignalScheduler = Queue()) -> Signal<Quote, NoError> {
///     return feed |> deliverOn(scheduler)
/// }
/// ```
///
/// Unlike ``deliverOn(_:)-(Queue)``, every event is scheduled, also one sent where the scheduler runs
/// its actions. An event scheduled before the subscription is disposed and run after is dropped.
///
/// - Parameter scheduler: Where callbacks run.
/// - Returns: An operator for `|>`.
@inlinable public func deliverOn<T: Sendable, E: Sendable, S: SignalScheduler>(_ scheduler: S) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.subscribe(
                Linked(to: subscriber),
                next: { value in
                    scheduler.schedule { subscriber.putNext(value) }
                },
                error: { error in
                    scheduler.schedule { subscriber.putError(error) }
                },
                completed: {
                    scheduler.schedule { subscriber.putCompletion() }
                })
        }
    }
}

/// ``deliverOn(_:)-(Queue)`` for a consumer that must not run in the middle of some work on the queue
/// (a `QueueLocalActor`'s handlers, during one of its accesses): an event sent on the queue while
/// `isBusy` returns true is enqueued behind that work, as if sent from another thread, and the
/// subscription's later events follow it. `isBusy` is asked only on the queue, where `async` would run
/// the event inline; it must take no lock of the library and run no user code.
@inlinable package func deliverOnQueue<T: Sendable, E: Sendable>(
    _ queue: Queue, enqueueingWhile isBusy: @escaping @Sendable () -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    return deliverOnQueue(queue, gate: BusyWhile(isBusy))
}

/// The implementation of ``deliverOn(_:)-(Queue)``, also used by `combineLatest(queue:)`, whose error type
/// is not required to be `Sendable`: an error crosses to the queue once and is not kept by the source.
/// `gate` says when an event sent on the queue must be enqueued all the same (``NeverBusy``: never; it
/// has no bytes, so the callbacks' contexts are as without it).
@inlinable func deliverOnQueue<T: Sendable, E, Gate: QueueDeliveryGate>(_ queue: Queue, gate: Gate) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let delivery = OrderedQueueDelivery(queue: queue)
            return signal.subscribe(
                Linked(to: subscriber),
                next: { value in
                    delivery.deliver(value, to: subscriber, gate: gate)
                },
                error: { error in
                    // Safe: the error is moved to the queue and used once there; the source keeps no copy.
                    let transfer = UnsafeTransfer(error)
                    delivery.run(gate: gate) {
                        subscriber.putError(transfer.value)
                    }
                },
                completed: {
                    delivery.run(gate: gate) {
                        subscriber.putCompletion()
                    }
                })
        }
    }
}

/// When an event sent on a `deliverOn` queue, where it could run inline, must be enqueued all the same.
@usableFromInline protocol QueueDeliveryGate: Sendable {
    /// Asked only on the queue; true enqueues the event.
    func isBusy() -> Bool
}

/// The gate of a plain `deliverOn`: events sent on the queue run inline.
@usableFromInline struct NeverBusy: QueueDeliveryGate {
    @inlinable init() {}

    @inlinable func isBusy() -> Bool { false }
}

/// The gate of ``deliverOnQueue(_:enqueueingWhile:)``.
@usableFromInline struct BusyWhile: QueueDeliveryGate {
    @usableFromInline let check: @Sendable () -> Bool

    @inlinable init(_ check: @escaping @Sendable () -> Bool) {
        self.check = check
    }

    @inlinable func isBusy() -> Bool { self.check() }
}

/// Runs one subscription's events on a queue in the order they were sent: inline when sent on the queue
/// with nothing of this subscription pending there, enqueued otherwise.
///
/// The count of enqueued events and the enqueueing itself are done under one lock (`DispatchQueue.async`
/// runs no user code), so the order in which events enter the queue is the order in which their senders
/// took the lock, and an event on the queue sees every event enqueued before it.
@usableFromInline final class OrderedQueueDelivery: Sendable {
    @usableFromInline let queue: Queue
    /// Events enqueued and not yet run.
    @usableFromInline let pending = LockedState<Int>(0)

    @inlinable init(queue: Queue) {
        self.queue = queue
    }

    /// Delivers `value`: inline or enqueued, as ``run(_:)``, but without a closure around `putNext`, so
    /// the enqueued block is the only allocation, as with a plain `queue.async`.
    @inlinable func deliver<T: Sendable, E>(_ value: T, to subscriber: Subscriber<T, E>, gate: some QueueDeliveryGate) {
        if self.runsInline(gate) {
            subscriber.putNext(value)
        } else {
            self.enqueue {
                subscriber.putNext(value)
                self.ranEnqueued()
            }
        }
    }

    /// Runs `work`: inline when on the queue with nothing of this subscription pending there and `gate`
    /// not busy, enqueued otherwise.
    @inlinable func run(gate: some QueueDeliveryGate, _ work: @escaping @Sendable () -> Void) {
        if self.runsInline(gate) {
            work()
        } else {
            self.enqueue {
                work()
                self.ranEnqueued()
            }
        }
    }

    /// Whether an event sent now may run inline: only on a queue where `async` runs inline, which is
    /// serial, so nothing enqueued can run meanwhile and a zero count stays true until the inline event
    /// returns. (On a queue that may be concurrent, an enqueued event could run beside it.) Not while
    /// `gate` is busy: that event is enqueued, and the events after it then find it pending.
    @inlinable func runsInline(_ gate: some QueueDeliveryGate) -> Bool {
        return self.queue.runsWorkInline && !gate.isBusy() && self.pending.withLock { $0 == 0 }
    }

    /// Counts `block` as pending and enqueues it, under one lock; `block` must end with ``ranEnqueued()``.
    @inlinable func enqueue(_ block: @escaping @Sendable () -> Void) {
        self.pending.withLock { pending in
            pending += 1
            self.queue.justDispatch(block)
        }
    }

    /// An enqueued event has run.
    @inlinable func ranEnqueued() {
        self.pending.withLock { $0 -= 1 }
    }
}

/// Delivers every event on the main queue.
///
/// > Note: On Linux the main queue runs only if the process calls `dispatchMain()` or runs the main
/// > `RunLoop`; see ``Queue/mainQueue()``.
///
/// - Parameter signal: The source.
/// - Returns: The source, delivered on the main queue.
public func deliverOnMainQueue<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    return signal |> deliverOn(Queue.mainQueue())
}

/// Delivers every event on a serial lane of `threadPool`, in order.
///
/// Events still queued when the subscription is disposed are dropped.
///
/// - Parameter threadPool: The pool whose threads run the callbacks.
/// - Returns: An operator for `|>`.
public func deliverOn<T: Sendable, E: Sendable>(_ threadPool: ThreadPool) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let lane = threadPool.nextQueue()
            return signal.subscribe(
                Linked(to: subscriber),
                next: { value in
                    lane.addTask(
                        ThreadPoolTask { _ in
                            subscriber.putNext(value)
                        })
                },
                error: { error in
                    lane.addTask(
                        ThreadPoolTask { _ in
                            subscriber.putError(error)
                        })
                },
                completed: {
                    lane.addTask(
                        ThreadPoolTask { _ in
                            subscriber.putCompletion()
                        })
                })
        }
    }
}

/// Subscribes to the source on `queue`: the generator runs there, inline when already on `queue` where
/// ``Queue/async(_:)`` would run work inline (a queue made by `Queue(name:)`, or
/// ``Queue/mainQueue()``); on a global queue or a wrapped one (`Queue(queue:)`) it is always enqueued,
/// as in the original library.
///
/// Disposing before the generator has run stops it from running. A subscription that another thread is
/// making as you dispose (an operator such as ``then(_:)`` starting its next signal) can still run it
/// once, disposed at once (see the Threading and disposal article).
///
/// - Parameter queue: Where the subscription starts.
/// - Returns: An operator for `|>`.
public func runOn<T, E>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            if queue.runsWorkInline {
                return signal.subscribe(Forwarding(to: subscriber))
            }
            let disposable = MetaDisposable()
            queue.async {
                guard !disposable.isDisposed else { return }
                disposable.set(signal.subscribe(Forwarding(to: subscriber)))
            }
            return disposable
        }
    }
}

/// Subscribes to the source on a thread of `threadPool`.
///
/// Disposing before the task has run cancels it.
///
/// - Parameter threadPool: Where the subscription starts.
/// - Returns: An operator for `|>`.
public func runOn<T, E>(_ threadPool: ThreadPool) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            let disposable = MetaDisposable()
            let task = ThreadPoolTask { state in
                if state.cancelled.with({ $0 }) {
                    return
                }
                disposable.set(signal.subscribe(Forwarding(to: subscriber)))
            }
            let subscription = DisposableSet()
            subscription.add(ActionDisposable { task.cancel() })
            subscription.add(disposable)
            threadPool.addTask(task)
            return subscription
        }
    }
}
