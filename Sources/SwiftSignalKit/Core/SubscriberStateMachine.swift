/// The state of a ``Subscriber`` that does not depend on its value and error types; every event returns
/// what the subscriber must do once unlocked.
///
/// It is deliberately not generic: the subscriber's hot path runs in the library's unspecialised generic
/// code, and a generic state type there costs a runtime metadata lookup on every lock. The callbacks,
/// which are generic, live in the subscriber itself, guarded by the same lock.
///
/// A delivered value does not come here: the subscriber's atomic gate (``DeliveryGate``) admits it, and
/// counts it while its callback runs, so that the callback is released after it. `dispose()` never
/// waits for a delivery (see ``Subscriber``).
@usableFromInline struct SubscriberStateMachine {
    /// What to run, unlocked, after a terminal event or disposal (besides the subscriber's callbacks).
    @usableFromInline struct TerminateAction {
        @usableFromInline var disposable: Disposable?
        /// After a terminal event: the generator's disposable stayed in the machine, to be taken once
        /// the terminal callback has returned (``takePendingDisposable()``), unless a `dispose()` during
        /// the callback takes it first.
        @usableFromInline var disposalPending: Bool

        @usableFromInline init(disposable: Disposable?, disposalPending: Bool = false) {
            self.disposable = disposable
            self.disposalPending = disposalPending
        }

        /// Disposes the generator's disposable.
        @inlinable func finish() {
            self.disposable?.dispose()
        }
    }

    /// Whether events are still delivered, and how.
    @usableFromInline enum Status: UInt8 {
        /// Every event is delivered.
        case live
        /// Live, but the first event of any kind terminates the subscriber (see ``takeFirstEvent()``).
        case firstEventOnly
        /// Terminated or disposed: events are dropped.
        case terminated
    }

    /// One byte, so that ``admitsValues`` is a single compare for both "terminated" and "first event
    /// only".
    @usableFromInline private(set) var status: Status

    @inlinable var isTerminated: Bool {
        return self.status == .terminated
    }
    @usableFromInline var disposable: Disposable?

    /// - Parameters:
    ///   - firstEventOnly: Whether the first event of any kind terminates the subscriber (see
    ///     ``takeFirstEvent()``).
    @usableFromInline init(firstEventOnly: Bool = false) {
        self.status = firstEventOnly ? .firstEventOnly : .live
    }

    /// Whether a value is delivered; when false, it is dropped or (see ``takeFirstEvent()``) ends a
    /// first-event-only subscriber. The subscriber's delivery gate is closed exactly when this is false
    /// (closed as the machine terminates, closed from the start for first-event-only), and a value asks
    /// the gate, not the machine, so that it takes no lock.
    @inlinable var admitsValues: Bool {
        return self.status == .live
    }

    /// When ``admitsValues`` is false: if this is a first-event-only subscriber's first event,
    /// terminates it and returns what to run once unlocked; otherwise (terminated) nil.
    @inlinable
    mutating func takeFirstEvent() -> TerminateAction? {
        guard self.status == .firstEventOnly else { return nil }
        return self.takeEverything()
    }

    /// An error or completion arrives: returns the action to run, or nil when already terminated.
    ///
    /// A live subscriber keeps the generator's disposable while its terminal callback runs: the callback
    /// (or a subscriber it hands the event to) may dispose the subscription, and that disposes the
    /// source at once, as in the original library, where it was disposed after the callback returned
    /// whatever happened meanwhile. So whoever tears down below a chain (``afterDisposed(_:)``, a
    /// `DisposableSet`) sees every source above it disposed first.
    @inlinable
    mutating func terminate() -> TerminateAction? {
        switch self.status {
        case .terminated:
            return nil
        case .firstEventOnly:
            return self.takeEverything()
        case .live:
            self.status = .terminated
            return TerminateAction(disposable: nil, disposalPending: self.disposable != nil)
        }
    }

    /// The subscription is disposed: returns what to release and dispose, or nil when it had already
    /// ended (then there is nothing left to do). Disposed while its terminal callback runs, it takes
    /// the generator's disposable that the terminal event left (see ``terminate()``): the action then
    /// has nothing else to release, since the terminal event took the callbacks.
    @inlinable
    mutating func dispose() -> TerminateAction? {
        switch self.status {
        case .terminated:
            guard let disposable = self.takePendingDisposable() else { return nil }
            return TerminateAction(disposable: disposable)
        case .live, .firstEventOnly:
            return self.takeEverything()
        }
    }

    /// The generator's disposable that a terminal event left for after its callback (see
    /// ``terminate()``), or nil when a `dispose()` took it meanwhile.
    @inlinable
    mutating func takePendingDisposable() -> Disposable? {
        let disposable = self.disposable
        self.disposable = nil
        return disposable
    }

    @usableFromInline
    mutating func takeEverything() -> TerminateAction {
        self.status = .terminated
        let action = TerminateAction(disposable: self.disposable)
        self.disposable = nil
        return action
    }
}
