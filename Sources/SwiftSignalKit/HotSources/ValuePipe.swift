import Synchronization

/// A hot pipe: values put in are sent to the current subscribers, and nothing is stored.
///
/// ```swift
/// let events = ValuePipe<String>()
/// let disposable = events.signal().start(next: { print($0) })
/// events.putNext("connected") // prints "connected"
/// ```
///
/// A subscriber sees only values put after it subscribed. ``putNext(_:)`` delivers on the calling thread,
/// to subscribers in the order they subscribed, outside any lock; values put concurrently from several
/// threads may reach a subscriber concurrently. A value put from a subscriber's callback is delivered
/// there and then, so the subscribers after that one get it before the value being delivered, as in the
/// original library; ``ReplayingValuePipe`` and the promises deliver such a value after the current one.
///
/// The signal does not keep the pipe alive. Once the pipe is released, it lets go of its subscribers,
/// without an event, as the original library's did, and a subscription made afterwards receives
/// nothing. So a subscription with callbacks only that is never disposed keeps nothing for good; one
/// through operators (`map` included) holds itself through its own links until it is disposed, as in
/// the original. The pipe's hold on its subscribers ends on the thread that releases the pipe; a
/// subscriber, and what its callbacks capture, is released there unless something else still holds it
/// (the disposable `start` returned is the subscriber: a kept one holds it until it is disposed).
public final class ValuePipe<T>: Sendable {
    /// Each element holds a `Subscriber<T, NoError>` type-erased (``FanOutMember``, shared with the
    /// promises' fan-out) so that the list and its iteration are concrete code: in this module's
    /// unspecialised generic code, a list of a generic element type looks up type metadata on every copy
    /// and every step of iteration.
    @usableFromInline let subscribers = LockedState<OrderedSlots<FanOutMember>>(OrderedSlots())

    #if DEBUG
        /// Debug builds: values put while no sequence (`values`) was subscribed, for the message a
        /// sequence that subscribes afterwards prints (see ``signal()``).
        @usableFromInline let unheard = UnheardValues()
    #endif

    /// Creates a pipe with no subscribers.
    public init() {}

    deinit {
        // Each member's subscriber holds its membership, which holds the list: a subscription that is
        // never disposed would keep that cycle, and whatever its callbacks capture, for good once nobody
        // can put into the pipe (a probe, 2026-12-02). The original held the pipe weakly, so its list
        // went with it. No `putNext`, and so no broadcast, is under way: each holds the pipe. Released
        // after unlocking.
        let members = self.subscribers.withLock { $0.close() }
        withExtendedLifetime(members) {}
    }

    /// A signal of the values put after subscription. It never completes.
    ///
    /// - Returns: A hot signal.
    @inlinable public func signal() -> Signal<T, NoError> {
        // The signal holds the subscriber list, not the pipe, so it does not keep the pipe alive. (It used
        // to hold the pipe weakly; a weak reference gives the pipe a side table, which made every retain
        // and release of it take the runtime's slow path.) A subscription made after the pipe is gone
        // finds the list closed (see `deinit`) and gets nothing.
        let subscribers = self.subscribers
        #if DEBUG
            let unheard = self.unheard
        #endif
        return Signal { subscriber in
            let joined = subscribers.withLock { list -> Int? in
                list.isClosed ? nil : list.add(FanOutMember(subscriber, joinedAfter: 0))
            }
            guard let key = joined else { return EmptyDisposable }
            #if DEBUG
                // After joining, so that the count is of every value the sequence missed: values put
                // while the message was being printed would be missed too, and uncounted.
                if SequenceSubscription.isSubscribing {
                    unheard.loopJoined(asLaterIterator: SequenceSubscription.isLaterIterator)
                    return ValuePipeMembership(list: subscribers, key: key, loopOf: unheard)
                }
            #endif
            return ValuePipeMembership(list: subscribers, key: key)
        }
    }

    /// Sends `next` to every current subscriber.
    ///
    /// - Parameter next: The value.
    @inlinable public func putNext(_ next: T) {
        // Copying the list only retains its storage; it is iterated after unlocking.
        let targets = self.subscribers.withLock { $0 }
        #if DEBUG
            self.unheard.valuePut()
        #endif
        targets.broadcast(next, publishedAs: .max)
    }
}

#if DEBUG
    /// Debug builds: how many values a pipe put while no sequence (`values`) was subscribed to it, whatever
    /// callback subscribers it had, and whether it has said so. A callback subscriber that joins late may
    /// mean to; a loop that joins late is the newcomer's lost first values.
    ///
    /// Atomics, not a lock: `putNext` already takes the pipe's list lock, and the count must not add a
    /// second lock round trip per value. The figures are a hint printed once, so relaxed ordering does.
    @usableFromInline final class UnheardValues: Sendable {
        @usableFromInline let count = Synchronization.Atomic<Int>(0)
        /// The sequences subscribed now.
        @usableFromInline let loops = Synchronization.Atomic<Int>(0)
        @usableFromInline let hasReported = Synchronization.Atomic<Bool>(false)

        @inlinable init() {}

        /// A value was put: counted while no sequence is subscribed.
        @inlinable func valuePut() {
            if self.loops.load(ordering: .relaxed) == 0 {
                self.count.add(1, ordering: .relaxed)
            }
        }

        /// A sequence's subscription left the pipe.
        @inlinable func loopLeft() {
            self.loops.subtract(1, ordering: .relaxed)
        }

        /// Called when a sequence (`values`) has joined the pipe: if the pipe has put values while no
        /// sequence was subscribed, says once (per pipe) that a sequence made after the producer started
        /// misses them, and how to keep them. `asLaterIterator`: the subscription is not the one the
        /// sequence made when it was made, but a later loop's over the same sequence.
        @usableFromInline func loopJoined(asLaterIterator: Bool) {
            self.loops.add(1, ordering: .relaxed)
            let missed = self.count.load(ordering: .relaxed)
            guard missed > 0, !self.hasReported.exchange(true, ordering: .relaxed) else { return }
            if asLaterIterator {
                debugDiagnostic(
                    "a second loop over the same values sequence subscribed to a ValuePipe that had already put \(missed) "
                        + "value(s) while no sequence was subscribed (values the first loop had not yet taken went with "
                        + "its subscription when it ended); only the first loop over a sequence uses the "
                        + "subscription made with it, and each later loop subscribes again when it begins, seeing only "
                        + "values put after that. Make one sequence per loop, each before the producer starts. "
                        + "Printed once per pipe."
                )
                return
            }
            debugDiagnostic(
                "a sequence (values) subscribed to a ValuePipe that had already put \(missed) value(s) while no sequence "
                    + "was subscribed (callback subscribers may have had them); "
                    + "the sequence sees only values put after it is made. If the loop must see them, make the sequence "
                    + "before the producer starts (let values = signal.values; start the producer; for await ... in values), "
                    + "not inside a task started just before the producer. Printed once per pipe."
            )
        }
    }

    /// Debug builds: set on the subscribing thread while a sequence (`values`) subscribes, so that a hot
    /// source reached synchronously through the operators in between can tell that its new subscriber
    /// is a loop (see `UnheardValues`). A thread-local value, not a task-local one: tasks that the
    /// subscription starts (a generator's, `Signal(sequence)`'s) must not inherit it, or their own
    /// plain subscriptions would read as a loop's.
    @usableFromInline package enum SequenceSubscription {
        @usableFromInline static let slot = ThreadSpecificSlot()

        @usableFromInline package static var isSubscribing: Bool {
            return Self.slot.value != nil
        }

        /// Whether the sequence subscribing is a later iterator's (see `marking(asLaterIterator:_:)`).
        @usableFromInline package static var isLaterIterator: Bool {
            return Self.slot.value == UnsafeMutableRawPointer(bitPattern: 2)
        }

        /// Runs `subscribe` (a sequence's subscription) with ``isSubscribing`` set on this thread;
        /// `asLaterIterator`: the subscription of a loop over a sequence whose first loop took the one
        /// made with it.
        @usableFromInline package static func marking<R>(asLaterIterator: Bool = false, _ subscribe: () -> R) -> R {
            return Self.slot.withValue(UnsafeRawPointer(bitPattern: asLaterIterator ? 2 : 1), subscribe)
        }
    }
#endif

@usableFromInline final class ValuePipeMembership: Disposable {
    @usableFromInline let list: LockedState<OrderedSlots<FanOutMember>>
    @usableFromInline let key: Int
    #if DEBUG
        /// Debug builds: the pipe's count of subscribed sequences, when this membership is a sequence's.
        @usableFromInline let loopOf: UnheardValues?
    #endif

    @inlinable init(list: LockedState<OrderedSlots<FanOutMember>>, key: Int) {
        self.list = list
        self.key = key
        #if DEBUG
            self.loopOf = nil
        #endif
    }

    #if DEBUG
        @inlinable init(list: LockedState<OrderedSlots<FanOutMember>>, key: Int, loopOf: UnheardValues) {
            self.list = list
            self.key = key
            self.loopOf = loopOf
        }
    #endif

    /// Removes the subscriber; later calls find nothing to remove.
    @inlinable func dispose() {
        let removed = self.list.withLock { $0.remove(self.key) }
        #if DEBUG
            if removed != nil { self.loopOf?.loopLeft() }
        #endif
        // The subscriber is released here, after unlocking.
        withExtendedLifetime(removed) {}
    }
}
