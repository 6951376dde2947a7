/// Switches to `alternate` when the source leaves a gap of more than `interval` seconds: before its
/// first event, or after any value.
///
/// ```
/// source:              -a--b------c|
/// alternate:           #
/// timeout(perValue: 3) -a--b--#
/// ```
///
/// The wait starts at subscription and starts again after each value has been delivered. When it runs
/// out, the source is disposed and `alternate` is started; pass `.fail(error)` to fail instead. A source
/// event that races with the timer is dropped if the timer won. ``timeout(_:scheduler:alternate:)-(Double,_,_)``
/// bounds only the wait for the first event.
///
/// ```swift
/// let feed = quotes |> timeout(perValue: 30, scheduler: Queue.concurrentDefaultQueue(), alternate: .fail(.stalled))
/// ```
///
/// `interval` is checked when the operator is made: `+infinity` never times out (the result is the
/// source itself), 0 or negative times out as soon as the scheduler runs the wait unless the source
/// sends first, above 100 years waits 100 years, and NaN is a precondition failure naming the argument
/// and the value.
///
/// - Parameters:
///   - interval: The longest gap, in seconds.
///   - scheduler: Where the gaps are measured and `alternate` starts; a ``Queue`` by default, a
///     virtual-time scheduler in tests.
///   - alternate: The signal to switch to.
/// - Returns: An operator for `|>`.
public func timeout<T, E, S: SignalScheduler>(
    perValue interval: Double, scheduler: S = Queue.concurrentDefaultQueue(), alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    let wait = TimeIntervalValidation.wait(interval, as: .delay, api: "timeout(perValue:scheduler:alternate:)", argument: "interval")
    guard case .seconds(let seconds) = wait else {
        return { signal in signal }
    }
    return { signal in
        return Signal { subscriber in
            let watch = GapWatch(seconds: seconds, scheduler: scheduler)
            let source = MetaDisposable()
            let fallback = MetaDisposable()
            let timedOut: @Sendable () -> Void = {
                source.dispose()
                fallback.set(alternate.start(forwardingTo: subscriber))
            }
            watch.arm(after: 0, onTimeout: timedOut)
            source.set(
                signal.start(
                    linkedTo: subscriber,
                    next: { value in
                        guard let generation = watch.sourceSentValue() else { return }
                        subscriber.putNext(value)
                        watch.arm(after: generation, onTimeout: timedOut)
                    },
                    error: { error in
                        guard watch.sourceEnded() else { return }
                        subscriber.putError(error)
                    },
                    completed: {
                        guard watch.sourceEnded() else { return }
                        subscriber.putCompletion()
                    }))
            return ActionDisposable {
                watch.cancel()
                source.dispose()
                fallback.dispose()
            }
        }
    }
}

/// The timer of ``timeout(perValue:scheduler:alternate:)``: one wait at a time, numbered, so that a
/// wait replaced by a later value, or one that fires after the end, does nothing.
final class GapWatch<S: SignalScheduler>: Sendable {
    private struct State: Sendable {
        /// The number of values admitted; a wait armed after value `n` carries `n`.
        var generation: UInt64 = 0
        var timer: Disposable?
        var isOver = false
    }

    private let state = LockedState(State())
    private let seconds: Double
    private let scheduler: S

    init(seconds: Double, scheduler: S) {
        self.seconds = seconds
        self.scheduler = scheduler
    }

    /// A value arrived: returns its number, or nil when the timer already won.
    func sourceSentValue() -> UInt64? {
        let (generation, timer) = self.state.withLock { state -> (UInt64?, Disposable?) in
            guard !state.isOver else { return (nil, nil) }
            state.generation += 1
            let timer = state.timer
            state.timer = nil
            return (state.generation, timer)
        }
        timer?.dispose()
        return generation
    }

    /// The source ended: returns whether to pass the event on (the timer has not won).
    func sourceEnded() -> Bool {
        let (passOn, timer) = self.state.withLock { state -> (Bool, Disposable?) in
            guard !state.isOver else { return (false, nil) }
            state.isOver = true
            let timer = state.timer
            state.timer = nil
            return (true, timer)
        }
        timer?.dispose()
        return passOn
    }

    /// Starts the wait that follows value `generation` (0: the subscription).
    func arm(after generation: UInt64, onTimeout: @escaping @Sendable () -> Void) {
        let timer = self.scheduler.schedule(after: self.seconds) { [self] in
            let fired = self.state.withLock { state -> Bool in
                guard !state.isOver, state.generation == generation else { return false }
                state.isOver = true
                state.timer = nil
                return true
            }
            if fired {
                onTimeout()
            }
        }
        let unwanted = self.state.withLock { state -> Disposable? in
            guard !state.isOver, state.generation == generation else { return timer }
            state.timer = timer
            return nil
        }
        unwanted?.dispose()
    }

    /// The subscription was disposed.
    func cancel() {
        let timer = self.state.withLock { state -> Disposable? in
            state.isOver = true
            let timer = state.timer
            state.timer = nil
            return timer
        }
        timer?.dispose()
    }
}
