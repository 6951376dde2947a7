import Dispatch

/// A one-shot or repeating timer that fires on a ``Queue``.
///
/// ```swift
/// let timer = Timer(timeout: 1.0, repeat: true, completion: { print("tick") }, queue: Queue())
/// timer.start()
/// // later
/// timer.invalidate()
/// ```
///
/// The timer does not keep itself alive: keep a reference while it should fire (releasing it
/// invalidates it). A one-shot timer invalidates itself after firing. ``start()`` on a started timer
/// restarts it.
public final class Timer: Sendable {
    private let source = LockedState<DispatchSourceTimerBox?>(nil)
    private let timeout: Double
    private let `repeat`: Bool
    private let completion: @Sendable (Timer) -> Void
    private let queue: Queue

    /// Creates a timer whose handler takes no arguments.
    ///
    /// - Parameters:
    ///   - timeout: Seconds until it fires, and between firings when repeating.
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`.
    ///   - queue: Where the handler runs.
    @preconcurrency public init(timeout: Double, `repeat`: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.timeout = timeout
        self.`repeat` = `repeat`
        self.completion = { _ in completion() }
        self.queue = queue
    }

    /// Creates a timer whose handler receives the timer.
    ///
    /// - Parameters:
    ///   - timeout: Seconds until it fires, and between firings when repeating.
    ///   - repeat: Whether it fires repeatedly.
    ///   - completion: The handler, run on `queue`; it may call ``invalidate()``.
    ///   - queue: Where the handler runs.
    @preconcurrency public init(timeout: Double, `repeat`: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue) {
        self.timeout = timeout
        self.`repeat` = `repeat`
        self.completion = completion
        self.queue = queue
    }

    deinit {
        self.invalidate()
    }

    /// Starts (or restarts) the timer.
    public func start() {
        let timer = DispatchSource.makeTimerSource(queue: self.queue.queue)
        let box = DispatchSourceTimerBox(timer)
        timer.setEventHandler { [weak self, weak box] in
            guard let self, let box else { return }
            // A handler that was queued before `invalidate()` must not run after it.
            guard self.source.withLock({ $0 === box }) else { return }
            self.completion(self)
            if !self.repeat {
                self.invalidate(ifCurrent: box)
            }
        }
        let deadline = DispatchTime.now() + self.timeout
        if self.repeat {
            timer.schedule(deadline: deadline, repeating: self.timeout)
        } else {
            timer.schedule(deadline: deadline)
        }
        let previous = self.source.withLock { current -> DispatchSourceTimerBox? in
            let previous = current
            current = box
            return previous
        }
        previous?.timer.cancel()
        timer.resume()
    }

    /// Stops the timer. A handler already running finishes; none starts afterwards.
    public func invalidate() {
        let previous = self.source.withLock { current -> DispatchSourceTimerBox? in
            let previous = current
            current = nil
            return previous
        }
        previous?.timer.cancel()
    }

    private func invalidate(ifCurrent box: DispatchSourceTimerBox) {
        let cancelled = self.source.withLock { current -> Bool in
            guard current === box else { return false }
            current = nil
            return true
        }
        if cancelled {
            box.timer.cancel()
        }
    }
}

/// A dispatch timer source, held by reference so a handler can tell whether its source is still current.
final class DispatchSourceTimerBox: @unchecked Sendable {
    // Safe: `timer` is immutable after init, and DispatchSource methods are thread-safe.
    let timer: DispatchSourceTimer

    init(_ timer: DispatchSourceTimer) {
        self.timer = timer
    }
}
