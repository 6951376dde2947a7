/// Room for values at the end of a chain, for a producer that can wait for it.
///
/// A consumer that paces its producers (a `for await` loop over `values(bufferingPolicy: .bounded(n))`)
/// attaches one to the subscriber it starts. Operators that hand each value on synchronously, on the
/// thread that sent it (`map`, `filter`, `take`, `skip`, `beforeNext`, ...), let a producer upstream find
/// it through ``Subscriber/demand``; operators that buffer, hop threads or combine do not, and a
/// producer above them never waits. A synchronous `putNext` never waits either: only producers that
/// can suspend ask.
@usableFromInline package protocol SignalDemand: AnyObject, Sendable {
    /// Returns once the consumer has room for one more value, or has gone; at once when the calling
    /// task is cancelled. A value sent after it returns true is not dropped for want of room.
    ///
    /// - Returns: false when the consumer has gone: its iteration is over, a value sent now is dropped,
    ///   and the subscription is being disposed (the disposal that cancels a producer's task may land a
    ///   moment later). A producer that pulls its values (`Signal(sequence)`) stops pulling then.
    func waitForRoom() async -> Bool
}
