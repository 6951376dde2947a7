extension QueueLocalObject {
    /// Runs `f` with the object on the queue and waits for its result, or returns nil if the object is not
    /// there: the form with an optional result, kept so that call sites written for it still compile.
    ///
    /// Older SwiftSignalKit returned an optional from `syncWith`, and code binds it:
    ///
    /// ```swift
    /// if let (disposable, control) = impl.syncWith({ impl in
    ///     return impl.context(for: key)
    /// }) {
    ///     control.attach(disposable)
    /// }
    /// ```
    ///
    /// The type checker picks this overload when the context needs an optional (`if let`, `guard let`) or
    /// when `f` itself returns one; everywhere else it picks ``syncWith(_:)->R``, whose result is `f`'s own.
    /// Both give the same type where both apply. It is not marked deprecated because the mark would also
    /// flag current code whose closure returns an optional (`object.syncWith { $0.name }`), and
    /// `@_disfavoredOverload` would make the type checker reject the `if let` sites instead.
    ///
    /// - Parameter f: Receives the object; runs on the queue while the caller waits. Its result is
    ///   `sending`, as for ``syncWith(_:)->R``.
    /// - Returns: What `f` returns, or nil if the object is not there (on the queue, before the object's
    ///   `generate` closure has run).
    public func syncWith<R>(_ f: (T) -> sending R?) -> sending R? {
        guard let result = self.withObjectOnQueue(f) else { return nil }
        return result
    }
}
