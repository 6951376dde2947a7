#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Messages a debug build prints when a program uses the library in a way that works but is likely not
    /// what was meant, and loses values or ends early because of it (a sequence made after a hot source
    /// sent, a `.bounded` loop whose producer cannot wait). Release builds print nothing and keep nothing.
    ///
    /// `package`: the concurrency bridges print them too; tests read them through ``observe(_:)``.
    package enum DebugDiagnostics {
        @usableFromInline struct Observers: Sendable {
            @usableFromInline var byKey: [Int: @Sendable (String) -> Void] = [:]
            @usableFromInline var nextKey = 0
        }

        @usableFromInline static let observers = LockedState(Observers())

        /// Calls `observer` with each message printed from now until the returned closure is called.
        package static func observe(_ observer: @escaping @Sendable (String) -> Void) -> @Sendable () -> Void {
            let key = Self.observers.withLock { observers in
                defer { observers.nextKey += 1 }
                observers.byKey[observers.nextKey] = observer
                return observers.nextKey
            }
            return { _ = Self.observers.withLock { $0.byKey.removeValue(forKey: key) } }
        }
    }

    /// Prints `message` to standard error, prefixed with the library's name, and hands it to the observers
    /// (outside the lock).
    @usableFromInline package func debugDiagnostic(_ message: String) {
        let line = "SwiftSignalKit (debug build): \(message)\n"
        // write(2): one call, so lines from several threads do not interleave; no shared `FILE`.
        line.withCString { _ = write(2, $0, strlen($0)) }
        let observers = DebugDiagnostics.observers.withLock { Array($0.byKey.values) }
        for observer in observers { observer(message) }
    }
#endif
