#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The library's one serial delivery mechanism: events that an operator decides on under its lock, on
/// any number of threads, reach its subscriber one at a time, in the order they were decided, outside
/// the lock, and nobody waits for anybody.
///
/// `package`: shared with the other modules of this package, not API.
///
/// The engine lives inside the operator's locked state. A thread that decides on an event calls
/// ``submit(_:)`` under the same lock as the decision, so the queue's order is the order of the
/// decisions. If nobody is delivering, the caller becomes the *deliverer*: it delivers its event after
/// unlocking, then asks ``next()`` for what other threads (or its own callbacks, re-entrantly) submitted
/// meanwhile, until the queue is empty. A thread that finds a deliverer queues its event and returns.
///
/// **Fairness.** A deliverer delivers at most ``othersAllowance`` events that *other* threads queued;
/// then ``next()`` answers ``SerialDeliveryStep/handOff`` and the role passes to a task on the
/// operator's ``SignalScheduler``, which calls ``resume()``. Events that the deliverer's own callbacks
/// queue (a feedback loop that sends into the same operator) do not count, so a loop alone stays on
/// that thread, in order, as it would without the operator. Order comes first: once other threads'
/// events reach the bound, the whole queue is handed off, fed-back events included. So a thread that sends one value is never kept busy
/// delivering other threads' values without end, and a scheduler that runs tasks in virtual time runs
/// the hand-off when a test advances it.
///
/// **Closing.** ``close()`` (disposal) empties the queue, handing its events back to be released after
/// unlocking; a deliverer at work stops after the event it is delivering, and later submissions are
/// refused, handed back the same way.
///
/// Hosts: ``SerialDeliveryHost`` runs the deliverer's loop and the hand-off for an operator.
@usableFromInline package struct SerialDelivery<Item> {
    /// A queued event, with whether a thread other than the deliverer queued it.
    @usableFromInline package struct Entry {
        @usableFromInline package var item: Item
        @usableFromInline package var queuedByOther: Bool

        @inlinable package init(item: Item, queuedByOther: Bool) {
            self.item = item
            self.queuedByOther = queuedByOther
        }
    }

    /// What ``submit(_:)`` did with an event.
    @usableFromInline package enum Submission {
        /// The caller is the deliverer now: deliver this event after unlocking, then call ``next()``.
        case deliverNow(Item)
        /// Queued for the current deliverer.
        case queued
        /// The engine is closed: release the event after unlocking.
        case refused(Item)
    }

    // The engine's invariants (`queue`, `deliverer`, `othersDelivered`) are internal: only the engine's
    // own members change them, and the other modules go through those members. `@usableFromInline`
    // only because those members are inlinable (see "Which code is `@inlinable`" in CONTRIBUTING.md).
    @usableFromInline var queue = ValueRing<Entry>()
    /// The deliverer's thread; ``idle`` when nobody delivers, ``handedOff`` while a scheduler task is
    /// about to take the role.
    @usableFromInline var deliverer: UInt = SerialDelivery.idle
    /// How many events queued by other threads the current deliverer has delivered.
    @usableFromInline var othersDelivered: Int32 = 0
    @usableFromInline package private(set) var isClosed = false
    /// Whether an idle delivery keeps its queue's storage: for operators whose every event is queued
    /// (they ``post(_:)``), so that a steady stream allocates nothing; the others free it, so that an
    /// idle subscription holds no queue storage.
    @usableFromInline package let keepsStorage: Bool

    @inlinable package static var idle: UInt { 0 }
    @inlinable package static var handedOff: UInt { 1 }

    /// How many events queued by other threads a deliverer delivers before it hands the role to the
    /// operator's scheduler. Enough that ordinary contention never leaves the sending threads; small
    /// enough that a thread sending one value returns within a bounded amount of other threads' work.
    @inlinable package static var othersAllowance: Int32 { 64 }

    /// - Parameter keepingStorage: Keep the queue's storage while idle (see ``keepsStorage``).
    @inlinable package init(keepingStorage: Bool = false) {
        self.keepsStorage = keepingStorage
    }

    /// Whether someone (a thread, or a scheduled hand-off) holds the deliverer's role.
    @inlinable package var isDelivering: Bool { self.deliverer != SerialDelivery.idle }

    /// Queues `item` behind everything submitted before it, or makes the caller the deliverer.
    @inlinable package mutating func submit(_ item: Item) -> Submission {
        if self.isClosed {
            return .refused(item)
        }
        let thread = currentThreadIdentifier()
        if self.claimIfIdle(thread) {
            // Nobody delivered, so the queue is empty: the caller delivers `item` without queueing it.
            return .deliverNow(item)
        }
        self.queue.append(Entry(item: item, queuedByOther: self.deliverer != thread))
        return .queued
    }

    /// Queues `item` behind everything submitted before it; returns true when the caller has become the
    /// deliverer and must call ``SerialDeliveryHost/deliverQueued()`` after unlocking. For hosts that
    /// queue several events in one critical section (a last value and the completion); the host's own
    /// state must stop it posting once it has closed the engine.
    @inlinable package mutating func post(_ item: Item) -> Bool {
        precondition(!self.isClosed, "SerialDelivery posted to after it was closed")
        let thread = currentThreadIdentifier()
        let claimed = self.claimIfIdle(thread)
        self.queue.append(Entry(item: item, queuedByOther: self.deliverer != thread))
        return claimed
    }

    /// Makes the caller the deliverer without an event, for a host that delivers something of its own
    /// first (a promise's replay); it must call ``next()`` afterwards. Only when nobody delivers.
    @inlinable package mutating func claim() {
        let claimed = self.claimIfIdle(currentThreadIdentifier())
        precondition(claimed, "SerialDelivery claimed while someone delivers")
    }

    /// Makes `thread` the deliverer, with a fresh allowance, if nobody holds the role; returns whether
    /// it did.
    @inlinable package mutating func claimIfIdle(_ thread: UInt) -> Bool {
        guard self.deliverer == SerialDelivery.idle else { return false }
        self.deliverer = thread
        self.othersDelivered = 0
        return true
    }

    /// The deliverer's next event; or the role handed off, or given up when the queue is empty.
    @inlinable package mutating func next() -> SerialDeliveryStep<Item> {
        guard !self.queue.isEmpty else {
            self.deliverer = SerialDelivery.idle
            if !self.keepsStorage && !self.queue.slots.isEmpty {
                // Every slot is empty, so freeing them releases no event: an idle subscription keeps
                // no queue storage.
                self.queue = ValueRing()
            }
            return .idle
        }
        if self.queue.slots[self.queue.head]!.queuedByOther {
            guard self.othersDelivered < SerialDelivery.othersAllowance else {
                self.deliverer = SerialDelivery.handedOff
                return .handOff
            }
            self.othersDelivered += 1
        }
        return .deliver(self.queue.removeFirst().item)
    }

    /// ``next()``, or ``resume()`` for a hand-off task.
    @inlinable package mutating func step(resuming: Bool) -> SerialDeliveryStep<Item> {
        return resuming ? self.resume() : self.next()
    }

    /// The scheduler task that a ``SerialDeliveryStep/handOff`` started takes the role.
    @inlinable package mutating func resume() -> SerialDeliveryStep<Item> {
        precondition(self.deliverer == SerialDelivery.handedOff, "SerialDelivery resumed without a hand-off")
        self.deliverer = currentThreadIdentifier()
        self.othersDelivered = 0
        return self.next()
    }

    /// Empties the queue, keeping the engine open and the deliverer's role where it is (a failure that
    /// overtakes queued results); returns the queued events, to be released after unlocking.
    @inlinable package mutating func removeQueued() -> ValueRing<Entry> {
        var dropped = ValueRing<Entry>()
        swap(&dropped, &self.queue)
        return dropped
    }

    /// Empties the queue and refuses later events; returns the queued events, to be released after
    /// unlocking.
    @inlinable package mutating func close() -> ValueRing<Entry> {
        self.isClosed = true
        return self.removeQueued()
    }
}

extension SerialDelivery: Sendable where Item: Sendable {}
extension SerialDelivery.Entry: Sendable where Item: Sendable {}
extension SerialDelivery.Submission: Sendable where Item: Sendable {}

/// What a deliverer does next.
@usableFromInline package enum SerialDeliveryStep<Item> {
    /// Deliver this event, then ask again.
    case deliver(Item)
    /// Return: a task on the operator's scheduler takes over (``SerialDelivery/resume()``).
    case handOff
    /// Return: the queue is empty and the role is given up.
    case idle

    @inlinable package func map<Other>(_ transform: (Item) -> Other) -> SerialDeliveryStep<Other> {
        switch self {
        case .deliver(let item):
            return .deliver(transform(item))
        case .handOff:
            return .handOff
        case .idle:
            return .idle
        }
    }
}

extension SerialDeliveryStep: Sendable where Item: Sendable {}

/// The thread that runs the caller, as an integer that is never ``SerialDelivery/idle`` or
/// ``SerialDelivery/handedOff`` (a thread's identifier is the address of its control block).
@inlinable package func currentThreadIdentifier() -> UInt {
    #if canImport(Glibc)
        return UInt(pthread_self())
    #else
        return UInt(bitPattern: pthread_self())
    #endif
}

/// An operator (or one subscriber of a hot source) that delivers through a ``SerialDelivery``: it says
/// how to take the next event under its lock and how to deliver one, and gets the deliverer's loop and
/// the hand-off, written once here.
@usableFromInline package protocol SerialDeliveryHost: Sendable {
    associatedtype Delivery

    /// Under the host's lock: the engine's ``SerialDelivery/next()``, or ``SerialDelivery/resume()``
    /// when `resuming` (a hand-off task starts), with whatever bookkeeping the host does as an event
    /// leaves its queue.
    func nextDelivery(resuming: Bool) -> SerialDeliveryStep<Delivery>

    /// Delivers one event; called outside every lock, by the deliverer only.
    func deliver(_ delivery: Delivery)

    /// Where the deliverer's role goes after ``SerialDelivery/othersAllowance``: the operator's own
    /// scheduler when it has one.
    var handOffScheduler: any SignalScheduler { get }
}

extension SerialDeliveryHost {
    /// The global concurrent queue, for operators that take no scheduler.
    @inlinable package var handOffScheduler: any SignalScheduler { Queue.concurrentDefaultQueue() }

    /// The deliverer's loop: delivers `first` (which ``SerialDelivery/submit(_:)`` answered with
    /// ``SerialDelivery/Submission/deliverNow(_:)``), then what was queued meanwhile, until the queue is
    /// empty or the role is handed off.
    @inlinable package func deliverSerially(startingWith first: consuming Delivery) {
        var delivery = first
        while true {
            self.deliver(delivery)
            switch self.nextDelivery(resuming: false) {
            case .deliver(let next):
                delivery = next
            case .handOff:
                self.handOff()
                return
            case .idle:
                return
            }
        }
    }

    /// Delivers what was queued meanwhile, for a deliverer that delivered something of its own first
    /// (after ``SerialDelivery/claim()``, or a ``SerialDelivery/post(_:)`` that made it the deliverer).
    @inlinable package func deliverQueued() {
        self.continueDelivering(after: self.nextDelivery(resuming: false))
    }

    /// Acts on what ``SerialDelivery/submit(_:)`` answered (or nil: nothing was submitted), after
    /// unlocking: delivers, or releases a refused event.
    @inlinable package func handle(_ submission: SerialDelivery<Delivery>.Submission?) {
        switch submission {
        case .deliverNow(let delivery):
            self.deliverSerially(startingWith: delivery)
        case .refused(let delivery):
            withExtendedLifetime(delivery) {}
        case .queued, nil:
            break
        }
    }

    @inlinable package func continueDelivering(after step: SerialDeliveryStep<Delivery>) {
        switch step {
        case .deliver(let next):
            self.deliverSerially(startingWith: next)
        case .handOff:
            self.handOff()
        case .idle:
            break
        }
    }

    /// Passes the deliverer's role to a task on ``handOffScheduler``.
    @usableFromInline package func handOff() {
        self.handOffScheduler.schedule {
            self.continueDelivering(after: self.nextDelivery(resuming: true))
        }
    }
}
