/// The consumer at the end of a chain: room for values, for a producer that can wait for it, and
/// whether the consumer has gone.
///
/// A consumer that paces its producers (a `for await` loop over `values(bufferingPolicy: .bounded(n))`)
/// attaches one to the subscriber it starts. Operators that hand each value on synchronously, on the
/// thread that sent it (`map`, `filter`, `take`, `skip`, `beforeNext`, ...), let a producer upstream find
/// it through ``Subscriber/demand``; operators that buffer, hop threads or combine do not, and a
/// producer above them never waits. A synchronous `putNext` never waits either: only producers that
/// can suspend ask.
///
/// A consumer that can end while its subscription is still starting (a loop over `.endingWhenFull(n)`,
/// an async operator whose own consumer may end) attaches one too, with ``pacesProducers`` false if it
/// does not pace: a loop that runs inside a generator (`restart` of a synchronous signal) runs before
/// the subscription's disposable exists, and learns that the consumer has gone only by asking
/// ``Subscriber/isTerminated``, which asks ``consumerHasGone`` through the same operators.
@usableFromInline package protocol SignalDemand: AnyObject, Sendable {
    /// Whether producers that can wait should ask ``waitForRoom()``: false for a consumer attached only
    /// so that a loop upstream learns that it has gone (``Subscriber/demand`` is then nil).
    var pacesProducers: Bool { get }

    /// Whether the consumer has gone: its iteration is over, or its subscription is being disposed, and
    /// a value sent now is dropped. Asked outside every lock of the library, by
    /// ``Subscriber/isTerminated``.
    var consumerHasGone: Bool { get }

    /// Returns once the consumer has room for one more value, or has gone; at once when the calling
    /// task is cancelled. A value sent after it returns true is not dropped for want of room.
    ///
    /// - Returns: false when the consumer has gone: its iteration is over, a value sent now is dropped,
    ///   and the subscription is being disposed (the disposal that cancels a producer's task may land a
    ///   moment later). A producer that pulls its values (`Signal(sequence)`) stops pulling then.
    func waitForRoom() async -> Bool
}
