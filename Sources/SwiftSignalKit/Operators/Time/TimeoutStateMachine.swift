/// The state of one subscription to ``timeout(_:scheduler:alternate:)-(Double,_,_)`` (which watches the
/// wait for the first event) or ``timeout(perValue:scheduler:alternate:)-(Double,_,_)`` (which watches
/// every gap): who is winning the race between the source and the timer, and the events on their way
/// to the subscriber, in a ``SerialDelivery``.
///
/// Every decision (pass a source event on, switch to the alternate, drop a late event) is made under the
/// lock that also queues the event, so events reach the subscriber in the order they were decided: no
/// source value after the alternate's first event, nothing after a terminal event.
///
/// Waits are numbered by the values that started them; a wait replaced by a later value, or one that
/// fires after the end, finds a different number or phase and does nothing.
@usableFromInline struct TimeoutStateMachine<T, E> {
    @usableFromInline enum Mode {
        /// Only the wait for the first event is bounded.
        case firstEvent
        /// The wait before the first event and after each value is bounded.
        case everyGap
    }

    @usableFromInline enum Phase {
        /// The timer for the wait that follows value `generation` (0: the subscription) runs, or is about
        /// to be stored.
        case watching(generation: UInt64, timer: Disposable?)
        /// First-event mode: the source won; its events pass.
        case passing
        /// The timer won: the alternate's events pass.
        case timedOut
        /// A terminal event is queued, or the subscription was disposed.
        case finished
    }

    /// An event on its way, with the number of the value it is (its wait starts once it is delivered).
    @usableFromInline typealias Item = (event: SignalEvent<T, E>, startsWait: UInt64?)

    /// What the thread that ran an event does next, after unlocking.
    @usableFromInline enum Action {
        /// Nothing: the event was queued for the thread that delivers, or a timer fired too late.
        case none
        /// Dispose `cancelling` (the timer of a wait the event ended), if any; then the thread is the
        /// deliverer: it delivers `item`, then the queued ones.
        case deliver(Item, cancelling: Disposable?)
        /// Dispose this timer: the event that ended its wait was queued for the thread that delivers,
        /// or the timer was scheduled after its wait ended.
        case cancel(Disposable)
        /// Release this event, which came too late, and dispose `cancelling`, if any.
        case release(SignalEvent<T, E>, cancelling: Disposable?)
        /// The timer won: release its disposable, which may be a user scheduler's (whose `deinit` is user
        /// code), dispose the source, then start `alternate`.
        case switchToAlternate(releasing: Disposable?, alternate: Signal<T, E>)
        /// The subscription was disposed: dispose the timer, if any, and release the events not
        /// delivered and the alternate, if it was still held.
        case tearDown(timer: Disposable?, undelivered: ValueRing<SerialDelivery<Item>.Entry>, alternate: Signal<T, E>?)
        /// The source won the race for good (its first event, in first-event mode, or its terminal
        /// event): do `then`, then release the alternate, which can no longer start (what it captures
        /// may be user objects, whose `deinit` is user code). Once per subscription.
        indirect case retiringAlternate(Signal<T, E>, then: Action)
    }

    @usableFromInline let mode: Mode
    @usableFromInline var phase = Phase.watching(generation: 0, timer: nil)
    @usableFromInline var delivery = SerialDelivery<Item>()
    /// The signal to switch to, held while the timer can still win: in `.watching` only.
    @usableFromInline var alternate: Signal<T, E>?

    @inlinable init(mode: Mode, alternate: Signal<T, E>) {
        self.mode = mode
        self.alternate = alternate
    }

    /// The timer for the wait after value `generation` was scheduled: it is disposed at once when that
    /// wait already ended (a benign race).
    @inlinable mutating func timerArmed(after generation: UInt64, _ timer: Disposable) -> Action {
        guard case .watching(let current, nil) = self.phase, current == generation else { return .cancel(timer) }
        self.phase = .watching(generation: generation, timer: timer)
        return .none
    }

    /// The source sent `event`.
    @inlinable mutating func sourceSent(_ event: SignalEvent<T, E>) -> Action {
        switch self.phase {
        case .watching(let generation, let timer):
            if event.isTerminal {
                self.phase = .finished
                let action = self.submit((event, nil), cancelling: timer)
                return self.retiringAlternate(then: action)
            }
            switch self.mode {
            case .firstEvent:
                self.phase = .passing
                let action = self.submit((event, nil), cancelling: timer)
                return self.retiringAlternate(then: action)
            case .everyGap:
                self.phase = .watching(generation: generation + 1, timer: nil)
                return self.submit((event, generation + 1), cancelling: timer)
            }
        case .passing:
            if event.isTerminal { self.phase = .finished }
            return self.submit((event, nil), cancelling: nil)
        case .timedOut, .finished:
            return .release(event, cancelling: nil)
        }
    }

    /// The timer for the wait after value `generation` fired: the alternate takes over, unless the wait
    /// ended meanwhile (a benign race).
    @inlinable mutating func timerFired(after generation: UInt64) -> Action {
        guard case .watching(let current, let timer) = self.phase, current == generation, let alternate = self.alternate.take()
        else { return .none }
        self.phase = .timedOut
        return .switchToAlternate(releasing: timer, alternate: alternate)
    }

    /// Whether the timer won and the subscription has not ended since: the alternate is to be started.
    @inlinable var isTimedOut: Bool {
        if case .timedOut = self.phase { return true }
        return false
    }

    /// The alternate sent `event`.
    @inlinable mutating func alternateSent(_ event: SignalEvent<T, E>) -> Action {
        guard case .timedOut = self.phase else { return .release(event, cancelling: nil) }
        if event.isTerminal { self.phase = .finished }
        return self.submit((event, nil), cancelling: nil)
    }

    /// The deliverer's next event (see ``SerialDelivery/step(resuming:)``).
    @inlinable mutating func nextDelivery(resuming: Bool) -> SerialDeliveryStep<Item> {
        return self.delivery.step(resuming: resuming)
    }

    /// The subscription was disposed: hands back the timer and the undelivered events.
    @inlinable mutating func disposed() -> Action {
        var timer: Disposable?
        if case .watching(_, let current) = self.phase {
            timer = current
        }
        self.phase = .finished
        return .tearDown(timer: timer, undelivered: self.delivery.close(), alternate: self.alternate.take())
    }

    /// `action`, with the alternate handed out to be released after it: the phase has just left
    /// `.watching`, so the alternate can no longer start.
    @inlinable mutating func retiringAlternate(then action: Action) -> Action {
        guard let alternate = self.alternate.take() else { return action }
        return .retiringAlternate(alternate, then: action)
    }

    /// Queues `item` for delivery, in the critical section that decided it.
    @inlinable mutating func submit(_ item: Item, cancelling timer: Disposable?) -> Action {
        switch self.delivery.submit(item) {
        case .deliverNow(let item):
            return .deliver(item, cancelling: timer)
        case .queued:
            return timer.map { .cancel($0) } ?? .none
        case .refused(let item):
            return .release(item.event, cancelling: timer)
        }
    }
}
