extension Signal {
    /// Starts the signal, sending every event on to `subscriber` unchanged.
    func start(forwardingTo subscriber: Subscriber<T, E>) -> Disposable {
        return self.start(
            linkedTo: subscriber,
            next: { value in
                subscriber.putNext(value)
            },
            error: { error in
                subscriber.putError(error)
            },
            completed: {
                subscriber.putCompletion()
            })
    }

    /// Starts the signal with a custom value handler, sending error and completion on to `subscriber`.
    func start<R>(forwardingTerminalsTo subscriber: Subscriber<R, E>, next: @escaping @Sendable (T) -> Void) -> Disposable {
        return self.start(
            linkedTo: subscriber, next: next,
            error: { error in
                subscriber.putError(error)
            },
            completed: {
                subscriber.putCompletion()
            })
    }
}
