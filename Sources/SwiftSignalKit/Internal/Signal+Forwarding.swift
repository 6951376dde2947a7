extension Signal {
    /// Starts the signal, sending its events on to `subscriber`; a handler given here replaces the
    /// forwarding of that kind of event.
    @inlinable func start(
        forwardingTo subscriber: Subscriber<T, E>,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        return self.start(
            forwardingValuesTo: subscriber,
            error: error ?? { error in
                subscriber.putError(error)
            },
            completed: completed)
    }

    /// Starts the signal, sending its values on to `subscriber`, whose error type may differ: the error
    /// handler is required, and a completion handler given here replaces forwarding the completion.
    @inlinable func start<F>(
        forwardingValuesTo subscriber: Subscriber<T, F>,
        error: @escaping @Sendable (E) -> Void,
        completed: (@Sendable () -> Void)? = nil
    ) -> Disposable {
        return self.start(
            linkedTo: subscriber,
            passingDemand: true,
            next: { value in
                subscriber.putNext(value)
            },
            error: error,
            completed: completed ?? {
                subscriber.putCompletion()
            })
    }

    /// Starts the signal with a custom value handler, sending error and completion on to `subscriber`.
    @inlinable
    func start<R>(forwardingTerminalsTo subscriber: Subscriber<R, E>, next: @escaping @Sendable (T) -> Void) -> Disposable {
        return self.run(TerminalForwardingSubscriber<T, R, E>(target: subscriber, next: next))
    }
}
