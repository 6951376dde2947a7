/// Delivers every event on `queue`.
///
/// Events are sent with ``Queue/async(_:)``, so an event that already arrives on `queue` is delivered
/// inline, and events keep the order in which they were enqueued.
///
/// ```swift
/// let disposable = (download |> deliverOn(uiQueue)).start(next: { show($0) })
/// ```
///
/// - Parameter queue: Where callbacks run.
/// - Returns: An operator for `|>`.
@inlinable public func deliverOn<T: Sendable, E: Sendable>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    return deliverOnQueue(queue)
}

/// The implementation of ``deliverOn(_:)-(Queue)``, also used by `combineLatest(queue:)`, whose error type
/// is not required to be `Sendable`: an error crosses to the queue once and is not kept by the source.
@inlinable func deliverOnQueue<T: Sendable, E>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            return signal.start(
                linkedTo: subscriber,
                next: { value in
                    queue.async {
                        subscriber.putNext(value)
                    }
                },
                error: { error in
                    // Safe: the error is moved to the queue and used once there; the source keeps no copy.
                    let transfer = UnsafeTransfer(error)
                    queue.async {
                        subscriber.putError(transfer.value)
                    }
                },
                completed: {
                    queue.async {
                        subscriber.putCompletion()
                    }
                })
        }
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
            return signal.start(
                linkedTo: subscriber,
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

/// Subscribes to the source on `queue`: the generator runs there (inline when already on `queue`).
///
/// Disposing before the generator has run stops it from running.
///
/// - Parameter queue: Where the subscription starts.
/// - Returns: An operator for `|>`.
public func runOn<T, E>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    return { signal in
        return Signal { subscriber in
            if queue.isCurrent() {
                return signal.start(forwardingTo: subscriber)
            }
            let disposable = MetaDisposable()
            queue.async {
                guard !disposable.isDisposed else { return }
                disposable.set(signal.start(forwardingTo: subscriber))
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
                disposable.set(signal.start(forwardingTo: subscriber))
            }
            let subscription = DisposableSet()
            subscription.add(ActionDisposable { task.cancel() })
            subscription.add(disposable)
            threadPool.addTask(task)
            return subscription
        }
    }
}
