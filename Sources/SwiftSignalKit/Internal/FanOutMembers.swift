// The subscribers of a hot source, broadcast to outside its lock: the one member list and delivery
// loop behind ``ValuePipe`` and the fan-out engine (``FanOutState``, behind ``Promise``,
// ``ValuePromise``, ``ReplayingValuePipe``, ``Multicast`` and ``share(replay:connection:)``), which
// orders its broadcasts through a ``SerialDelivery`` on top of it.
//
// A source keeps an `OrderedSlots<FanOutMember>` under its lock, copies it in the critical section
// that decides on an event (the copy only retains the list's storage), and calls ``OrderedSlots/broadcast(_:publishedAs:failing:)``
// on the copy after unlocking.

/// A subscriber of a hot source. Not generic, and not nested in a generic type (the subscriber is
/// stored as `AnyObject & Sendable`, and is always a `Subscriber<T, E>` of the source's own types), so
/// that copying and iterating the members is concrete code: in this module's unspecialised generic code
/// a generic element type costs a metadata lookup per step.
@usableFromInline struct FanOutMember: Sendable {
    /// Owns the subscriber.
    @usableFromInline let object: any AnyObject & Sendable
    /// The same subscriber's address (an integer, so that the struct stays Sendable): a broadcast reads
    /// only this field and `joinedAfter`, so that looking at a member does not retain and release it
    /// (the broadcast's snapshot of the members owns it).
    @usableFromInline let address: UInt
    /// The sequence number of the last broadcast published before this member joined (`0` for a source
    /// that does not number its broadcasts, which publishes each as `.max`).
    @usableFromInline let joinedAfter: UInt64

    @inlinable init<T, E>(_ subscriber: Subscriber<T, E>, joinedAfter: UInt64) {
        self.object = subscriber
        self.address = UInt(bitPattern: Unmanaged.passUnretained(subscriber).toOpaque())
        self.joinedAfter = joinedAfter
    }

    @inlinable init(object: any AnyObject & Sendable, address: UInt, joinedAfter: UInt64) {
        self.object = object
        self.address = address
        self.joinedAfter = joinedAfter
    }

    /// The same member, ended: no broadcast reaches it any more.
    @inlinable func ended() -> FanOutMember {
        return FanOutMember(object: self.object, address: self.address, joinedAfter: .max)
    }

    /// The subscriber, which must be a `Subscriber<T, E>`.
    @inlinable func subscriber<T, E>(of type: T.Type, failing: E.Type) -> Subscriber<T, E> {
        return unsafeDowncast(self.object, to: Subscriber<T, E>.self)
    }
}

extension OrderedSlots where Element == FanOutMember {
    /// Delivers `value` to each member that joined before broadcast number `sequence`, in order. Call
    /// outside every lock, on a snapshot of the members: the snapshot owns them while this runs.
    ///
    /// Every member must be a `Subscriber<T, E>`.
    @inlinable
    func broadcast<T, E>(_ value: T, publishedAs sequence: UInt64, failing: E.Type) {
        // Each member is used at +0 (its address, not its owning reference, is read), which saves a
        // retain and a release, two atomic operations, per member and value.
        self.entries.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                guard let joinedAfter = entries[index].element?.joinedAfter, joinedAfter < sequence,
                    let address = entries[index].element?.address, let object = UnsafeRawPointer(bitPattern: address)
                else { continue }
                Unmanaged<Subscriber<T, E>>.fromOpaque(object)._withUnsafeGuaranteedRef { subscriber in
                    subscriber.putNext(value)
                }
            }
        }
    }

    /// ``broadcast(_:publishedAs:failing:)`` to members that are `Subscriber<T, NoError>`.
    @inlinable
    func broadcast<T>(_ value: T, publishedAs sequence: UInt64) {
        self.broadcast(value, publishedAs: sequence, failing: NoError.self)
    }
}
