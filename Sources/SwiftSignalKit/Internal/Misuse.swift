/// Stops the process because the caller used an API in a way that has no meaning (a NaN timeout, a
/// negative buffer size, a queue-confined object reached off its queue), with a message that names the
/// API, the argument and the value.
///
/// `fatalError`, not `precondition`: an optimised build drops a precondition's message, and the library
/// is normally compiled optimised in the applications that use it, where the message matters most.
///
/// `package`: shared with the concurrency bridges, not API.
@usableFromInline package func misuse(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("SwiftSignalKit: \(message)", file: file, line: line)
}
