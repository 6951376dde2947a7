/// Producers waiting for a consumer's room (see ``SignalDemand``), kept in the consumer's locked state
/// so that "is there room?" and "wait" are one decision under its lock.
///
/// `package`: the consumers are in the concurrency module (a `for await` loop's buffer, `mapAsync`'s
/// input).
@usableFromInline package struct RoomWaiters: Sendable {
    @usableFromInline struct Waiter: Sendable {
        @usableFromInline let id: Int
        @usableFromInline let continuation: UnsafeContinuation<Void, Never>

        @inlinable init(id: Int, continuation: UnsafeContinuation<Void, Never>) {
            self.id = id
            self.continuation = continuation
        }
    }

    @usableFromInline var waiters: [Waiter] = []
    @usableFromInline var nextID = 0

    @inlinable package init() {}

    @inlinable package var isEmpty: Bool { self.waiters.isEmpty }

    /// Removes every waiting producer, to be resumed once the lock is released (see ``resume(_:)``).
    @inlinable package mutating func takeAll() -> [UnsafeContinuation<Void, Never>] {
        if self.waiters.isEmpty { return [] }
        defer { self.waiters = [] }
        return self.waiters.map(\.continuation)
    }

    /// Resumes producers taken with ``takeAll()``; call with no lock held.
    @inlinable package static func resume(_ producers: [UnsafeContinuation<Void, Never>]) {
        for producer in producers { producer.resume() }
    }
}

/// A consumer's locked state that keeps its waiting producers in `producers`: a protocol rather than a
/// key path, because the runtime builds a key path into a generic state anew at each use (a third of the
/// time per element in the flow-control benchmark when it was one).
@usableFromInline package protocol RoomWaitingState: Sendable {
    var producers: RoomWaiters { get set }

    /// Called under the lock when a producer's wait ends because `hasRoom` held: the value it sends next
    /// may arrive after others have filled the room (producers that wait side by side). A consumer that
    /// tells waiting producers' values from the others' counts these; the default does nothing.
    mutating func grantedRoom()
}

extension RoomWaitingState {
    @inlinable package mutating func grantedRoom() {}
}

extension LockedState where State: RoomWaitingState {
    /// Suspends the calling producer until `hasRoom` holds for the state, the state's owner resumes the
    /// producers it keeps (it does so whenever room may have appeared, and when its consumer has gone),
    /// or the calling task is cancelled (which also ends a wait under way). Returns at once, after one
    /// lock round trip, when `hasRoom` already holds.
    ///
    /// `hasRoom` and `hasGone` run under the lock: they must only read the state. `hasGone` says that the
    /// consumer has gone (see ``SignalDemand/waitForRoom()``), which `hasRoom` must count as room.
    ///
    /// - Returns: false when the consumer has gone (asked in the critical section that lets the
    ///   producer go on, or in one more after a wait).
    @inlinable package func waitForRoom(hasRoom: (State) -> Bool, hasGone: (State) -> Bool) async -> Bool {
        // nil: the producer goes on now, `.some(nil)` when the consumer has gone; else its waiter's id.
        let wait: Int?? = self.withLock { state in
            if hasRoom(state) {
                if hasGone(state) { return .some(nil) }
                state.grantedRoom()
                return nil
            }
            defer { state.producers.nextID &+= 1 }
            return state.producers.nextID
        }
        guard let wait else { return true }
        guard let id = wait else { return false }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let resumeNow = self.withLock { state -> Bool in
                    // Checked under the lock the cancellation handler takes: a task cancelled before this
                    // point is seen here, one cancelled after finds its entry there.
                    if hasRoom(state) {
                        state.grantedRoom()
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.producers.waiters.append(RoomWaiters.Waiter(id: id, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.withLock { state -> RoomWaiters.Waiter? in
                guard let index = state.producers.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.producers.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
        return !self.withLock { hasGone($0) }
    }
}
