/// Moves a value that is not `Sendable` across an isolation boundary.
///
/// Used only where the library can show that the value is touched by one thread at a time (the one use:
/// an error moved to a queue and used once there, the sender keeping no copy). Each use site says why
/// it is safe.
@usableFromInline struct UnsafeTransfer<Value>: @unchecked Sendable {
    // Safe by contract: see the type's comment; every use documents its own confinement.
    @usableFromInline var value: Value
    @inlinable init(_ value: Value) { self.value = value }
}
